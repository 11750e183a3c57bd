"""Wallet calls with the wallets in SQLite and in PostgreSQL (-store=postgresql://, docs/postgresql.md),
beside the real Bitcoin Core, in one run: the same chain and descriptors as bench_wallet_core (a
watch-only wpkh wallet of n transactions), two quilld following one Core, one per store.

    .venv/bin/python -m tests.bench.bench_wallet_pg [sizes...]      (default 1000 10000)

For each size: the import's rescan on each store, then listsinceblock(""), a page of
listtransactions (100 entries from the middle), getbalances and listunspent, each the best of
three calls over HTTP, Core's and both Quills' alternating round by round. The PostgreSQL server
is a throwaway cluster on this machine (tests/kit/postgres.py: fsync off, as in the tests), so the
figures are the store's query and round-trip costs, not a disk's.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from quill.chain.upstream import UpstreamRPC
from tests.bench.bench_wallet_core import watched_wallets
from tests.follow.corekit import wait_for
from tests.kit import postgres
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

AUTH = ("-rpcuser=bench", "-rpcpassword=bench")
PAGE = 100


def best_of(calls, repeat: int = 3) -> list[float]:
    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for i, fn in enumerate(calls):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000]
    tmp = Path(tempfile.mkdtemp(prefix="bench_wallet_pg"))
    core = BitcoinD(tmp / "core", "-blockfilterindex=1", "-maxmempool=1000", "-unsafesqlitesync=1").start()
    cluster = postgres.Cluster()
    quills: list[QuillDaemon] = []
    try:
        descs = watched_wallets(core, sizes)
        source = f"-chainsource={core.url_for_follower}"
        quills = [QuillDaemon(tmp / "sqlite", source, *AUTH, "-store=sqlite").start(),
                  QuillDaemon(tmp / "pg", source, *AUTH, f"-store={cluster.create_database('bench')}").start()]
        best = core.rpc("getbestblockhash")
        for q in quills:
            wait_for(lambda q=q: q.rpc("getbestblockhash") == best, timeout=600)
        heads = ("wallet txs", "call", "Core s", "Quill SQLite s", "Quill PostgreSQL s", "PostgreSQL/SQLite")
        rows = []
        loads = [os.getloadavg()]
        for n, desc in descs.items():
            clients = [UpstreamRPC(f"{core.url_for_follower}/wallet/w{n}", timeout=3600)]
            rescans = []
            for q in quills:
                q.rpc("createwallet", f"w{n}", True, True)
                client = UpstreamRPC(f"http://bench:bench@127.0.0.1:{q.port}/wallet/w{n}", timeout=3600)
                t = time.monotonic()
                client.call("importdescriptors", [{"desc": desc, "timestamp": 0, "range": [0, 999]}])
                rescans.append(time.monotonic() - t)
                clients.append(client)
            answers = [len(c.call("listsinceblock", "")["transactions"]) for c in clients]
            assert answers == [n, n, n], answers
            rows.append((n, "import (rescan)", float("nan"), *rescans))
            calls = {
                'listsinceblock("")': ("listsinceblock", ""),
                f"listtransactions {PAGE} from {n // 2}": ("listtransactions", "*", PAGE, n // 2),
                "getbalances": ("getbalances",),
                "listunspent": ("listunspent",),
            }
            for label, call in calls.items():
                times = best_of([lambda c=c, call=call: c.call(*call) for c in clients])
                rows.append((n, label, *times))
            loads.append(os.getloadavg())
        width = max(len(r[1]) for r in rows)
        print(f"{heads[0]:>10} | {heads[1]:<{width}} | " + " | ".join(f"{h:>14}" for h in heads[2:]))
        for n, label, core_s, sqlite_s, pg_s in rows:
            core_text = "-" if core_s != core_s else f"{core_s:.4f}"
            print(f"{n:>10} | {label:<{width}} | {core_text:>14} | {sqlite_s:>14.4f} | {pg_s:>14.4f} | "
                  f"{pg_s / sqlite_s:>14.2f}")
        print("load average (1 min) during the run: " + ", ".join(f"{load[0]:.2f}" for load in loads))
    finally:
        for q in quills:
            q.stop()
        core.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
