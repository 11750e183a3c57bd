"""Soak (issue 15): mixed load from 32 concurrent clients - decoding, wallet
queries, signing, bad requests, clients that vanish mid-request - while the
device is killed at intervals. Zero wrong answers, zero crashes, RSS flat, and
every signing call the kill interrupts is answered with a clear error.

The suite runs two minutes with a kill every 30 s; the full soak is
    QUILL_SOAK_SECONDS=1800 QUILL_SOAK_KILL_EVERY=120 .venv/bin/python -m pytest tests/hostile/test_soak.py -s
and prints its figures either way.
"""
from __future__ import annotations

import base64
import json
import os
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.hostile.netkit import basic, head, read_reply, rss_bytes
from tests.rpc_daemon import QuillDaemon
from tests.signing.signkit import firmware_pid, keys, kill, p2wpkh, prevtx, unsigned_tx, wait_for

SECONDS = float(os.environ.get("QUILL_SOAK_SECONDS", "120"))
KILL_EVERY = float(os.environ.get("QUILL_SOAK_KILL_EVERY", "30"))
CLIENTS = 32
KEY = keys(1516, 1)[0]
MB = 1 << 20


class Client:
    """One keep-alive connection, reopened whenever the server or the test closes it."""

    def __init__(self, port: int, auth: str) -> None:
        self.port = port
        self.auth = auth
        self.sock: socket.socket | None = None

    def call(self, body: bytes, path: str = "/", auth: str | None = None) -> tuple[int, bytes]:
        for attempt in (1, 2):
            if self.sock is None:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=300)
            try:
                self.sock.sendall(head(len(body), auth or self.auth, path) + body)
                return read_reply(self.sock)
            except (ConnectionError, OSError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def rpc_body(method: str, *params: Any) -> bytes:
    return json.dumps({"jsonrpc": "1.0", "id": "s", "method": method, "params": list(params)}).encode()


def test_soak(tmp_path: Any) -> None:
    with QuillDaemon(tmp_path, "-device=emulator", "-rpcuser=u", "-rpcpassword=p",
                     "-rpcauthfailuredelay=20") as d:
        run_soak(d)


def run_soak(d: QuillDaemon) -> None:
    auth = basic("u", "p")
    setup = Client(d.port, auth)
    tx = unsigned_tx(2, 2, seed=1516)
    entries = [prevtx(tx, i, p2wpkh(KEY.pubkey), 60_000) for i in range(2)]
    sign = rpc_body("signrawtransactionwithkey", tx.hex(), [KEY.wif], entries)
    decode = rpc_body("decoderawtransaction", tx.hex())
    assert setup.call(rpc_body("createwallet", "soak", True))[0] == 200
    expected = {"sign": setup.call(sign), "decode": setup.call(decode),
                "wallet": setup.call(rpc_body("getbalances"), "/wallet/soak")}
    assert expected["sign"][0] == 200 and json.loads(expected["sign"][1])["result"]["complete"] is True
    setup.close()

    stop = time.monotonic() + SECONDS
    counts: Counter[str] = Counter()
    wrong: list[str] = []
    device_errors: Counter[str] = Counter()
    lock = threading.Lock()

    def note(kind: str, problem: str | None = None) -> None:
        with lock:
            counts[kind] += 1
            if problem:
                wrong.append(f"{kind}: {problem}")

    def check_sign(status: int, body: bytes) -> str | None:
        if (status, body) == expected["sign"]:
            return None
        error = json.loads(body).get("error") if body.startswith(b"{") else None
        if status == 500 and error and error["code"] == -1 and "evice" in error["message"]:
            with lock:
                device_errors[error["message"]] += 1
            return None
        return f"{status} {body[:200]!r}"

    def vanish() -> None:
        with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
            body = sign if random.random() < 0.3 else decode
            data = head(len(body), auth) + body
            s.sendall(data[:random.randrange(1, len(data))])   # part of a request, then gone

    ops: list[tuple[str, Callable[[Client], None]]] = []

    def op(name: str) -> Callable[[Callable[[Client], None]], Callable[[Client], None]]:
        def register(fn: Callable[[Client], None]) -> Callable[[Client], None]:
            ops.append((name, fn))
            return fn
        return register

    @op("decode")
    def _(c: Client) -> None:
        got = c.call(decode)
        note("decode", None if got == expected["decode"] else f"{got[0]} {got[1][:200]!r}")

    @op("wallet")
    def _(c: Client) -> None:
        got = c.call(rpc_body("getbalances"), "/wallet/soak")
        note("wallet", None if got == expected["wallet"] else f"{got[0]} {got[1][:200]!r}")

    @op("sign")
    def _(c: Client) -> None:
        note("sign", check_sign(*c.call(sign)))

    @op("bad")
    def _(c: Client) -> None:
        kind = random.randrange(4)
        if kind == 0:
            got = c.call(bytes(random.randrange(256) for _ in range(random.randrange(1, 64))))
            ok = got[0] == 500 and json.loads(got[1])["error"]["code"] == -32700
        elif kind == 1:
            got = c.call(rpc_body("uptime"), auth="Basic " + base64.b64encode(b"u:guess").decode())
            ok = got == (401, b"")
        elif kind == 2:
            got = c.call(rpc_body("nosuchmethod", 1))
            ok = got[0] == 404
        else:
            got = c.call(rpc_body("decoderawtransaction", "zz" * random.randrange(1, 50)))
            ok = got[0] == 500 and json.loads(got[1])["error"]["code"] == -22
        note("bad", None if ok else f"{got[0]} {got[1][:200]!r}")

    @op("vanish")
    def _(c: Client) -> None:
        vanish()
        note("vanish")

    weights = [5, 3, 2, 2, 1]

    def client() -> None:
        c = Client(d.port, auth)
        try:
            while time.monotonic() < stop:
                name, fn = random.choices(ops, weights)[0]
                try:
                    fn(c)
                except Exception as e:  # a dropped or hung connection is a wrong answer
                    note(name, f"{type(e).__name__}: {e}")
                    c.close()
        finally:
            c.close()

    kills = [0]

    def killer() -> None:
        while time.monotonic() + KILL_EVERY < stop + 1:
            time.sleep(KILL_EVERY)
            pid = firmware_pid(d)
            if pid:
                kill(pid)
                kills[0] += 1

    rss: list[tuple[float, int]] = []
    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)] + [threading.Thread(target=killer, daemon=True)]
    for t in threads:
        t.start()
    while time.monotonic() < stop:
        assert d.proc is not None and d.proc.poll() is None, "quilld crashed"
        rss.append((time.monotonic() - started, rss_bytes(d.proc.pid)))
        time.sleep(1)
    for t in threads[:CLIENTS]:
        t.join(300)
        assert not t.is_alive(), "a client hung"

    assert d.proc is not None and d.proc.poll() is None, "quilld crashed"
    assert wait_for(lambda: firmware_pid(d), 30)
    final = Client(d.port, auth)
    assert final.call(sign) == expected["sign"]          # the device is back and signs the same
    final.close()
    warm = [r for t, r in rss if t >= SECONDS * 0.25]
    total = sum(counts.values())
    print(f"\nsoak {SECONDS:.0f} s, {CLIENTS} clients: {total} requests ({dict(counts)}), "
          f"{total / SECONDS:.0f}/s; device killed {kills[0]} times; signing calls answered with a device "
          f"error: {sum(device_errors.values())} {dict(device_errors)}; wrong answers: {len(wrong)}; "
          f"RSS start {rss[0][1] / MB:.1f} MB, after warm-up min {min(warm) / MB:.1f} / max {max(warm) / MB:.1f} MB, "
          f"end {rss[-1][1] / MB:.1f} MB")
    assert wrong == []
    assert kills[0] >= 1 and sum(device_errors.values()) >= 1, "no signing call met a kill"
    assert max(warm) - min(warm) < 30 * MB, "RSS is not flat"
