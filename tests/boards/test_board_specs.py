"""The board descriptions: complete, consistent with the host's USB table, with
the entry points and with the freeze manifests."""
import ast
import dataclasses
import json

import pytest

from boards import boardspec
from quill.device.manager import SUPPORTED_USB_IDS

BOARDS = boardspec.names()


def test_the_five_boards_are_described():
    assert BOARDS == ["esp32_s3", "esp32_s3_tft", "pyboard", "rpi_pico", "unix"]


@pytest.mark.parametrize("name", BOARDS)
def test_board_json_loads_and_names_its_folder(name):
    board = boardspec.load(name)
    assert board.name == name and board.heap_free_bytes > 0 and board.flash_budget_bytes > 0


@pytest.mark.parametrize("name", [n for n in BOARDS if n != "unix"])
def test_usb_id_is_one_the_host_finds_with_device_auto(name):
    assert boardspec.load(name).usb_id in SUPPORTED_USB_IDS


def test_the_emulator_board_has_no_usb_id():
    board = boardspec.load("unix")
    assert board.usb_id is None and board.transport["kind"] == "stdio"


def test_each_board_names_the_clock_its_micropython_runs_at():
    clocks = {name: boardspec.load(name).clock_hz for name in BOARDS}
    # RP2040 125 MHz (issue 26), STM32F405 168 MHz, ESP32-S3 at ESP-IDF's default 160 MHz
    assert clocks == {"rpi_pico": 125_000_000, "pyboard": 168_000_000, "esp32_s3": 160_000_000,
                      "esp32_s3_tft": 160_000_000, "unix": None}
    for name in ("rpi_pico", "pyboard"):    # the title's clock is the one MicroPython runs at
        assert f"at {clocks[name] // 1_000_000} MHz" in boardspec.load(name).mcu


@pytest.mark.parametrize("field, value, message", [
    ("heap_free_bytes", "233024", "positive integer"),
    ("mpy_cross_march", "armv8", "mpy_cross_march"),
    ("usb_pid", "0x05", "usb_vid/usb_pid"),
    ("deploy", "copy", "filesystem or frozen"),
    ("transport", {"kind": "wifi", "pins": {}}, "transport"),
    ("natmod", {"arch": "armv6m", "ecmult_gen_kb": 4, "ecmult_window_size": 6}, "natmod"),
    ("natmod", {"arch": "xtensawin", "ecmult_gen_kb": 2, "ecmult_window_size": 2}, "natmod"),
    ("clock_hz", None, "clock_hz"),
    ("clock_hz", "125 MHz", "clock_hz"),
    ("clock_hz", 0, "clock_hz"),
])
def test_malformed_board_json_is_rejected_naming_the_field(field, value, message):
    data = json.loads((boardspec.BOARDS_DIR / "rpi_pico" / "board.json").read_text())
    data[field] = value
    with pytest.raises(boardspec.BoardError, match=message):
        boardspec._check(data, "rpi_pico")


def test_missing_and_unknown_fields_are_rejected():
    data = json.loads((boardspec.BOARDS_DIR / "rpi_pico" / "board.json").read_text())
    data["colour"] = data.pop("led_pin")
    with pytest.raises(boardspec.BoardError, match="led_pin missing"):
        boardspec._check(data, "rpi_pico")


def _constants(path):
    """Module-level NAME = literal assignments of an entry point, without running it."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                found[target.id] = node.value.value
    return found


@pytest.mark.parametrize("name", BOARDS)
def test_main_py_agrees_with_board_json(name):
    board = boardspec.load(name)
    constants = _constants(board.dir / "main.py")
    source = (board.dir / "main.py").read_text()
    assert constants.get("BOARD", name) == name and f'"{name}"' in source
    if "LED_PIN" in constants:
        assert constants["LED_PIN"] == board.led_pin
    if "BUTTON_PIN" in constants:
        assert constants["BUTTON_PIN"] == board.button_pin
    assert "serve(StdioTransport()" in source  # every board's transport is usb_cdc/stdio today
    # the display and buttons (issue 26): main.py's literals are board.json's
    literals = _literals(board.dir / "main.py")
    assert literals.get("DISPLAY") == board.display
    if board.display is not None:
        buttons = [{"name": n, "pin": p, "role": r, "active": "low" if low else "high"}
                   for n, (p, r, low) in zip(literals["BUTTON_NAMES"], literals["BUTTONS"], strict=True)]
        assert buttons == board.buttons


def _literals(path):
    """Module-level NAME = <literal> assignments (dicts, tuples) of an entry point."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            for target in node.targets:
                found[target.id] = value
    return found



@pytest.mark.parametrize("name", BOARDS)
def test_manifest_freezes_the_firmware_package(name):
    """Run manifest.py with MicroPython's manifest functions recorded, not executed."""
    calls = []
    env = {f: (lambda *a, _f=f, **k: calls.append((_f, a, k)))
           for f in ("include", "package", "module", "require", "freeze", "options")}
    path = boardspec.BOARDS_DIR / name / "manifest.py"
    exec(compile(path.read_text(), str(path), "exec"), env)
    packages = [(a, k) for f, a, k in calls if f == "package"]
    assert len(packages) == 1
    args, kwargs = packages[0]
    assert args == ("quillfw",)
    assert (path.parent / kwargs["base_path"] / "quillfw" / "__init__.py").resolve() == \
        (boardspec.FIRMWARE_DIR / "quillfw" / "__init__.py").resolve()
    assert any(f == "include" for f, _, _ in calls)  # the port's own frozen modules stay


def test_a_board_with_an_unknown_name_is_an_error():
    with pytest.raises(boardspec.BoardError, match="unknown board"):
        boardspec.load("arduino_uno")


def test_board_records_are_immutable():
    board = boardspec.load("pyboard")
    with pytest.raises(dataclasses.FrozenInstanceError):
        board.heap_free_bytes = 1


def _size_table():
    """boards/README.md's board size table: {title: {column: cell}}."""
    text = (boardspec.BOARDS_DIR / "README.md").read_text()
    lines = text[text.index("| board | CPU and clock |"):].splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


@pytest.mark.parametrize("name", [n for n in BOARDS if n != "unix"])
def test_the_readme_size_table_agrees_with_board_json(name):
    board = boardspec.load(name)
    title = {"rpi_pico": "Raspberry Pi Pico", "esp32_s3": "ESP32-S3", "esp32_s3_tft": "ESP32-S3 Reverse TFT Feather",
             "pyboard": "pyboard v1.1"}[name]
    row = _size_table()[title]
    assert row["CPU and clock"].endswith(f" at {board.clock_hz // 1_000_000} MHz")
    assert row["free heap"] == f"{board.heap_free_bytes:,} B"
    assert row["flash budget"] == f"{board.flash_budget_bytes:,} B"
    assert row["firmware"].startswith("frozen" if board.deploy == "frozen" else "`.mpy` files")
    assert (row["native module (flash / RAM)"] == "none") == (board.natmod is None)


def test_the_emulator_models_every_board_from_its_board_json():
    from quill.emulator import models

    assert set(models.BOARDS) == {n for n in BOARDS if n != "unix"}
    for name in models.BOARDS:
        board, model = boardspec.load(name), models.load(name)
        assert (model.heap, model.natmod, model.clock_hz) == (board.heap_free_bytes, board.natmod, board.clock_hz)
        assert model.firmware == {"filesystem": "files", "frozen": "frozen"}[board.deploy]
