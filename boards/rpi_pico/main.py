"""Raspberry Pi Pico: start Quill on USB CDC.

Maintenance: hold BOOTSEL while the LED is lit (the first 1.5 s after the board
starts) and the firmware stays off, leaving the REPL free for mpremote (make
deploy).

Confirmation (quillfw.signing.confirm): the LED blinks while a signature waits; press
BOOTSEL briefly to approve, hold it 2 s to refuse. Holding BOOTSEL before power-up enters the RP2040 ROM bootloader
instead, which is how MicroPython itself is flashed.
"""
import time

import rp2
from machine import Pin

BOARD = "rpi_pico"
LED_PIN = 25                   # board.json led_pin
MAINTENANCE_WINDOW_MS = 1500
# board.json "display" and "buttons" (tests/boards checks they agree)
DISPLAY = {"panel": "st7789", "width": 240, "height": 240, "bus": "spi",
           "pins": {"sck": 10, "mosi": 11, "cs": 9, "dc": 8, "rst": 12, "bl": 13},
           "spi_id": 1, "offset": [0, 0], "madctl": 0}
BUTTONS = ((15, "approve", True), (17, "reject", True), (20, "next", True), (18, "next", True),
           (16, "prev", True), (2, "prev", True))
BUTTON_NAMES = ("A", "B", "joystick right", "joystick down", "joystick left", "joystick up")


def maintenance_requested():
    led = Pin(LED_PIN, Pin.OUT, value=1)
    start = time.ticks_ms()
    try:
        while time.ticks_diff(time.ticks_ms(), start) < MAINTENANCE_WINDOW_MS:
            if rp2.bootsel_button():
                return True
            time.sleep_ms(20)
        return False
    finally:
        led.value(0)


if maintenance_requested():
    print("quill: BOOTSEL held, firmware not started (maintenance)")
else:
    from quillfw.board.runtime import build_dispatcher, serve
    from quillfw.keys.methods import SEED_FILE
    from quillfw.keys.methods import register as register_keys
    from quillfw.signing.confirm import POLICY_FILE
    from quillfw.wire.transport import StdioTransport
    if DISPLAY is None:
        approver = ("button", "quillfw.board.hal", "bootsel", LED_PIN, "gpio")   # BOOTSEL alone
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
