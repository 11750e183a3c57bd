"""Benchmark: quilld's JSON-RPC transport against a bare HTTP server, side by side.

For `uptime`, `echo` and `decoderawtransaction`, with 1, 8 and 64 concurrent
keep-alive clients: requests/s, p50 and p99 latency, the server's CPU time per
request (user + system, from /proc), and the throughput ratio to the bare server
(the floor: an HTTP/1.1 keep-alive responder in asyncio with no JSON-RPC, auth
or worker pool). quilld runs on uvloop, so the same bare server is measured on
uvloop too (`bare uv`, and the ratio to it, `/uv`); the goal is judged against
the bare server on asyncio's own loop, as the issue defines the floor. Each cell
alternates the three servers `--rounds` times and keeps each one's best round, so
that load from other processes on the machine weighs on all alike. Goal
(issue 15): ratio >= 0.8 at 64 clients, >= 0.7 at 1.

    .venv/bin/python -m tests.bench.bench_rpc [--seconds 2] [--rounds 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

from tests.kit.rpc_daemon import QuillDaemon, free_port  # noqa: E402

CLIENTS = tuple(int(c) for c in os.environ.get("BENCH_CLIENTS", "1,8,64").split(","))
# A one-input, two-output segwit transaction (the decode tests' P2WPKH spend).
TX_HEX = ("02000000000101" + "11" * 32 + "00000000" + "00" + "fdffffff" + "02"
          + "e803000000000000" + "160014" + "22" * 20 + "d007000000000000" + "160014" + "33" * 20
          + "02" + "47" + "30440220" + "44" * 32 + "0220" + "55" * 32 + "01" + "21" + "02" + "66" * 32
          + "00000000")
CALLS = {
    "uptime": '{"jsonrpc":"1.0","id":"b","method":"uptime","params":[]}',
    "echo": '{"jsonrpc":"1.0","id":"b","method":"echo","params":["hello",1,[true,null]]}',
    "decoderawtransaction": '{"jsonrpc":"1.0","id":"b","method":"decoderawtransaction","params":["%s"]}' % TX_HEX,
}


def cpu_seconds(pid):
    """The CPU time of `pid` and of its child processes (quilld's -rpcworkers)."""
    total = 0
    for one in (pid, *children(pid)):
        fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def children(pid):
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        found += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
    return [int(c) for c in found]


def load(port, pid, auth, body, conns, seconds):
    cpu_before = cpu_seconds(pid)
    out = subprocess.run([sys.executable, str(HERE / "loadgen.py"), "127.0.0.1", str(port), auth, body,
                          str(conns), str(seconds)], capture_output=True, text=True, check=True)
    cpu = cpu_seconds(pid) - cpu_before
    result = json.loads(out.stdout)
    lat = sorted(result["latencies_us"])
    return {"rps": result["requests"] / result["seconds"], "cpu_us": cpu / max(1, result["requests"]) * 1e6,
            "p50": lat[len(lat) // 2] / 1000, "p99": lat[int(len(lat) * 0.99)] / 1000}


def best(runs):
    return max(runs, key=lambda r: r["rps"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    rows = []
    bares = {}
    try:
        for loop in ("asyncio", "uvloop"):
            port = free_port()
            bare = subprocess.Popen([sys.executable, str(HERE / "bare_http_server.py"), str(port),
                                     *(["uvloop"] if loop == "uvloop" else [])], stdout=subprocess.PIPE, text=True)
            bares[loop] = (port, bare)
            bare.stdout.readline()
        with tempfile.TemporaryDirectory() as tmp, QuillDaemon(tmp, "-rpcworkqueue=256") as d:
            for method, body in CALLS.items():
                for conns in CLIENTS:
                    runs = {"quilld": [], "asyncio": [], "uvloop": []}
                    for _ in range(opts.rounds):
                        runs["quilld"].append(load(d.port, d.proc.pid, d.auth_header(), body, conns, opts.seconds))
                        for loop, (port, bare) in bares.items():
                            runs[loop].append(load(port, bare.pid, "Basic eDp5", body, conns, opts.seconds))
                    rows.append((method, conns, best(runs["quilld"]), best(runs["asyncio"]), best(runs["uvloop"])))
    finally:
        for _, bare in bares.values():
            bare.terminate()
            bare.wait()
    print(f"{'method':20} {'clients':>7} | {'quilld req/s':>12} {'p50 ms':>7} {'p99 ms':>7} {'cpu us':>7} | "
          f"{'bare req/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'cpu us':>7} | {'ratio':>5} | "
          f"{'bare uv req/s':>13} {'cpu us':>7} | {'/uv':>5}")
    print("-" * 146)
    for method, conns, q, b, u in rows:
        print(f"{method:20} {conns:>7} | {q['rps']:>12.0f} {q['p50']:>7.2f} {q['p99']:>7.2f} {q['cpu_us']:>7.1f} | "
              f"{b['rps']:>10.0f} {b['p50']:>7.2f} {b['p99']:>7.2f} {b['cpu_us']:>7.1f} | "
              f"{q['rps'] / b['rps']:>5.2f} | {u['rps']:>13.0f} {u['cpu_us']:>7.1f} | {q['rps'] / u['rps']:>5.2f}")
    print(f"\n(best of {opts.rounds} alternating {opts.seconds:g} s runs per cell; load generator in a separate "
          "process; cpu us: the server's user+system CPU per request)")


if __name__ == "__main__":
    main()
