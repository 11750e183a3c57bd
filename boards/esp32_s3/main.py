"""ESP32-S3: start Quill on the native USB port (USB CDC).

Maintenance: hold BOOT (GPIO0) during the first 1.5 s after the board starts
and the firmware stays off, leaving the REPL free for mpremote (make deploy).
Holding BOOT before reset enters the ROM download mode instead, which is how
MicroPython itself is flashed.

Confirmation (quillfw.signing.confirm): the RGB LED blinks white while a signature
waits; press BOOT briefly to approve, hold it 2 s to refuse.
"""
import time

from machine import Pin

BOARD = "esp32_s3"
BUTTON_PIN = 0                 # board.json button_pin (active low)
LED_PIN = 48                   # board.json led_pin (WS2812)
MAINTENANCE_WINDOW_MS = 1500


def maintenance_requested():
    button = Pin(BUTTON_PIN, Pin.IN, Pin.PULL_UP)
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < MAINTENANCE_WINDOW_MS:
        if button.value() == 0:
            return True
        time.sleep_ms(20)
    return False


if maintenance_requested():
    print("quill: BOOT held, firmware not started (maintenance)")
else:
    from quillfw.board.runtime import build_dispatcher, serve
    from quillfw.keys.methods import SEED_FILE
    from quillfw.keys.methods import register as register_keys
    from quillfw.signing.confirm import POLICY_FILE
    from quillfw.wire.transport import StdioTransport
    approver = ("button", "quillfw.board.hal", BUTTON_PIN, LED_PIN, "neopixel")
    dispatcher = build_dispatcher(BOARD, approver=approver, policy_path=POLICY_FILE)
    from quillfw.psbt.methods import register as register_psbt
    register_psbt(dispatcher, register_keys(dispatcher, SEED_FILE))   # keys, PSBT signing with them
    serve(StdioTransport(), dispatcher)
