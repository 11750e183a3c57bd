"""Adafruit ESP32-S3 Reverse TFT Feather: start Quill on the native USB port (USB CDC).

Maintenance: hold D0 (BOOT, GPIO0) during the first 1.5 s after the board starts
and the firmware stays off, leaving the REPL free for mpremote (make deploy).
Holding it before reset enters the ROM download mode instead, which is how
MicroPython itself is flashed.

Confirmation (quillfw.signing.confirm): every confirmation is drawn on the built-in
240x135 TFT (board.json "display") and answered with its three buttons: D2 moves
to the next page, D1 approves on the last page, D0 refuses on any page; the red
LED blinks while the device waits.
"""
import time

from machine import Pin

BOARD = "esp32_s3_tft"
BUTTON_PIN = 0                 # board.json button_pin: D0/BOOT (active low)
LED_PIN = 13                   # board.json led_pin: the red LED
MAINTENANCE_WINDOW_MS = 1500
# board.json "display" and "buttons" (tests/boards checks they agree)
DISPLAY = {"panel": "st7789", "width": 240, "height": 135, "bus": "spi",
           "pins": {"sck": 36, "mosi": 35, "cs": 42, "dc": 40, "rst": 41, "bl": 45, "power": 7},
           "spi_id": 1, "offset": [40, 53], "madctl": 96}
BUTTONS = ((2, "next", False), (1, "approve", False), (0, "reject", True))
BUTTON_NAMES = ("D2", "D1", "D0")


def maintenance_requested():
    button = Pin(BUTTON_PIN, Pin.IN, Pin.PULL_UP)
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < MAINTENANCE_WINDOW_MS:
        if button.value() == 0:
            return True
        time.sleep_ms(20)
    return False


if maintenance_requested():
    print("quill: D0 held, firmware not started (maintenance)")
else:
    from quillfw.board.runtime import build_dispatcher, serve
    from quillfw.keys.methods import SEED_FILE
    from quillfw.keys.methods import register as register_keys
    from quillfw.signing.confirm import POLICY_FILE
    from quillfw.wire.transport import StdioTransport
    if DISPLAY is None:
        approver = ("button", "quillfw.board.hal", BUTTON_PIN, LED_PIN, "gpio")
        display = None
    else:
        approver = ("buttons", "quillfw.ui.buttons", BUTTONS, LED_PIN, "gpio")
        info = {"panel": DISPLAY["panel"], "width": DISPLAY["width"], "height": DISPLAY["height"],
                "buttons": [{"name": BUTTON_NAMES[i], "role": BUTTONS[i][1]}
                            for i in range(len(BUTTONS))]}
        display = (info, "quillfw.ui.boards", DISPLAY["panel"], DISPLAY["width"], DISPLAY["height"],
                   DISPLAY["pins"], DISPLAY["offset"][0], DISPLAY["offset"][1], DISPLAY["madctl"],
                   DISPLAY["spi_id"])
    dispatcher = build_dispatcher(BOARD, approver=approver, policy_path=POLICY_FILE, display=display)
    from quillfw.psbt.methods import register as register_psbt
    register_psbt(dispatcher, register_keys(dispatcher, SEED_FILE))   # keys, PSBT signing with them
    serve(StdioTransport(), dispatcher)
