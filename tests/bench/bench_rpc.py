"""Benchmark: quilld's JSON-RPC transport against a bare HTTP server.

For `uptime` and `echo`, with 1, 8 and 64 concurrent keep-alive clients:
requests/s, p50 and p99 latency, and the ratio to the bare server (the floor:
an HTTP/1.1 keep-alive responder with no JSON-RPC, auth or worker pool).

    .venv/bin/python -m tests.bench.bench_rpc [--seconds 3]
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

from tests.kit.rpc_daemon import QuillDaemon, free_port  # noqa: E402

CLIENTS = (1, 8, 64)
CALLS = {
    "uptime": '{"jsonrpc":"1.0","id":"b","method":"uptime","params":[]}',
    "echo": '{"jsonrpc":"1.0","id":"b","method":"echo","params":["hello",1,[true,null]]}',
}


def load(port, auth, body, conns, seconds):
    out = subprocess.run([sys.executable, str(HERE / "loadgen.py"), "127.0.0.1", str(port), auth, body,
                          str(conns), str(seconds)], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    lat = sorted(result["latencies_us"])
    return {"rps": result["requests"] / result["seconds"],
            "p50": lat[len(lat) // 2] / 1000, "p99": lat[int(len(lat) * 0.99)] / 1000}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    opts = parser.parse_args()
    rows = []
    bare_port = free_port()
    bare = subprocess.Popen([sys.executable, str(HERE / "bare_http_server.py"), str(bare_port)],
                            stdout=subprocess.PIPE, text=True)
    bare.stdout.readline()
    try:
        with tempfile.TemporaryDirectory() as tmp, QuillDaemon(tmp, "-rpcworkqueue=256") as d:
            for method, body in CALLS.items():
                for conns in CLIENTS:
                    q = load(d.port, d.auth_header(), body, conns, opts.seconds)
                    b = load(bare_port, "Basic eDp5", body, conns, opts.seconds)
                    rows.append((method, conns, q, b))
    finally:
        bare.terminate()
        bare.wait()
    print(f"{'method':8} {'clients':>7} | {'quilld req/s':>12} {'p50 ms':>7} {'p99 ms':>7} | "
          f"{'bare req/s':>10} {'p50 ms':>7} {'p99 ms':>7} | {'ratio':>5}")
    print("-" * 88)
    for method, conns, q, b in rows:
        print(f"{method:8} {conns:>7} | {q['rps']:>12.0f} {q['p50']:>7.2f} {q['p99']:>7.2f} | "
              f"{b['rps']:>10.0f} {b['p50']:>7.2f} {b['p99']:>7.2f} | {q['rps'] / b['rps']:>5.2f}")
    print(f"\n(one {opts.seconds:g} s run per cell; load generator in a separate process; "
          "figures vary by ±10-30 % with machine load)")


if __name__ == "__main__":
    main()
