"""decoderawtransaction throughput, quilld beside Bitcoin Core 31.99 in one run (issue 28 item 4:
quilld's requests per second >= Core's at 8 and 64 clients).

    .venv/bin/python -m tests.bench.bench_decode_throughput [--seconds 2] [--rounds 3] [--clients 8,64]
        [--workers <cores>]

Transactions: 1-in/2-out and 5-in/5-out P2WPKH spends, and a 500-input/2-output one. Both servers
run with -rpcworkqueue=256 and their default -rpcthreads; quilld runs twice, with its worker
processes (-rpcworkers=--workers, one per core by default: they accept the connections and answer
the decodes themselves, rpc/stateless), and with none (-rpcworkers=0, the default: every call on
its event loop), and a third time with -rpcworkers=0 on the .py files of the modules
mypyc compiled at install (QUILL_PURE_PYTHON=1, quill.compiled: 'pure'). The load generator
(loadgen.py, keep-alive clients in a separate process) is the same for all. Each cell alternates
the servers `--rounds` times (the order flips every round) and keeps each one's best round, so that
load from other processes weighs on all alike. Printed: requests/s, p50 ms, the main process's CPU
per request (its workers' included), the ratios to Core (>= 1.0 is the goal) and the load
average before and after.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import tempfile
from pathlib import Path

from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.bench.bench_rpc import load
from tests.kit.bitcoind import RPC_PASSWORD, RPC_USER, BitcoinD
from tests.kit.rpc_daemon import QuillDaemon


def p2wpkh_tx(n_in: int, n_out: int) -> str:
    sig = bytes.fromhex("30440220" + "5a" * 32 + "0220" + "3c" * 32 + "01")
    vin = [TxIn(OutPoint(i.to_bytes(4, "little") * 8, i % 3), b"", 0xFFFFFFFD,
                [sig, b"\x02" + i.to_bytes(4, "big") * 8]) for i in range(n_in)]
    vout = [TxOut(10_000 + i, b"\x00\x14" + i.to_bytes(4, "big") * 5) for i in range(n_out)]
    return Transaction(2, vin, vout, 0).serialize().hex()


CASES = (("1-in/2-out", (1, 2)), ("5-in/5-out", (5, 5)), ("500-in/2-out", (500, 2)))


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default="8,64")
    parser.add_argument("--cases", default=",".join(label for label, _ in CASES))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="quilld's -rpcworkers")
    opts = parser.parse_args()
    clients = [int(c) for c in opts.clients.split(",")]
    wanted = opts.cases.split(",")
    print(f"load average before: {loadavg()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, \
            BitcoinD(Path(tmp) / "core", "-rpcworkqueue=256") as core, \
            QuillDaemon(Path(tmp) / "quill", "-rpcworkqueue=256", f"-rpcworkers={opts.workers}",
                        f"-rpcuser={RPC_USER}",
                        f"-rpcpassword={RPC_PASSWORD}") as quill, \
            QuillDaemon(Path(tmp) / "quill0", "-rpcworkqueue=256", "-rpcworkers=0", f"-rpcuser={RPC_USER}",
                        f"-rpcpassword={RPC_PASSWORD}") as loop_only, \
            QuillDaemon(Path(tmp) / "quillpy", "-rpcworkqueue=256", "-rpcworkers=0", f"-rpcuser={RPC_USER}",
                        f"-rpcpassword={RPC_PASSWORD}", env=dict(os.environ, QUILL_PURE_PYTHON="1")) as pure:
        core_auth = "Basic " + base64.b64encode(f"{RPC_USER}:{RPC_PASSWORD}".encode()).decode()
        assert core.proc is not None
        servers = {"quilld": (quill.port, quill.proc.pid, quill.auth_header()),
                   "quilld0": (loop_only.port, loop_only.proc.pid, loop_only.auth_header()),
                   "quilld0-py": (pure.port, pure.proc.pid, pure.auth_header()),
                   "bitcoind": (core.rpc_port, core.proc.pid, core_auth)}
        for label, (n_in, n_out) in CASES:
            if label not in wanted:
                continue
            body_path = Path(tmp) / f"{n_in}-{n_out}.json"
            body_path.write_text(json.dumps({"jsonrpc": "1.0", "id": "b", "method": "decoderawtransaction",
                                             "params": [p2wpkh_tx(n_in, n_out)]}))
            body = f"@{body_path}"  # loadgen reads it: a 500-input body is too long for a command line
            for conns in clients:
                runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
                for n in range(opts.rounds):
                    order = list(servers) if n % 2 == 0 else list(reversed(servers))
                    for name in order:
                        port, pid, auth = servers[name]
                        runs[name].append(load(port, pid, auth, body, conns, opts.seconds))
                best = {name: max(r, key=lambda x: x["rps"]) for name, r in runs.items()}
                rows.append((label, conns, best["quilld"], best["quilld0"], best["quilld0-py"], best["bitcoind"],
                             loadavg()))
                q, z, c = best["quilld"], best["quilld0"], best["bitcoind"]
                print(f"  {label} {conns} clients: quilld {q['rps']:.0f}/s, without workers {z['rps']:.0f}/s, "
                      f"bitcoind {c['rps']:.0f}/s ({q['rps'] / c['rps']:.2f}x), load {loadavg()}", flush=True)
    print()
    print(f"{'transaction':14} {'clients':>7} | {'quilld req/s':>12} {'p50 ms':>7} {'cpu us':>8} | "
          f"{'no workers':>10} {'cpu us':>8} | {'pure Py':>8} {'cpu us':>8} | {'Core req/s':>10} {'p50 ms':>7} "
          f"{'cpu us':>8} | {'ratio':>5} {'no wk':>5} {'pure':>5} | load average")
    print("-" * 160)
    for label, conns, q, z, p, c, load_after in rows:
        print(f"{label:14} {conns:>7} | {q['rps']:>12.0f} {q['p50']:>7.2f} {q['cpu_us']:>8.1f} | "
              f"{z['rps']:>10.0f} {z['cpu_us']:>8.1f} | {p['rps']:>8.0f} {p['cpu_us']:>8.1f} | "
              f"{c['rps']:>10.0f} {c['p50']:>7.2f} {c['cpu_us']:>8.1f} | "
              f"{q['rps'] / c['rps']:>5.2f} {z['rps'] / c['rps']:>5.2f} {p['rps'] / c['rps']:>5.2f} | {load_after}")
    print(f"\n(best of {opts.rounds} alternating {opts.seconds:g} s runs per cell; ratio = quilld/Core "
          f"requests per second, goal >= 1.0, 'no wk': quilld -rpcworkers=0, 'pure': the same without its "
          f"compiled modules; load average after: {loadavg()})")


if __name__ == "__main__":
    main()
