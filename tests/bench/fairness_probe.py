"""The good client of bench_fairness: `uptime` on a fresh connection (as quill-cli and
bitcoin-cli call), every INTERVAL seconds, until its standard input closes.

    python -m tests.bench.fairness_probe PORT AUTH_HEADER
prints one JSON line: {"latencies_ms": [...], "failures": ["..."]}
"""
from __future__ import annotations

import json
import socket
import sys
import threading
import time

INTERVAL = 0.01
TIMEOUT = 30.0
BODY = b'{"jsonrpc":"1.0","id":"probe","method":"uptime","params":[]}'


def one_call(port: int, auth: str) -> float:
    request = (f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth}\r\n"
               f"Content-Length: {len(BODY)}\r\n\r\n").encode() + BODY
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(request)
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    elapsed = (time.perf_counter() - started) * 1000
    if not reply.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(reply.split(b"\r\n", 1)[0].decode(errors="replace") or "no reply")
    return elapsed


def main() -> None:
    port, auth = int(sys.argv[1]), sys.argv[2]
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    latencies: list[float] = []
    failures: list[str] = []
    while not done.is_set():
        try:
            latencies.append(one_call(port, auth))
        except (OSError, RuntimeError) as e:
            failures.append(str(e))
        done.wait(INTERVAL)
    print(json.dumps({"latencies_ms": latencies, "failures": failures[:5], "failed": len(failures)}))


if __name__ == "__main__":
    main()
