"""The emulator as a board: serve the protocol on stdin/stdout.

    MICROPYPATH=build/unix micropython -X heapsize=233024 boards/unix/main.py

runs the .mpy files that `python -m boards.build build --board unix` made, at
the heap of board.json. The unix port runs no boot.py. quill-emu
(firmware/main_emulator.py) is the emulator for daily use; this entry point is
the board-shaped one, with no debug methods.
"""
from quillfw.board.runtime import build_dispatcher, serve
from quillfw.wire.transport import StdioTransport

serve(StdioTransport(), build_dispatcher("unix", emulator=True))
