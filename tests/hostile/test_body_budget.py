"""The bodies' budget (issue 24): the requests in flight hold at most two 32 MiB bodies together.
One that does not fit waits, unread, and runs in its turn; a small request never waits behind it;
one that waits longer than -rpcservertimeout is answered Core's 503 for a full work queue."""
from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from quill.rpc.server import MAX_BUFFERED_BYTES
from tests.hostile.netkit import basic, head, post, read_reply
from tests.kit.rpc_daemon import QuillDaemon

MB = 1 << 20
AUTH = basic("u", "p")


def echo_body(size: int) -> bytes:
    prefix, suffix = b'{"id":1,"method":"echo","params":["', b'"]}'
    return prefix + b"a" * (size - len(prefix) - len(suffix)) + suffix


def begun(port: int, body: bytes, sent: int) -> socket.socket:
    """A connection that has sent the head and the first `sent` bytes of `body`."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head(len(body), AUTH) + body[:sent])
    return s


def no_reply_within(s: socket.socket, seconds: float) -> bool:
    s.settimeout(seconds)
    try:
        return s.recv(1) == b"" and False
    except TimeoutError:
        return True
    finally:
        s.settimeout(30)


@pytest.fixture
def daemon(tmp_path) -> Iterator[QuillDaemon]:
    with QuillDaemon(tmp_path, "-rpcuser=u", "-rpcpassword=p", "-rpcservertimeout=3") as d:
        yield d


@pytest.fixture
def patient_daemon(tmp_path) -> Iterator[QuillDaemon]:
    """Core's default -rpcservertimeout (30 s): the second holder below stays silent while the
    first's and the third's 30 MB go through, which took more than 3 s once at a load of 9."""
    with QuillDaemon(tmp_path, "-rpcuser=u", "-rpcpassword=p") as d:
        yield d


def test_a_body_beyond_the_budget_waits_unread_and_runs_in_its_turn(patient_daemon: QuillDaemon) -> None:
    daemon = patient_daemon
    big = echo_body(30 * MB)
    assert 2 * len(big) <= MAX_BUFFERED_BYTES < 3 * len(big)
    first, second = begun(daemon.port, big, 1000), begun(daemon.port, big, 1000)
    third = begun(daemon.port, big, 1000)          # does not fit beside the first two: it waits
    try:
        assert no_reply_within(third, 0.5)
        # a small request fits beside them and is answered at once, not after the waiting one
        status, reply = post(daemon.port, b'{"id":1,"method":"uptime"}', AUTH, timeout=5)
        assert status == 200 and json.loads(reply)["error"] is None
        first.sendall(big[1000:])
        status, reply = read_reply(first)
        assert status == 200 and json.loads(reply)["result"] == [json.loads(big)["params"][0]]
        third.sendall(big[1000:])                  # admitted once the first's reply was written
        assert read_reply(third)[0] == 200
        second.sendall(big[1000:])
        assert read_reply(second)[0] == 200
    finally:
        for s in (first, second, third):
            s.close()


def test_a_request_that_waits_longer_than_the_server_timeout_gets_503(daemon: QuillDaemon) -> None:
    big = echo_body(30 * MB)
    holders = [begun(daemon.port, big, 1000) for _ in range(2)]
    waiting = begun(daemon.port, big, 1000)
    try:
        for holder in holders:      # the holders keep their place by sending a byte now and then
            holder.sendall(big[1000:1001])
        assert no_reply_within(waiting, 1.5)
        for holder in holders:
            holder.sendall(big[1001:1002])
        assert read_reply(waiting) == (503, b"Work queue depth exceeded")
    finally:
        for s in (*holders, waiting):
            s.close()
