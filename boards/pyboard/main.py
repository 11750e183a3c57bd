"""pyboard v1.1: start Quill on USB CDC (the VCP).

The firmware's modules are frozen into the MicroPython image (manifest.py).
Maintenance: hold USR while pressing RST and release it when only the orange
LED is lit: the safe boot mode skips boot.py and this file, leaving the REPL
free for mpremote (make deploy).
"""
from quillfw.runtime import build_dispatcher, serve
from quillfw.transport import StdioTransport

BOARD = "pyboard"

serve(StdioTransport(), build_dispatcher(BOARD))
