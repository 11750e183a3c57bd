"""Requests sent back to back on one connection (HTTP pipelining), and bytes that
cannot be parsed after good requests: every complete request is answered, in order,
before the connection's error; none is dropped unanswered (issue 15)."""
from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from tests.hostile.netkit import basic, head, read_reply
from tests.kit.rpc_daemon import QuillDaemon

AUTH = basic("u", "p")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuillDaemon]:
    with QuillDaemon(tmp_path_factory.mktemp("pipe"), "-rpcuser=u", "-rpcpassword=p") as d:
        yield d


def request(method: str, *params: object, rid: int = 1) -> bytes:
    body = json.dumps({"id": rid, "method": method, "params": list(params)}).encode()
    return head(len(body), AUTH) + body


def test_pipelined_requests_are_answered_in_order(daemon: QuillDaemon) -> None:
    # inline (echo), worker (getblockcount) and inline again, in one packet, then a body in pieces
    data = request("echo", "a", rid=1) + request("getblockcount", rid=2) + request("echo", "c", rid=3)
    last = request("echo", "d", rid=4)
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
        s.sendall(data + last[:-5])
        ids = []
        for _ in range(3):
            status, body = read_reply(s)
            assert status == 200
            ids.append(json.loads(body)["id"])
        s.sendall(last[-5:])
        status, body = read_reply(s)
        ids.append(json.loads(body)["id"])
    assert ids == [1, 2, 3, 4]


def test_garbage_after_good_requests(daemon: QuillDaemon) -> None:
    data = request("getblockcount", rid=1) + request("echo", "b", rid=2) + b"POST / HTTP/9.9\r\n\r\n"
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
        s.sendall(data)
        first, second = read_reply(s), read_reply(s)
        assert json.loads(first[1])["id"] == 1 and json.loads(second[1])["id"] == 2
        status, body = read_reply(s)
        assert (status, body) == (400, b"")
        assert s.recv(10) == b""   # then closed


def test_bodies_beyond_the_global_cap_wait_until_announced_ones_are_given_up(daemon: QuillDaemon) -> None:
    """Announced bodies count against the cap as soon as their headers are in, and a client that
    leaves gives its share back: the request waiting for it is then read and answered."""
    big = 30 << 20
    held = [socket.create_connection(("127.0.0.1", daemon.port), timeout=10) for _ in range(2)]
    try:
        for s in held:
            s.sendall(head(big, AUTH))   # 2 x 30 MB announced, none sent
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
            prefix, suffix = b'{"id":1,"method":"echo","params":["', b'"]}'
            body = prefix + b"a" * (big - len(prefix) - len(suffix)) + suffix
            s.sendall(head(big, AUTH) + body[:100])
            assert daemon.rpc("echo", "small ones still pass") == ["small ones still pass"]
            for holder in held:
                holder.close()
            s.sendall(body[100:])
            assert read_reply(s)[0] == 200
    finally:
        for s in held:
            s.close()
    assert daemon.rpc("getblockcount") == 0
