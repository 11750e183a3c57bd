"""A closed connection leaves nothing for the garbage collector: its parser holds
the connection's bound callbacks and its idle timer the connection's check, so
without the cycle broken at close every connection a client ever opened (the
soak's vanishing clients: thousands an hour) waited, with its buffers, for a full
collection, which CPython runs only when enough long-lived objects are pending."""
from __future__ import annotations

import asyncio
import gc
import weakref

from quill.rpc.server import HTTPConnection
from tests.rpc.test_repeated_head import Transport, answered, echo_server, request


async def closed_connections(chunks: list[bytes]) -> list[weakref.ref[HTTPConnection]]:
    """One connection per chunk, fed it, answered, then lost: weak references to them."""
    server = await echo_server()
    refs = []
    try:
        for chunk in chunks:
            connection = HTTPConnection(server)
            connection.connection_made(Transport())  # type: ignore[arg-type]
            connection.data_received(chunk)
            await answered(connection)
            connection.connection_lost(None)
            refs.append(weakref.ref(connection))
            del connection
        await asyncio.sleep(0.05)  # what the loop still had scheduled for them runs
    finally:
        await server.stop()
    return refs


def test_a_closed_connection_is_freed_at_once() -> None:
    chunks = [request('{"id":1,"method":"echo","params":["a"]}'),             # answered inline
              request('{"id":2,"method":"slowecho","params":[2]}'),          # on the worker pool
              request('{"id":3,"method":"echo"}')[:40],                       # a client gone mid-head
              request('{"id":4,"method":"echo","params":["b"]}')[:-5],        # ... mid-body
              request('{"id":5,"method":"echo"}', credential="Basic eDp5"),  # refused
              b"GARBAGE / HTTP/1.1\r\n\r\n"]                                # unparsable
    gc.collect()
    gc.disable()
    try:
        refs = asyncio.run(closed_connections(chunks))
        alive = [i for i, ref in enumerate(refs) if ref() is not None]
    finally:
        gc.enable()
    assert alive == []
