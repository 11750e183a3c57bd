"""Boot the protocol server: build the method table and serve a transport."""
from quillfw.dispatcher import Dispatcher
from quillfw.framing import DEFAULT_IDLE_MS
from quillfw.info import core_methods
from quillfw.server import Server


def build_dispatcher(board, emulator=False):
    dispatcher = Dispatcher()
    dispatcher.register(core_methods(dispatcher, board, emulator))
    return dispatcher


def serve(transport, dispatcher, idle_ms=DEFAULT_IDLE_MS, log=None):
    """Serve until end of input; returns normally then (the emulator's pipe closed)."""
    server = Server(transport, dispatcher, idle_ms=idle_ms, log=log)
    try:
        server.serve_forever()
    except EOFError:
        pass
