"""The transport, differentially: every request of transport_corpus.json is sent,
byte for byte, to a real Bitcoin Core (31.99, ../shared/toolchains) and to quilld,
and the answers must be identical: status line, the headers Core sends in its
order (Date's value aside), and the body bytes.

The corpus holds odd requests: envelopes, ids, parse errors, batch quirks, named
parameters, number texts, repeated keys, UTF-8 edge cases (Core's filter: lone
surrogates, lead bytes F5-F7), nesting depth, and HTTP-level cases (methods,
paths, credentials, HTTP/1.0, keep-alive).
"""
from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.kit.bitcoind import RPC_PASSWORD, RPC_USER, BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

CORPUS = json.loads((Path(__file__).parent / "transport_corpus.json").read_text())["cases"]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core, \
            QuillDaemon(tmp_path_factory.mktemp("quill"), f"-rpcuser={RPC_USER}",
                        f"-rpcpassword={RPC_PASSWORD}") as quill:
        yield {"core": core.rpc_port, "quill": quill.port}


def request_bytes(case: dict[str, Any]) -> bytes:
    body = bytes.fromhex(case["body_hex"]) if "body_hex" in case else case["body"].encode("utf-8")
    lines = [f"{case.get('http_method', 'POST')} {case.get('path', '/')} HTTP/{case.get('http', '1.1')}",
             "Host: 127.0.0.1"]
    auth = case.get("auth", "good")
    if auth == "good":
        lines.append("Authorization: Basic " + base64.b64encode(f"{RPC_USER}:{RPC_PASSWORD}".encode()).decode())
    elif auth == "wrong":
        lines.append("Authorization: Basic " + base64.b64encode(f"{RPC_USER}:nope".encode()).decode())
    elif auth == "bearer":
        lines.append("Authorization: Bearer abc")
    connection = case.get("connection", "close")
    if connection:
        lines.append(f"Connection: {connection}")
    for name, value in case.get("headers", {}).items():
        lines.append(f"{name}: {value}")
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def exchange(port: int, data: bytes, *before: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    """(status line, headers with Date's value masked, body) of the reply to `data`,
    sent on one connection after the requests `before` (their replies read and dropped)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        pending = b""
        for earlier in before:
            s.sendall(earlier)
            _, _, _, pending = read_reply(s, pending)
        s.sendall(data)
        status, headers, body, _ = read_reply(s, pending)
    masked = [(n, b"<date>" if n.lower() == b"date" else v) for n, v in headers]
    return status, masked, body


def read_reply(s: socket.socket, raw: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes, bytes]:
    """(status line, headers, body, bytes after it) of the next reply on `s`."""
    while b"\r\n\r\n" not in raw:
        chunk = s.recv(65536)
        if not chunk:
            break
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *header_lines = head.split(b"\r\n")
    headers = [tuple(line.split(b": ", 1)) for line in header_lines]
    length = next((int(v) for n, v in headers if n.lower() == b"content-length"), None)
    if length is None and status.split(b" ")[1:2] == [b"204"]:
        length = 0  # no body follows a 204, and a kept-alive connection stays open
    while length is None or len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    if length is None:
        return status, headers, body, b""  # type: ignore[return-value]
    return status, headers, body[:length], body[length:]  # type: ignore[return-value]


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 50 and len({c["name"] for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_same_answer_as_core(servers: dict[str, int], case: dict[str, Any]) -> None:
    data = request_bytes(case)
    core = exchange(servers["core"], data)
    quill = exchange(servers["quill"], data)
    assert quill[0] == core[0], "status line"
    assert quill[1] == core[1], "headers"
    assert quill[2] == core[2], "body"


# Every HTTP/1.1 POST of the corpus again, kept alive, after a first request with the same
# head (its own Content-Length aside) on the same connection: quilld decides such a repeated
# head without parsing it again (rpc/server.py, _RepeatHead), and must answer as Core does.
KEPT_ALIVE = [dict(c, connection=None) for c in CORPUS
              if c.get("http", "1.1") == "1.1" and c.get("http_method", "POST") == "POST"]
FIRST_BODY = '{"id":0,"method":"echo","params":["first"]}'


@pytest.mark.parametrize("case", KEPT_ALIVE, ids=[c["name"] for c in KEPT_ALIVE])
def test_same_answer_as_core_after_the_same_head(servers: dict[str, int], case: dict[str, Any]) -> None:
    first_case = {k: v for k, v in case.items() if k != "body_hex"} | {"body": FIRST_BODY}
    data, first = request_bytes(case), request_bytes(first_case)
    assert first != data
    core = exchange(servers["core"], data, first)
    quill = exchange(servers["quill"], data, first)
    assert quill[0] == core[0], "status line"
    assert quill[1] == core[1], "headers"
    assert quill[2] == core[2], "body"
