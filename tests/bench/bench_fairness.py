"""Benchmark: one good client's `uptime` latency and quilld's RSS before, during and after
each attack of issue 24 (loopback only, every loop bounded):

* 8 parallel authenticated 30 MB `echo` bodies (two rounds each);
* four 100,000-element batches, one after another;
* 500 clients that send a wrong password and close at once (then: how long the next
  legitimate typo waits for its 401);
* a slowloris of 800 connections trickling header lines.

The good client (tests/bench/fairness_probe.py, its own process) calls `uptime` on a fresh
connection every 10 ms. p50/p99 are over its calls in each phase; RSS is quilld's VmRSS at the
end of "before" and "after" (1 s after the attack ended) and its peak "during" (which lasts the
attack, and at least as long as the other phases).
Goal (issue 24): p99 < 100 ms during every attack; RSS after within 5 MB of before.

    .venv/bin/python -m tests.bench.bench_fairness [--phase-seconds 2] [--attack echo ...]
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.hostile.netkit import basic, head, post, read_reply, rss_bytes
from tests.kit.rpc_daemon import QuillDaemon

MB = 1 << 20
AUTH = basic("u", "p")


def echo_30mb(port: int) -> dict[str, int]:
    body = b'{"id":1,"method":"echo","params":["' + b"a" * (30 * MB - 40) + b'"]}'
    statuses: dict[str, int] = {}

    def client() -> None:
        for _ in range(2):
            try:
                status = post(port, body, AUTH, timeout=120)[0]
            except OSError as e:
                status = type(e).__name__  # type: ignore[assignment]
            statuses[str(status)] = statuses.get(str(status), 0) + 1

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return statuses


def batches_100k(port: int) -> dict[str, int]:
    body = ("[" + ",".join('{"jsonrpc":"2.0","id":%d,"method":"uptime"}' % i for i in range(100_000))
            + "]").encode()
    statuses: dict[str, int] = {}
    for _ in range(4):
        status = str(post(port, body, AUTH, timeout=300)[0])
        statuses[status] = statuses.get(status, 0) + 1
    return statuses


def wrong_password_then_close(port: int) -> dict[str, int]:
    request = head(27, basic("u", "wrong")) + b'{"id":1,"method":"uptime"}'
    for _ in range(500):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(request)
    return {"sent": 500}


def slowloris(port: int, connections: int = 800, seconds: float = 6.0) -> dict[str, int]:
    socks = []
    try:
        for _ in range(connections):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        deadline = time.monotonic() + seconds
        lines = 0
        while time.monotonic() < deadline:
            for s in socks:
                s.sendall(b"X-a: b\r\n")
            lines += 1
            time.sleep(1.0)
        return {"connections": len(socks), "lines each": lines}
    finally:
        for s in socks:
            s.close()


def typo_wait(port: int) -> float:
    """Seconds until the next legitimate wrong password is answered (401)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.sendall(head(27, basic("u", "typo")) + b'{"id":1,"method":"uptime"}')
        assert read_reply(s)[0] == 401
    return time.monotonic() - started


class Probe:
    def __init__(self, port: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.bench.fairness_probe", str(port), AUTH],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def stop(self) -> dict[str, Any]:
        out, _ = self.proc.communicate("", timeout=120)
        return json.loads(out)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def measure(pid: int, port: int, seconds: float, attack: Callable[[], Any] | None) -> dict[str, Any]:
    probe = Probe(port)
    peak = [rss_bytes(pid)]
    result: Any = None
    started = time.monotonic()
    if attack is None:
        time.sleep(seconds)
    else:
        outcome: list[Any] = []
        runner = threading.Thread(target=lambda: outcome.append(attack()))
        runner.start()
        while runner.is_alive():
            peak[0] = max(peak[0], rss_bytes(pid))
            time.sleep(0.02)
        runner.join()
        result = outcome[0] if outcome else "attack failed"
        while time.monotonic() - started < seconds:   # a quick attack: its aftermath counts as "during"
            peak[0] = max(peak[0], rss_bytes(pid))
            time.sleep(0.02)
    elapsed = time.monotonic() - started
    probed = probe.stop()
    lat = probed["latencies_ms"]
    return {"p50": percentile(lat, 0.5), "p99": percentile(lat, 0.99), "max": max(lat, default=float("nan")),
            "n": len(lat), "failed": probed["failed"], "rss": rss_bytes(pid), "peak": peak[0],
            "seconds": elapsed, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase-seconds", type=float, default=2.0)
    parser.add_argument("--attack", action="append", choices=("echo", "batch", "password", "slowloris"),
                        help="run only these attacks (repeatable; default: all four)")
    opts = parser.parse_args()
    rows = []
    notes = []
    with tempfile.TemporaryDirectory() as tmp, QuillDaemon(tmp, "-rpcuser=u", "-rpcpassword=p") as d:
        pid, port = d.proc.pid, d.port
        for _ in range(50):
            d.rpc("uptime")
        attacks: list[tuple[str, str, Callable[[], Any]]] = [
            ("echo", "8 x 30 MB echo", lambda: echo_30mb(port)),
            ("batch", "4 x 100k batch", lambda: batches_100k(port)),
            ("password", "500 wrong pw+close", lambda: wrong_password_then_close(port)),
            ("slowloris", "slowloris 800", lambda: slowloris(port)),
        ]
        for key, name, attack in attacks:
            if opts.attack and key not in opts.attack:
                continue
            time.sleep(1.0)
            before = measure(pid, port, opts.phase_seconds, None)
            during = measure(pid, port, opts.phase_seconds, attack)
            if name.startswith("500"):
                notes.append(f"the next legitimate wrong password after the 500: 401 in {typo_wait(port):.2f} s")
            time.sleep(1.0)
            after = measure(pid, port, opts.phase_seconds, None)
            rows.append((name, before, during, after))
    print(f"{'attack':20} {'phase':7} | {'p50 ms':>7} {'p99 ms':>7} {'max ms':>8} {'calls':>6} {'failed':>6} | "
          f"{'RSS MB':>7} | attack outcome")
    print("-" * 110)
    for name, before, during, after in rows:
        for phase, m in (("before", before), ("during", during), ("after", after)):
            rss = m["peak"] if phase == "during" else m["rss"]
            outcome = f"{m['seconds']:.1f} s, {m['result']}" if phase == "during" else ""
            print(f"{name if phase == 'before' else '':20} {phase:7} | {m['p50']:>7.1f} {m['p99']:>7.1f} "
                  f"{m['max']:>8.1f} {m['n']:>6} {m['failed']:>6} | {rss / MB:>7.1f} | {outcome}")
    print("\n(RSS: at the end of before/after, the peak during; the good client calls uptime on a fresh "
          "connection every 10 ms)")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
