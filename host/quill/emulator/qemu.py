"""The firmware on a 32-bit Cortex-M: MicroPython's `qemu` port under qemu-system-arm.

Two targets stand in for the boards (boards/*/board.json):

    qemu-m0plus   ARMv6-M code (-mcpu=cortex-m0plus, Thumb-1 only) on QEMU's mps2-an385,
                  the RP2040's instruction set, with the Pico's heap; the firmware's
                  .mpy files are in a ROMFS image loaded into the board's flash window
    qemu-m4       a Cortex-M4 (mps2-an386) with the pyboard's heap and the firmware
                  frozen into the image, as the pyboard runs it

Each is built once from MicroPython's source ($MICROPYTHON_SRC, a folder, or the
archive in ../shared/toolchains/micropython) with Debian's arm-none-eabi-gcc and
cached in ~/.cache/quill/qemu/, keyed by the source, the configuration and, for a
frozen target, the firmware's sources. The port runs no main.py: the firmware is
started through the raw REPL on the board's UART (QEMU's stdio), as mpremote does.

Reusable pieces (benchmarks, other tests):

    build(target, heap=None) -> Path            the firmware.elf (built when needed)
    run_snippet(target, code, heap=None, icount=True, timeout=300) -> Snippet
        run MicroPython code on the target, with the firmware importable; returns
        its output and, with icount, the instructions it took (QEMU's -icount
        shift=0: one instruction per virtual nanosecond, so time.ticks_us() counts
        thousands of instructions)
    python -m quill.emulator.qemu run --target qemu-m0plus -c 'print(1)'
    python -m quill.emulator.qemu serve --target qemu-m0plus [main_emulator options]
        the firmware serving this process's stdin/stdout (what quill-emu runs)
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

FIRMWARE_DIR = Path(__file__).resolve().parents[3] / "firmware"
SHARED_ARCHIVE = FIRMWARE_DIR.parent.parent / "shared" / "toolchains" / "micropython" / "micropython-src.tar.gz"
APT_PACKAGES = ("gcc-arm-none-eabi", "libnewlib-arm-none-eabi", "qemu-system-arm")
# ROMFS partition 0 of the MPS2 boards (ports/qemu/boards/MPS2_AN385/mpconfigboard.mk)
ROMFS_ADDRESS = "0x21000000"
# Bytes of the ROMFS image the unix launcher also builds (quill.emulator.launcher)
ICOUNT_TAG = "QUILL-ICOUNT"


@dataclass(frozen=True)
class Target:
    name: str
    machine: str            # qemu-system-arm -machine
    cflags: str             # appended to the board's: the last -mcpu wins
    gchelper: str           # thumb1 (ARMv6-M) or thumb2
    heap: int               # MICROPY_HEAP_SIZE by default: the board's heap
    frozen: bool            # firmware frozen into the image (else ROMFS)


# The board each target stands for (boards/<board>/board.json) and the native crypto
# module's architecture there (qemu-m4's firmware has no floating point: armv7m).
TARGET_BOARDS = {"qemu-m0plus": ("rpi_pico", "armv6m"), "qemu-m4": ("pyboard", "armv7m")}

TARGETS = {
    "qemu-m0plus": Target("qemu-m0plus", "mps2-an385", "-mcpu=cortex-m0plus", "thumb1", 233024,
                          False),        # stands for the Raspberry Pi Pico (RP2040)
    "qemu-m4": Target("qemu-m4", "mps2-an386", "-mcpu=cortex-m4 -mfloat-abi=soft", "thumb2", 99328,
                      True),             # stands for the pyboard (STM32F405)
}


class Unavailable(RuntimeError):
    """The source or the toolchain is missing: the target cannot be built here."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quill" / "qemu"


def missing_tools() -> list[str]:
    return [tool for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make") if not shutil.which(tool)]


def source_location() -> Path:
    env = os.environ.get("MICROPYTHON_SRC")
    path = Path(env) if env else SHARED_ARCHIVE
    if not path.exists():
        raise Unavailable(f"MicroPython source not found at {path} (set MICROPYTHON_SRC)")
    return path


def _digest_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _locked(path: Path) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "w")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def source_dir() -> Path:
    """MicroPython's source tree: $MICROPYTHON_SRC as is, or the archive unpacked once."""
    location = source_location()
    if location.is_dir():
        return location
    key = _digest_file(location)[:16]
    tree = cache_root() / f"src-{key}"
    with _locked(cache_root() / f"src-{key}.lock"):
        if not (tree / "ports" / "qemu").is_dir():
            work = cache_root() / f"src-{key}.partial"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            with tarfile.open(location) as archive:
                archive.extractall(work, filter="data")
            top = [p for p in work.iterdir() if p.is_dir()]
            root = top[0] if len(top) == 1 and not (work / "py").is_dir() else work
            # the port's manifests look for micropython-lib (a submodule, absent)
            (root / "lib" / "micropython-lib").mkdir(parents=True, exist_ok=True)
            (root / "lib" / "micropython-lib" / "README.md").touch()
            os.replace(root, tree) if root != work else os.replace(work, tree)
            shutil.rmtree(work, ignore_errors=True)
    return tree


def _frozen_manifest(path: Path) -> None:
    from quill.emulator.launcher import EMULATOR_MODULES
    path.write_text(f"package('quillfw', base_path={str(FIRMWARE_DIR)!r})\n" + "".join(
        f"module({module.name!r}, base_path={str(FIRMWARE_DIR)!r})\n" for module in EMULATOR_MODULES))


def _firmware_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(FIRMWARE_DIR.rglob("*.py")):
        h.update(p.relative_to(FIRMWARE_DIR).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def build(target: Target | str, heap: int | None = None) -> Path:
    """The target's firmware.elf, built from source when no cached build matches."""
    target = TARGETS[target] if isinstance(target, str) else target
    missing = missing_tools()
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed (Debian: apt-get install "
                          f"{' '.join(APT_PACKAGES)})")
    heap = heap or target.heap
    location = source_location()
    key = hashlib.sha256(repr((str(location), location.stat().st_mtime_ns if location.is_file() else 0,
                               target, heap)).encode())
    if location.is_file():
        key.update(_digest_file(location).encode())
    if target.frozen:
        key.update(_firmware_digest().encode())
    out = cache_root() / f"{target.name}-{heap}-{key.hexdigest()[:16]}"
    elf = out / "firmware.elf"
    if elf.exists():
        return elf
    src = source_dir()
    with _locked(out.with_suffix(".lock")):
        if elf.exists():
            return elf
        build_dir = out / "build"
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir.mkdir(parents=True)
        variables = [
            "BOARD=MPS2_AN385", f"BUILD={build_dir}", f"MICROPY_HEAP_SIZE={heap}",
            f"CFLAGS_EXTRA={target.cflags} -DMICROPY_PY_OS_URANDOM=1",
            f"SRC_BOARD_O=shared/runtime/gchelper_native.o shared/runtime/gchelper_{target.gchelper}.o",
            f"QEMU_MACHINE={target.machine}",
        ]
        if target.frozen:
            manifest = out / "manifest.py"
            _frozen_manifest(manifest)
            variables.append(f"FROZEN_MANIFEST={manifest}")
            # the firmware's inline-assembler module (launcher.mpy_cross_arch) is ARMv6-M code
            variables.append("MPY_CROSS_FLAGS=-march=armv6m")
            subprocess.run(["make", "-C", str(src / "mpy-cross"), f"-j{os.cpu_count() or 2}"],
                           check=True, capture_output=True)
        else:
            variables.append("FROZEN_MANIFEST=")
        proc = subprocess.run(["make", "-C", str(src / "ports" / "qemu"), f"-j{os.cpu_count() or 2}",
                               *variables], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building {target.name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        shutil.copyfile(build_dir / "firmware.elf", elf.with_suffix(".partial"))
        os.replace(elf.with_suffix(".partial"), elf)
        shutil.rmtree(build_dir, ignore_errors=True)
    return elf


def qemu_command(target: Target, elf: Path, romfs: Path | None = None, icount: bool = False,
                 trace: Path | None = None, frames: Path | None = None) -> list[str]:
    """trace: a file for QEMU's execution trace (each translated block's disassembly once,
    then every executed block: tests/bench/m0plus_cycles.py reads it); frames: a unix
    socket, listening, for the board's second UART (the panel's frames,
    firmware/emulator_frames.py)."""
    cmd = ["qemu-system-arm", "-machine", target.machine, "-nographic", "-monitor", "none",
           "-serial", "stdio", "-semihosting", "-kernel", str(elf)]
    if frames is not None:
        cmd += ["-serial", f"unix:{frames}"]
    if romfs is not None:
        cmd += ["-device", f"loader,file={romfs},addr={ROMFS_ADDRESS},force-raw=on"]
    if icount:
        cmd += ["-icount", "shift=0"]
    if trace is not None:
        cmd += ["-d", "in_asm,exec,nochain", "-D", str(trace)]
    return cmd


def _die_with_parent() -> None:
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Board:
    """One running qemu with the firmware reachable; talks to MicroPython's raw REPL."""

    def __init__(self, target: Target | str, heap: int | None = None, icount: bool = False,
                 romfs: Path | None = None, trace: Path | None = None, frames: Path | None = None):
        """romfs: an image for the board's ROMFS (default: the firmware's, unless frozen);
        trace: a file for QEMU's execution trace, frames: a socket for its second UART
        (qemu_command)."""
        self.target = TARGETS[target] if isinstance(target, str) else target
        elf = build(self.target, heap)
        if romfs is None and not self.target.frozen:
            from quill.emulator.launcher import romfs_image
            romfs = romfs_image()
        self.proc = subprocess.Popen(qemu_command(self.target, elf, romfs, icount, trace, frames),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in: IO[bytes] = self.proc.stdin
        self._out: IO[bytes] = self.proc.stdout
        self._buf = b""

    def _read_until(self, marker: bytes, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        fd = self._out.fileno()
        while marker not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise TimeoutError(f"no {marker!r} from {self.target.name}: {self._buf[-500:]!r}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise EOFError(f"{self.target.name} exited: {self._buf[-500:]!r}")
                self._buf += chunk
        head, _, self._buf = self._buf.partition(marker)
        return head

    def _write(self, data: bytes) -> None:
        self._in.write(data)
        self._in.flush()

    def enter_raw_repl(self, timeout: float = 60) -> None:
        self._read_until(b">>> ", timeout)        # the friendly REPL is up
        self._write(b"\x01")
        self._read_until(b"raw REPL; CTRL-B to exit\r\n>", timeout)

    def start(self, code: str, timeout: float = 60) -> None:
        """Run code in the raw REPL without waiting for it to finish."""
        self._write(code.encode() + b"\x04")
        self._read_until(b"OK", timeout)

    def exec(self, code: str, timeout: float = 300) -> tuple[str, str]:
        """(stdout, error text) of code run to its end."""
        self.start(code, timeout)
        out = self._read_until(b"\x04", timeout)
        err = self._read_until(b"\x04", timeout)
        self._read_until(b">", timeout)
        return out.decode(errors="replace"), err.decode(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def romfs_of(files: dict[str, bytes]) -> Path:
    """A ROMFS image holding these files ({"dir/name": bytes}), cached by content."""
    from mpremote.romfs import VfsRomWriter
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    image = cache_root() / f"romfs-{digest.hexdigest()[:24]}.img"
    if image.exists():
        return image
    tree: dict = {}
    for name, data in files.items():
        *dirs, leaf = name.split("/")
        node = tree
        for d in dirs:
            node = node.setdefault(d, {})
        node[leaf] = data

    def add(writer: VfsRomWriter, node: dict) -> None:
        for key in sorted(node):
            if isinstance(node[key], dict):
                writer.opendir(key)
                add(writer, node[key])
                writer.closedir()
            else:
                writer.mkfile(key, node[key])

    writer = VfsRomWriter()
    add(writer, tree)
    image.parent.mkdir(parents=True, exist_ok=True)
    staged = image.with_suffix(f".{os.getpid()}")
    staged.write_bytes(writer.finalise())
    os.replace(staged, image)
    return image


@dataclass
class Snippet:
    output: str
    error: str
    instructions: int | None    # with icount: instructions the snippet's code took


_TIMED = ("import time as _t\n_t0 = _t.ticks_us()\n{code}\n"
          "print('" + ICOUNT_TAG + "', _t.ticks_diff(_t.ticks_us(), _t0))\n")


def run_snippet(target: Target | str, code: str, heap: int | None = None, icount: bool = True,
                timeout: float = 300) -> Snippet:
    """Run MicroPython code on the target (quillfw importable) and return its output;
    with icount also the instructions it took (1 us of ticks_us = 1,000 instructions)."""
    board = Board(target, heap, icount)
    try:
        board.enter_raw_repl()
        setup = "import sys\nsys.path.insert(0, '/rom')\n"
        body = _TIMED.format(code=code) if icount else code
        out, err = board.exec(setup + body, timeout)
    finally:
        board.close()
    instructions = None
    lines = []
    for line in out.splitlines():
        if line.startswith(ICOUNT_TAG + " "):
            instructions = int(line.split()[1]) * 1000
        else:
            lines.append(line)
    return Snippet("\n".join(lines), err, instructions)


def native_module(target: str, crypto: str = "auto") -> Path | None:
    """The native crypto module (quill.emulator.natmod) the target's firmware gets for
    quill-emu's --crypto: "python" none; "native" the module (NatmodUnavailable when
    it cannot be built), with the board's table sizes; "auto" what the board's
    deploy installs (board.json "natmod": set where the module was measured faster
    and the heap has room for it, tests/bench/bench_crypto_mcu.py), when it can be
    built. The firmware signs with the module when it is present."""
    import json

    from quill.emulator import natmod

    if crypto == "python":
        return None
    board, arch = TARGET_BOARDS[target]
    spec = json.loads((FIRMWARE_DIR.parent / "boards" / board / "board.json").read_text())["natmod"]
    if crypto == "auto" and spec is None:
        return None
    sizes = (spec["ecmult_gen_kb"], spec["ecmult_window_size"]) if spec else (natmod.GEN_KB, natmod.WINDOW)
    try:
        return natmod.build(arch, *sizes)
    except natmod.NatmodUnavailable:
        if crypto == "native":
            raise
        return None


def serve(target: Target | str, heap: int | None, options: list[str], boot_id: str | None = None,
          native: Path | None = None, screen_dir: str | None = None) -> int:
    """The firmware (main_emulator) serving this process's stdin/stdout through the
    board's UART; returns when either side closes. native: the crypto module, put
    in the ROMFS beside the firmware (alone on a frozen target); screen_dir: where
    the panel's screens are written (the firmware sends them on the board's second
    UART, quill.emulator.frames writes them)."""
    target = TARGETS[target] if isinstance(target, str) else target
    romfs = None
    if native is not None:
        from quill.emulator.launcher import romfs_image
        romfs = romfs_of({native.name: native.read_bytes()}) if target.frozen else romfs_image(extra=[native])
    frames = writer = None
    if screen_dir is not None:
        frames, writer = frame_listener(screen_dir)
        options = [*options, "--frames"]
    board = Board(target, heap, romfs=romfs, frames=frames)
    boot_id = boot_id or os.urandom(8).hex()     # the port's urandom repeats at every boot
    argv = ["main_emulator", "--target", board.target.name, "--boot-id", boot_id, *options]
    try:
        board.enter_raw_repl()
        favour_io_thread(board.proc.pid)
        board.start("import sys\nsys.path.insert(0, '/rom')\nsys.argv[:] = %r\nimport main_emulator\n"
                    % argv)
        if board._buf:
            os.write(1, board._buf)
        return _relay(board._in.fileno(), board._out.fileno())
    finally:
        board.close()
        if frames is not None and writer is not None:
            writer.join(timeout=5)      # the last screen's files, once the board is gone
            shutil.rmtree(frames.parent, ignore_errors=True)


def frame_listener(screen_dir: str) -> tuple[Path, threading.Thread]:
    """A unix socket for the board's second UART, in a folder of its own, and a thread
    that writes the screens it carries into screen_dir (quill.emulator.frames)."""
    import socket
    import tempfile

    from quill.emulator.frames import serve_frames

    path = Path(tempfile.mkdtemp(prefix="quill-frames-")) / "uart1"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    writer = threading.Thread(target=serve_frames, args=(listener, screen_dir), name="quill-frames",
                              daemon=True)
    writer.start()
    return path, writer


# The nice value given to QEMU's I/O thread while it serves (favour_io_thread).
IO_THREAD_NICE = -10


def favour_io_thread(pid: int) -> bool:
    """Let QEMU's main-loop thread (the process's first thread: chardevs, timers) run
    before ordinary work on a loaded machine. The CMSDK UART holds one received byte,
    so every byte to the firmware waits for that thread to wake once, while the
    firmware spins on the UART's status on the vCPU thread: on a busy machine those
    wake-ups, not the emulated CPU, set the link's speed (measured under load ~10 on
    2 cores: ~10 KB/s, twice that favoured). That thread does work for every byte
    (under the Cortex-M0+ soak it used 80-95 % of a core), so on a loaded machine
    favouring it moves CPU from other work to the link. The vCPU thread, which spins
    on the UART, keeps its priority, and nothing the firmware runs or has changes.
    Call it after the board is up (the vCPU thread is made at start-up and must not
    inherit this). False when not allowed (a nice value below 0 needs root or
    CAP_SYS_NICE)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, IO_THREAD_NICE)   # pid: the main thread only
        return True
    except OSError:
        return False


def _relay(to_board: int, from_board: int) -> int:
    def pump(src: int, dst: int) -> None:
        try:
            while True:
                data = os.read(src, 65536)
                if not data:
                    return
                os.write(dst, data)
        except OSError:
            return

    inbound = threading.Thread(target=pump, args=(0, to_board), daemon=True)
    inbound.start()
    pump(from_board, 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quill.emulator.qemu",
                                     description="The firmware on MicroPython's qemu port (Cortex-M).")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build (or find cached) and print the firmware.elf path")
    r = sub.add_parser("run", help="run MicroPython code on the target; print output and instructions")
    r.add_argument("-c", dest="code", required=True)
    r.add_argument("--no-icount", action="store_true")
    s = sub.add_parser("serve", help="the firmware serving stdin/stdout (quill-emu --target)")
    s.add_argument("--boot-id")
    s.add_argument("--native", type=Path, help="the native crypto module to deploy beside the firmware")
    s.add_argument("--screen-dir", help="write the panel's screens there (quill.emulator.frames)")
    for p in (b, r, s):
        p.add_argument("--target", choices=sorted(TARGETS), required=True)
        p.add_argument("--heapsize", type=int, help="MicroPython heap (default: the target's board's)")
    args, rest = parser.parse_known_args(argv)
    try:
        if args.command == "build":
            print(build(args.target, args.heapsize))
            return 0
        if args.command == "run":
            result = run_snippet(args.target, args.code, args.heapsize, icount=not args.no_icount)
            print(result.output)
            if result.error:
                print(result.error, file=sys.stderr)
            if result.instructions is not None:
                print(f"{ICOUNT_TAG} {result.instructions}", file=sys.stderr)
            return 1 if result.error else 0
        return serve(args.target, args.heapsize, [a for a in rest if a != "--"], args.boot_id, args.native,
                     args.screen_dir)
    except Unavailable as e:
        print(f"quill-emu: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
