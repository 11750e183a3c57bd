"""The board descriptions (boards/<board>/board.json), loaded and checked.

Every field is required; a malformed description is an error naming the board
and the field, so a typo never reaches a build or a deploy.
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

BOARDS_DIR = Path(__file__).resolve().parent
REPO = BOARDS_DIR.parent
FIRMWARE_DIR = REPO / "firmware"

MARCHES = ("x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp",
           "xtensa", "xtensawin", "rv32imc")
# the native crypto module's architectures (quill.emulator.natmod.ARCHES) and build fields
NATMOD_ARCHES = ("x64", "armv6m", "armv7m", "armv7emsp")
NATMOD_FIELDS = ("arch", "ecmult_gen_kb", "ecmult_window_size")
DEPLOY_KINDS = ("filesystem", "frozen")   # .mpy files copied to the board / frozen into its image
TRANSPORT_KINDS = ("usb_cdc", "uart", "stdio")
# the display (issue 26): its panel's bus and pins, and the buttons' roles
PANELS = {"st7789": "spi", "ssd1306": "i2c"}
BUS_PINS = {"spi": ("sck", "mosi", "cs", "dc"), "i2c": ("scl", "sda")}
BUS_FIELDS = {"spi": ("spi_id", "offset", "madctl"), "i2c": ("i2c_id", "address")}
BUTTON_ROLES = ("next", "prev", "approve", "reject", "select")
_USB_ID = re.compile(r"^0x[0-9A-F]{4}$")


class BoardError(ValueError):
    pass


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    mcu: str
    clock_hz: object        # the CPU clock MicroPython runs it at (Hz); None for the emulator
    micropython_firmware: str
    mpy_cross_march: str
    heap_free_bytes: int
    deploy: str
    flash_budget_bytes: int
    fs_block_bytes: int
    natmod: object          # None, or the native crypto module's build: {arch, ecmult_gen_kb, ecmult_window_size}
    transport: dict
    led_pin: object
    button_pin: object
    usb_vid: object
    usb_pid: object
    display: object         # None (a blind device), or {panel, width, height, bus, pins, ...}
    buttons: list           # [{name, pin, role, active}]: what the user presses (issue 26)
    notes: list

    @property
    def dir(self) -> Path:
        return BOARDS_DIR / self.name

    @property
    def usb_id(self):
        """(vid, pid) as ints, or None for the emulator."""
        if self.usb_vid is None:
            return None
        return int(self.usb_vid, 16), int(self.usb_pid, 16)


def _require(cond, name, field, why):
    if not cond:
        raise BoardError(f"boards/{name}/board.json: {field} {why}")


def _check(data, name):
    fields = Board.__dataclass_fields__
    missing = sorted(set(fields) - set(data))
    unknown = sorted(set(data) - set(fields))
    _require(not missing, name, ", ".join(missing), "missing")
    _require(not unknown, name, ", ".join(unknown), "unknown")
    _require(data["name"] == name, name, "name", "must equal the folder name")
    _require(data["mpy_cross_march"] in MARCHES, name, "mpy_cross_march",
             "must be one of " + ", ".join(MARCHES))
    _require(data["deploy"] in DEPLOY_KINDS, name, "deploy", "must be filesystem or frozen")
    for field in ("heap_free_bytes", "flash_budget_bytes", "fs_block_bytes"):
        value = data[field]
        _require(isinstance(value, int) and not isinstance(value, bool) and value > 0,
                 name, field, "must be a positive integer")
    natmod = data["natmod"]
    _require(natmod is None or (isinstance(natmod, dict) and set(natmod) == set(NATMOD_FIELDS)
                                and natmod["arch"] in NATMOD_ARCHES
                                and natmod["ecmult_gen_kb"] in (2, 22, 86)
                                and natmod["ecmult_window_size"] in range(2, 25)),
             name, "natmod", "must be null or {arch: " + "|".join(NATMOD_ARCHES)
             + ", ecmult_gen_kb: 2|22|86, ecmult_window_size: 2..24}")
    transport = data["transport"]
    _require(isinstance(transport, dict) and transport.get("kind") in TRANSPORT_KINDS
             and isinstance(transport.get("pins"), dict), name, "transport",
             "must be {kind: usb_cdc|uart|stdio, pins: {...}}")
    clock = data["clock_hz"]
    _require(clock is None if data["transport"]["kind"] == "stdio" else
             isinstance(clock, int) and not isinstance(clock, bool) and clock > 0,
             name, "clock_hz", "must be a positive integer (Hz), or null for the emulator")
    usb = (data["usb_vid"], data["usb_pid"])
    _require(usb == (None, None) or all(isinstance(v, str) and _USB_ID.match(v) for v in usb),
             name, "usb_vid/usb_pid", "must both be null or both \"0xHHHH\" (upper-case hex)")
    _require(isinstance(data["notes"], list), name, "notes", "must be a list of strings")
    _check_display(data["display"], name)
    _check_buttons(data["buttons"], data["display"], name)


def _check_display(display, name):
    if display is None:
        return
    _require(isinstance(display, dict) and display.get("panel") in PANELS, name, "display",
             "must be null or {panel: " + "|".join(PANELS) + ", ...}")
    bus = PANELS[display["panel"]]
    _require(display.get("bus") == bus, name, "display.bus", f"must be {bus} for {display['panel']}")
    for field in ("width", "height"):
        value = display.get(field)
        _require(isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 320,
                 name, f"display.{field}", "must be a pixel count up to 320")
    # the 1-bit frame's rows are whole bytes (quillfw.ui.display, MONO_HLSB)
    _require(display["width"] % 8 == 0, name, "display.width", "must be a multiple of 8")
    pins = display.get("pins")
    _require(isinstance(pins, dict) and all(pins.get(p) is not None for p in BUS_PINS[bus]), name,
             "display.pins", "must name " + ", ".join(BUS_PINS[bus]))
    expected = {"panel", "width", "height", "bus", "pins", *BUS_FIELDS[bus]}
    _require(set(display) == expected, name, "display", "must have exactly " + ", ".join(sorted(expected)))


def _check_buttons(buttons, display, name):
    _require(isinstance(buttons, list) and all(
        isinstance(b, dict) and set(b) == {"name", "pin", "role", "active"} and b["role"] in BUTTON_ROLES
        and b["active"] in ("low", "high") for b in buttons), name, "buttons",
        "must be a list of {name, pin, role: " + "|".join(BUTTON_ROLES) + ", active: low|high}")
    roles = [b["role"] for b in buttons]
    if display is None or not buttons:
        return
    # approving and rejecting always possible: a button for each, or the one-button scheme
    one_button = roles == ["select"]
    _require(one_button or ("select" not in roles and {"next", "approve", "reject"} <= set(roles)),
             name, "buttons", "with a display: next, approve and reject buttons, or one select button")


def load(name) -> Board:
    path = BOARDS_DIR / name / "board.json"
    if not path.is_file():
        raise BoardError(f"unknown board {name!r} (boards: {', '.join(names())})")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise BoardError(f"boards/{name}/board.json: not valid JSON ({e})") from None
    _check(data, name)
    return Board(**data)


def names():
    return sorted(p.parent.name for p in BOARDS_DIR.glob("*/board.json"))


def load_all():
    return [load(name) for name in names()]
