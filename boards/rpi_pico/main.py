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
    approver = ("button", "quillfw.board.hal", "bootsel", LED_PIN, "gpio")   # the Pico's only button is BOOTSEL
    dispatcher = build_dispatcher(BOARD, approver=approver, policy_path=POLICY_FILE)
    from quillfw.psbt.methods import register as register_psbt
    register_psbt(dispatcher, register_keys(dispatcher, SEED_FILE))   # keys, PSBT signing with them
    serve(StdioTransport(), dispatcher)
