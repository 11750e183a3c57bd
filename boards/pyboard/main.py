"""pyboard v1.1: start Quill on USB CDC (the VCP).

The firmware's modules are frozen into the MicroPython image (manifest.py).
Maintenance: hold USR while pressing RST and release it when only the orange
LED is lit: the safe boot mode skips boot.py and this file, leaving the REPL
free for mpremote (make deploy).

Confirmation (quillfw.signing.confirm): with an SSD1306 OLED on I2C(1) (X9 SCL, X10
SDA; board.json "display"), every confirmation is drawn on it and answered with USR
alone: a short press moves to the next page, and on the last two pages ("hold to
approve", "hold to reject") a press held 1.5 s answers. Without it (DISPLAY = None),
the green LED blinks while a signature waits; press USR briefly to approve, hold
it 2 s to refuse.
"""
from quillfw.board.runtime import build_dispatcher, serve
from quillfw.keys.methods import SEED_FILE
from quillfw.keys.methods import register as register_keys
from quillfw.psbt.methods import register as register_psbt
from quillfw.signing.confirm import POLICY_FILE
from quillfw.wire.transport import StdioTransport

BOARD = "pyboard"
BUTTON_PIN = "B3"              # board.json button_pin: the USR switch (active low)
LED_PIN = "A14"                # board.json led_pin: LED(2), green
# board.json "display" and "buttons" (tests/boards checks they agree)
DISPLAY = {"panel": "ssd1306", "width": 128, "height": 64, "bus": "i2c",
           "pins": {"scl": "X9", "sda": "X10"}, "i2c_id": 1, "address": 60}
BUTTONS = (("B3", "select", True),)   # the USR switch
BUTTON_NAMES = ("USR",)

if DISPLAY is None:
    approver = ("button", "quillfw.board.hal", BUTTON_PIN, LED_PIN, "gpio")
    display = None
else:
    approver = ("buttons", "quillfw.ui.buttons", BUTTONS, LED_PIN, "gpio")
    info = {"panel": DISPLAY["panel"], "width": DISPLAY["width"], "height": DISPLAY["height"],
            "buttons": [{"name": BUTTON_NAMES[i], "role": BUTTONS[i][1]}
                        for i in range(len(BUTTONS))]}
    display = (info, "quillfw.ui.boards", DISPLAY["panel"], DISPLAY["width"], DISPLAY["height"],
               DISPLAY["pins"], DISPLAY["address"], DISPLAY["i2c_id"])
dispatcher = build_dispatcher(BOARD, approver=approver, policy_path=POLICY_FILE, display=display)
register_psbt(dispatcher, register_keys(dispatcher, SEED_FILE))   # keys, PSBT signing with them
serve(StdioTransport(), dispatcher)
