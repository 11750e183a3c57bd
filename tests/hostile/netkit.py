"""Raw-socket helpers for the hostile-input tests: requests written byte by byte,
replies read exactly, and the daemon's resident memory."""
from __future__ import annotations

import base64
import socket
from pathlib import Path


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def head(body_length: int, auth: str | None, path: str = "/", extra: str = "") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1"]
    if auth is not None:
        lines.append(f"Authorization: {auth}")
    lines.append(f"Content-Length: {body_length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def read_reply(sock: socket.socket) -> tuple[int, bytes]:
    """(status, body) of one reply read by its Content-Length, never a byte beyond it
    (pipelined replies stay in the socket for the next call)."""
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = sock.recv(1)
        if not byte:
            raise ConnectionError(f"closed before a reply: {header!r}")
        header += byte
    status = int(header.split(b" ", 2)[1])
    length = 0
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b": ")
        if name.lower() == b"content-length":
            length = int(value)
    parts = []
    received = 0
    while received < length:
        chunk = sock.recv(min(1 << 20, length - received))
        if not chunk:
            raise ConnectionError("closed mid-reply")
        parts.append(chunk)
        received += len(chunk)
    return status, b"".join(parts)


def post(port: int, body: bytes, auth: str | None, path: str = "/", timeout: float = 60) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head(len(body), auth, path) + body)
        return read_reply(s)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")
