"""pyboard v1.1: start Quill on USB CDC (the VCP).

The firmware's modules are frozen into the MicroPython image (manifest.py).
Maintenance: hold USR while pressing RST and release it when only the orange
LED is lit: the safe boot mode skips boot.py and this file, leaving the REPL
free for mpremote (make deploy).

Confirmation (quillfw.signing.confirm): the green LED blinks while a signature waits;
press USR briefly to approve, hold it 2 s to refuse.
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

approver = ("button", "quillfw.board.hal", BUTTON_PIN, LED_PIN, "gpio")
dispatcher = build_dispatcher(BOARD, approver=approver, policy_path=POLICY_FILE)
register_psbt(dispatcher, register_keys(dispatcher, SEED_FILE))   # keys, PSBT signing with them
serve(StdioTransport(), dispatcher)
