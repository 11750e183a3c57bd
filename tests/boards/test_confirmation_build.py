"""The emulator's approval channel (firmware/emulator_approval.py) and its auto
approver, its debug link (emulator_debuglink.py: debug_layout, debug_press) and
its panel (emulator_display.py) never reach a real board: not in the quillfw
package that every build compiles, deploys and freezes, not imported by it, not
chosen by any board's main.py; and every board with a button confirms with it."""
import ast

import pytest

from boards import boardspec, build

REAL_BOARDS = [n for n in boardspec.names() if n != "unix"]
EMULATOR_ONLY = "emulator_approval"
EMULATOR_MODULES = ("emulator_approval", "emulator_debuglink", "emulator_display", "emulator_png",
                    "emulator_frames")
DEBUG_LINK_METHODS = ("debug_layout", "debug_press")


def _imports(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", EMULATOR_MODULES)
def test_the_emulator_modules_are_outside_the_firmware_package(module):
    assert (boardspec.FIRMWARE_DIR / f"{module}.py").is_file()
    assert module not in {p.stem for p in build.firmware_sources()}


@pytest.mark.parametrize("name", REAL_BOARDS)
def test_no_build_or_deploy_list_contains_them(builds, name):
    out = builds[name]
    files = out.modules + out.entry_points + out.files_on_filesystem()
    for module in EMULATOR_MODULES:
        assert files and not [p for p in files if module in p.name]
        assert not list(out.root.rglob(f"{module}*"))
    manifest = (boardspec.load(name).dir / "manifest.py").read_text()
    assert not [m for m in EMULATOR_MODULES if m in manifest]


def test_no_board_entry_or_firmware_module_names_the_debug_link():
    sources = build.firmware_sources() + [boardspec.load(n).dir / "main.py" for n in REAL_BOARDS]
    for source in sources:
        assert not [m for m in DEBUG_LINK_METHODS if m in source.read_text()], source


def test_the_firmware_package_never_names_it():
    # the approver is passed in by the entry point (quill-emu's main_emulator.py names
    # it in its spec); no module of the product firmware imports it or even names it
    sources = build.firmware_sources()
    assert len(sources) > 20
    for source in sources:
        assert EMULATOR_ONLY not in source.read_text(), source.name
        tree = ast.parse(source.read_text())
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name for n in imports for a in n.names} | {getattr(n, "module", None) for n in imports}
        assert not [n for n in names if n and "emulator" in n], source.name


@pytest.mark.parametrize("name", REAL_BOARDS)
def test_each_board_confirms_with_its_button_never_the_emulator(name):
    board = boardspec.load(name)
    source = (board.dir / "main.py").read_text()
    assert EMULATOR_ONLY not in _imports(board.dir / "main.py")
    assert '"emulator"' not in source and "'emulator'" not in source
    assert 'approver=' in source and '("button", "quillfw.board.hal", ' in source
    assert "policy_path=POLICY_FILE" in source


@pytest.mark.parametrize("name", boardspec.names())
def test_no_freeze_manifest_names_it(name):
    text = (boardspec.BOARDS_DIR / name / "manifest.py").read_text()
    assert EMULATOR_ONLY not in text and "main_emulator" not in text
