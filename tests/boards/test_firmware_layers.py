"""The firmware's rooms (docs/layout.md): each subpackage of quillfw imports only
from the rooms below it, and the shared rules at the package's root import none."""
import ast

from boards import boardspec, build

# bottom to top; the root modules (consensus, script, limits, compat) are layer 0
LAYERS = ("", "crypto", "sighash", "wire", "keys", "signing", "multisig", "psbt", "board", "ui")
# The display layer (issue 26) draws what the rooms below compute, so it sits on top; those
# rooms ask their user through these entry points only, imported while they ask and dropped
# after (a device without a display never loads them).
UI_ENTRY_POINTS = ("quillfw.ui.screen", "quillfw.ui.screens", "quillfw.ui.flow", "quillfw.ui.seed",
                   "quillfw.ui.pin")
PACKAGE_DIR = boardspec.FIRMWARE_DIR / "quillfw"


def _room(dotted):
    parts = dotted.split(".")
    if parts[0] != "quillfw":
        return None
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE_DIR / parts[1]).is_dir()):
        return parts[1]
    return ""


def _imports(path):
    """Every quillfw module the file names in an import, also inside functions and
    in __import__("...") calls."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(node.module + "." + a.name for a in node.names
                         if (PACKAGE_DIR.parent / (node.module + "." + a.name).replace(".", "/")).is_dir()
                         or (PACKAGE_DIR.parent / ((node.module + "." + a.name).replace(".", "/") + ".py")).exists())
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("quillfw."):
            found.add(node.value)
    return {name for name in found if name.startswith("quillfw")}


def test_each_room_imports_only_from_the_rooms_below():
    sources = build.firmware_sources()
    rooms_seen = set()
    wrong = []
    for source in sources:
        rel = source.relative_to(PACKAGE_DIR)
        room = rel.parts[0] if len(rel.parts) > 1 else ""
        rooms_seen.add(room)
        for name in _imports(source):
            other = _room(name)
            if name in UI_ENTRY_POINTS:
                continue
            if other is not None and LAYERS.index(other) > LAYERS.index(room):
                wrong.append(f"{rel} ({room or 'root'}) imports {name} ({other})")
    assert rooms_seen == set(LAYERS)
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_a_wrong_import(tmp_path):
    # the scan finds imports inside functions and the names given to __import__
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from quillfw.board import hal\n    __import__('quillfw.signing.session')\n")
    assert _imports(path) == {"quillfw.board", "quillfw.board.hal", "quillfw.signing.session"}
    assert [_room(n) for n in sorted(_imports(path))] == ["board", "board", "signing"]
