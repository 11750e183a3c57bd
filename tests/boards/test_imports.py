"""No firmware module needs anything MicroPython lacks: the exact files each board
gets import under the unix port, and every name any firmware file imports (also
inside functions) exists there or is a board module the board's port has."""
import ast
import subprocess

import pytest

from boards import boardspec, build
from tests.boards.boardtest import micropython_binary

BOARDS = boardspec.names()
# Hardware modules of the boards' ports that the unix port lacks (docs.micropython.org)
PORT_MODULES = {"rpi_pico": {"rp2", "machine"}, "esp32_s3": {"esp", "esp32", "machine"},
                "esp32_s3_tft": {"esp", "esp32", "machine"},
                "pyboard": {"pyb", "machine"}, "unix": set()}


def _run_micropython(path_dir, code, heap="2M"):
    return subprocess.run([micropython_binary(), "-X", "heapsize=" + heap, "-c",
                           "import sys\nsys.path.insert(0, %r)\n%s" % (str(path_dir), code)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", BOARDS)
def test_every_compiled_module_imports_under_the_unix_port(builds, name):
    out = builds[name]
    modules = [".".join(p.relative_to(out.root).with_suffix("").parts).replace(".__init__", "")
               for p in out.modules]
    # the Thumb arithmetic is native code for the board's ARM core: the unix port
    # cannot load it, and quillfw.crypto.secp256k1 then uses its big ints
    modules = [m for m in modules if m != "quillfw.crypto.secp256k1_thumb"]
    assert "quillfw.signing.session" in modules and "quillfw.crypto" in modules
    code = ("for m in %r:\n    __import__(m)\n"
            "    assert sys.modules[m].__file__.endswith('.mpy'), m\nprint('imported', len(%r))"
            % (modules, modules))
    proc = _run_micropython(out.root, code)
    assert proc.returncode == 0 and f"imported {len(modules)}" in proc.stdout, \
        proc.stdout + proc.stderr


def _imported_names(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names - {"quillfw"}


# quillfw.board.hal is the one firmware module that touches board hardware: its port
# modules (and the esp32 port's neopixel) are imported only on the boards.
HARDWARE = set().union(*PORT_MODULES.values()) | {"neopixel"}
# The optional native crypto module (firmware/natmod): quillfw.crypto.secp256k1 imports it
# when present and falls back to the pure arithmetic.
OPTIONAL = {"quill_secp256k1"}


def test_every_imported_name_exists_on_micropython():
    names = set()
    for source in build.firmware_sources():
        found = _imported_names(source)
        names |= found - HARDWARE if source.name == "hal.py" else found
    names -= OPTIONAL
    assert {"gc", "sys", "hashlib"} <= names  # the scan sees the real imports
    code = "\n".join("import %s" % n for n in sorted(names)) + "\nprint('ok')"
    proc = _run_micropython(boardspec.FIRMWARE_DIR, code)
    assert proc.returncode == 0 and "ok" in proc.stdout, (sorted(names), proc.stdout + proc.stderr)


@pytest.mark.parametrize("name", BOARDS)
def test_entry_points_import_only_micropython_or_their_port_modules(name):
    board = boardspec.load(name)
    names = set()
    for entry in ("boot.py", "main.py"):
        if (board.dir / entry).is_file():
            names |= _imported_names(board.dir / entry)
    common = sorted(names - PORT_MODULES[name])
    code = "\n".join("import %s" % n for n in common) + "\nprint('ok')"
    proc = _run_micropython(boardspec.FIRMWARE_DIR, code)
    assert proc.returncode == 0 and "ok" in proc.stdout, (common, proc.stdout + proc.stderr)
