"""A kept-alive client's repeated request head is decided without the parser
(rpc/server.py, _RepeatHead): the answers must be the ones a full parse gives,
and anything that is not the same head, or that the server's state now refuses,
must take the full way."""
from __future__ import annotations

import asyncio
import base64
import re
from typing import Any

from quill.rpc import auth
from quill.rpc.jsonrpc import Dispatcher
from quill.rpc.registry import ANY, INLINE, POOL, Method, Param, Registry
from quill.rpc.server import HTTPConnection, RPCServer

CREDENTIAL = "Basic " + base64.b64encode(b"u:p").decode()


def echo(ctx: Any, args: list) -> Any:
    return [ctx.wallet_name, *args[:args.given]]  # type: ignore[attr-defined]


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def set_write_buffer_limits(self, high: int) -> None:
        pass

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 40000)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class CountingParser:
    """The connection's parser, counting what it is fed."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.fed = 0

    def feed_data(self, data: bytes) -> None:
        self.fed += 1
        self.parser.feed_data(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)


def request(body: str, path: str = "/", extra: str = "", credential: str = CREDENTIAL) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {credential}\r\n{extra}"
            f"Content-Length: {len(body.encode())}\r\n\r\n").encode() + body.encode()


async def echo_server() -> RPCServer:
    """A started server with `echo` answered inline and `slowecho` on the worker pool
    (user u, password p), listening on a port no one uses: connections are fed by hand."""
    registry = Registry()
    registry.add([Method("echo", "control", echo, [Param(f"arg{i}", ANY) for i in range(3)], lane=INLINE),
                  Method("slowecho", "control", echo, [Param(f"arg{i}", ANY) for i in range(3)], lane=POOL)])
    server = RPCServer(dispatcher=Dispatcher(registry), authenticator=auth.Authenticator(
        [auth.Credential.from_password("u", "p")]), allowlist=auth.AllowList(), node=None,
        binds=[("127.0.0.1", 0)], threads=1, auth_failure_delay=0)
    await server.start()
    return server


async def answered(connection: HTTPConnection) -> None:
    """Wait (up to a second) until the connection has answered what it was fed."""
    for _ in range(100):
        if not connection.busy:
            return
        await asyncio.sleep(0.01)


def masked(data: bytes) -> bytes:
    return re.sub(rb"Date: [^\r]*", b"Date: <date>", data)


async def serve(chunks: list[bytes], stopping_after: int | None = None) -> tuple[list[bytes], int]:
    """Each chunk handed to one connection in turn: (what each one got back, parser feeds)."""
    server = await echo_server()
    connection = HTTPConnection(server)
    parser = connection.parser = CountingParser(connection.parser)  # type: ignore[assignment]
    transport = Transport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    replies = []
    try:
        for i, chunk in enumerate(chunks):
            if i == stopping_after:
                server.stopping = True
            connection.data_received(chunk)
            await answered(connection)
            replies.append(masked(b"".join(transport.written)))
            transport.written.clear()
    finally:
        connection.connection_lost(None)
        await server.stop()
    return replies, parser.fed


def one_by_one(chunks: list[bytes]) -> list[bytes]:
    """What each chunk gets on a connection of its own: the full parse."""
    return [asyncio.run(serve([chunk]))[0][0] for chunk in chunks]


def test_a_repeated_head_is_answered_as_a_parsed_one_without_the_parser() -> None:
    chunks = [request('{"id":1,"method":"echo","params":["a"]}'),
              request('{"id":2,"method":"echo","params":["longer",2,[true]]}'),
              request('{"id":3,"method":"nosuch"}'),
              request('{"id":4,"method":"echo","params":"x"}'),
              request('{"id":5,"method":"slowecho","params":[5]}'),
              request('[{"method":"echo"},{"jsonrpc":"2.0","method":"echo"}]'),
              request('{"jsonrpc":"2.0","method":"echo"}'),
              request('{"id":8,"method":"echo","params":["\\ud800"]}'),
              request('{not json')]
    replies, fed = asyncio.run(serve(chunks))
    assert replies == one_by_one(chunks)
    assert b'"result":[null,"longer",2,[true]]' in replies[1] and b"HTTP/1.1 204" in replies[6]
    assert fed == 1  # only the first head was parsed


def test_anything_else_takes_the_full_way() -> None:
    first = request('{"id":1,"method":"echo","params":["a"]}')
    others = [request('{"id":2,"method":"echo"}', path="/wallet/w"),  # another path: another wallet
              request('{"id":3,"method":"echo"}'),                    # "/" again: the head learnt is /wallet/w's
              request('{"id":4,"method":"echo"}', credential="Basic " + base64.b64encode(b"u:x").decode()),
              request('{"id":6,"method":"echo"}') + request('{"id":7,"method":"echo"}'),  # two at once
              request('{"id":8,"method":"echo"}')[:-3]]               # a body still to come
    replies, fed = asyncio.run(serve([first, *others]))
    assert fed == 1 + len(others)
    assert replies[:5] == one_by_one([first, *others[:4]])
    assert b'"result":["w"]' in replies[1] and b'"result":[null]' in replies[2]
    assert replies[3].startswith(b"HTTP/1.1 401") and replies[4].count(b"HTTP/1.1 200") == 2
    assert replies[5] == b""


def test_a_head_is_never_learnt_from_a_request_that_was_not_plain() -> None:
    for extra in ("Connection: close\r\n", "Expect: 100-continue\r\n", "Transfer-Encoding: identity\r\n",
                  "Content-Length: 5\r\n"):
        chunk = request('{"id":1,"method":"echo","params":["a"]}', extra=extra)
        _, fed = asyncio.run(serve([chunk, chunk]))
        assert fed == 2, extra


def test_the_server_state_is_checked_again() -> None:
    chunk = request('{"id":1,"method":"echo","params":["a"]}')
    replies, fed = asyncio.run(serve([chunk, chunk], stopping_after=1))
    assert replies[1].startswith(b"HTTP/1.1 503") and fed == 2
