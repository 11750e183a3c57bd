"""Device boot entry (main.py on the board's filesystem): serve USB CDC."""
import sys

from quillfw.board.runtime import build_dispatcher, serve
from quillfw.wire.transport import StdioTransport

serve(StdioTransport(), build_dispatcher(sys.implementation._machine))
