"""A stateless RPC worker process (quill.rpc.stateless): answers the stateless calls the daemon's
event loop hands it over a socket, with the daemon's registry entries for them and its Dispatcher,
so that its replies are the ones the loop would have made, byte for byte.

    python -m quill.daemon.stateless_worker CHAIN LOG_PATH DEBUG DEPRECATED FD

CHAIN is the daemon's chain, LOG_PATH its debug.log ("" for none), DEBUG and DEPRECATED its -debug
and -deprecatedrpc values joined with commas, FD the worker's end of the socket. It ends when the
socket closes (the daemon stopped or died).
"""
from __future__ import annotations

import io
import socket
import sys

from quill.daemon import logging_setup
from quill.handlers import psbt, rawtransactions
from quill.handlers.core_help import with_cores_help
from quill.handlers.errors import guarded_methods
from quill.rpc import stateless
from quill.rpc.jsonrpc import CallContext, Dispatcher
from quill.rpc.registry import Registry

# The handler modules that hold stateless methods (registry.Method.stateless)
MODULES = (rawtransactions, psbt)


class WorkerNode:
    """What a stateless handler reads of `ctx.node`."""

    def __init__(self, chain_name: str, deprecated_rpc: list[str]) -> None:
        self.chain_name = chain_name
        self.deprecated_rpc = frozenset(deprecated_rpc)


def stateless_registry() -> Registry:
    """The stateless methods, wrapped as quill.daemon.main.build_registry wraps them."""
    registry = Registry()
    for module in MODULES:
        registry.add([m for m in with_cores_help(guarded_methods(module.METHODS)) if m.stateless])
    return registry


def serve(dispatcher: Dispatcher, ctx: CallContext, body: bytes) -> tuple[int, int, bytes]:
    """(status, kind, reply bytes) for one request body."""
    value = dispatcher.parse_body(body)
    if isinstance(value, tuple):
        return value[0], stateless.ANSWER, value[1]
    if not dispatcher.stateless(value):
        return 0, stateless.NOT_MINE, b""
    status, reply = dispatcher.process_value(value, ctx)
    if reply is None:
        return status, stateless.NO_CONTENT, b""
    return status, stateless.ANSWER, bytes(reply)


def _read_exactly(stream: "io.BufferedReader[socket.SocketIO]", size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def run(chain: str, deprecated: list[str], fd: int) -> None:
    dispatcher = Dispatcher(stateless_registry())
    ctx = CallContext(node=WorkerNode(chain, deprecated))
    sock = socket.socket(fileno=fd)
    sock.setblocking(True)
    reader = io.BufferedReader(socket.SocketIO(sock, "rb"), 1 << 16)
    sock.sendall(stateless.REPLY.pack(0, 0, stateless.READY, 0))
    while True:
        head = _read_exactly(reader, stateless.REQUEST.size)
        if head is None:
            return
        job, length = stateless.REQUEST.unpack(head)
        body = _read_exactly(reader, length)
        if body is None:
            return
        status, kind, reply = serve(dispatcher, ctx, body)
        del body
        sock.sendall(stateless.REPLY.pack(job, status, kind, len(reply)) + reply)


def main(argv: list[str]) -> int:
    chain, log_path, debug, deprecated, fd = argv
    logging_setup.setup(log_path or None, False, [d for d in debug.split(",") if d])
    try:
        run(chain, [d for d in deprecated.split(",") if d], int(fd))
    except (BrokenPipeError, ConnectionResetError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
