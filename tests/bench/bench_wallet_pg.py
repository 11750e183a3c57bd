"""Wallet calls with the wallets in SQLite and in PostgreSQL (-store=postgresql://, docs/postgresql.md),
beside the real Bitcoin Core, in one run: the same chain and descriptors as bench_wallet_core (a
watch-only wpkh wallet of n transactions), two quilld following one Core, one per store.

    .venv/bin/python -m tests.bench.bench_wallet_pg [sizes...] [--core-max N]
        (default 100000 1000000; Core holds the wallets of at most --core-max transactions, 100000)

For each size: the import's rescan on each store, then listsinceblock(""), a page of
listtransactions (100 entries from the middle), getbalances and listunspent, each the best of
three calls over HTTP (one call above 100,000 transactions: a listing of a million takes minutes),
Core's and both Quills' alternating round by round. Core's chain and its wallets are built once
and cached in ~/.cache/quill/bench/ (building a million payments takes most of an hour); Quill's
imports are what is measured, so they are made each run. The PostgreSQL server is a throwaway
cluster on this machine (tests/kit/postgres.py: fsync off, as in the tests), so the figures are
the store's query and round-trip costs, not a disk's. The load average (1 min) is printed with
each size's rows: the machine may be shared.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from quill.chain.upstream import UpstreamRPC
from tests.bench import bench_wallet_core
from tests.follow.corekit import wait_for
from tests.kit import postgres
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

AUTH = ("-rpcuser=bench", "-rpcpassword=bench")
PAGE = 100
CORE_ARGS = ("-blockfilterindex=1", "-maxmempool=1000", "-unsafesqlitesync=1")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quill" / "bench"
ONE_CALL_ABOVE = 100_000
# the wallet tables copied as they are (the meta table's values go to their typed columns)
COPIED_TABLES = {
    "descriptors": 'id, "desc", timestamp, range_start, range_end, next_index, active, internal, output_type',
    "scripts": "script, desc_id, idx",
    "addrbook": "address, label, purpose",
    "txs": "txid, seq, raw, coinbase, state, abandoned, block_hash, block_height, block_index, block_time, "
           "time_received, time_smart",
    "txouts": "txid, n, value, script",
    "spends": "prev_txid, prev_n, txid",
    "tx_values": "txid, key, value",
}


def copy_wallet(sqlite_file: Path, database: str, name: str) -> float:
    """The SQLite wallet file's rows written into wallet `name`'s schema in the PostgreSQL store,
    with COPY (the wallet exists there, created and unloaded): how a wallet too big for this
    machine's rescan on PostgreSQL (one round trip per statement) is put there, the same rows the
    SQLite quilld's rescan wrote. Returns the seconds taken."""
    import psycopg
    t = time.monotonic()
    source = sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True)
    with psycopg.connect(database) as pg:
        wallet_id = pg.execute("SELECT id FROM quill_wallets WHERE name=%s", (name,)).fetchone()[0]
        pg.execute(f"SET search_path TO wallet_{wallet_id}")
        for table, columns in COPIED_TABLES.items():
            pg.execute(f"TRUNCATE {table}")
            with pg.cursor().copy(f"COPY {table}({columns}) FROM STDIN") as copy:
                for row in source.execute(f"SELECT {columns} FROM {table}"):
                    copy.write_row(row)
        pg.execute("DELETE FROM meta WHERE key <> 'schema_version'")
        for key, value in source.execute("SELECT key, value FROM meta WHERE key <> 'schema_version'"):
            columns = (value, None, None) if isinstance(value, int) else \
                (None, value, None) if isinstance(value, str) else (None, None, value)
            pg.execute("INSERT INTO meta(key, int_value, text_value, blob_value) VALUES(%s, %s, %s, %s)",
                       (key, *columns))
    source.close()
    return time.monotonic() - t


def best_of(calls, repeat: int = 3) -> list[float]:
    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for i, fn in enumerate(calls):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def cached_core(sizes: list[int], core_sizes: list[int], workdir: Path) -> tuple[BitcoinD, dict[int, str]]:
    """Core with the chain of `sizes` (bench_wallet_core.build) and the wallets of `core_sizes`
    imported: from the cache when it has them."""
    binary = BitcoinD(workdir / "probe").binary
    key = hashlib.sha256(json.dumps([sizes, core_sizes, bench_wallet_core.FAN, bench_wallet_core.PAYMENTS_PER_BLOCK,
                                     str(binary), binary.stat().st_mtime_ns]).encode()).hexdigest()[:16]
    cached = CACHE / f"wallet-pg-{key}"
    if not (cached / "descriptors.json").exists():
        shutil.rmtree(cached, ignore_errors=True)
        build = workdir / "build"
        with BitcoinD(build / "core", *CORE_ARGS) as core:
            t = time.monotonic()
            descs = bench_wallet_core.build(core, sizes)
            print(f"chain built in {time.monotonic() - t:.0f} s ({core.rpc('getblockcount')} blocks)", flush=True)
            for n in core_sizes:
                t = time.monotonic()
                core.rpc("createwallet", f"w{n}", True, True)
                core.rpc("importdescriptors", [{"desc": descs[n], "timestamp": 0, "range": [0, 999]}],
                         wallet=f"w{n}", timeout=7200)
                print(f"Core imported w{n} in {time.monotonic() - t:.0f} s", flush=True)
        (build / "descriptors.json").write_text(json.dumps(descs))
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(build), str(cached))
    shutil.copytree(cached / "core", workdir / "core")
    descs = {int(n): d for n, d in json.loads((cached / "descriptors.json").read_text()).items()}
    core = BitcoinD(workdir / "core", *CORE_ARGS).start(timeout=600)
    for n in core_sizes:
        core.rpc("loadwallet", f"w{n}", timeout=600)
    return core, descs


HEADS = ("wallet txs", "call", "Core s", "Quill SQLite s", "Quill PostgreSQL s", "PostgreSQL/SQLite")


def table(rows: list) -> str:
    """The rows (size, call, Core's, SQLite's and PostgreSQL's seconds; a note when the times are
    None) as the table docs/postgresql.md shows."""
    width = max(len(r[1]) for r in rows)
    lines = [f"{HEADS[0]:>10} | {HEADS[1]:<{width}} | " + " | ".join(f"{h:>14}" for h in HEADS[2:])]
    for n, label, core_s, sqlite_s, pg_s in rows:
        if sqlite_s is None:
            lines.append(f"{n:>10} | {label}")
            continue
        texts = ["-" if v != v else f"{v:.4f}" for v in (core_s, sqlite_s, pg_s)]
        ratio = "-" if pg_s != pg_s else f"{pg_s / sqlite_s:.2f}"
        lines.append(f"{n:>10} | {label:<{width}} | " + " | ".join(f"{t:>14}" for t in texts) + f" | {ratio:>14}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--core-max", type=int, default=100_000,
                        help="Core holds the wallets of at most this many transactions")
    parser.add_argument("--pg-rescan-max", type=int, default=100_000,
                        help="above this many transactions the PostgreSQL wallet is the SQLite quilld's rows "
                             "copied (COPY), not a rescan of its own")
    args = parser.parse_args()
    sizes = args.sizes
    core_sizes = [n for n in sizes if n <= args.core_max]
    tmp = Path(tempfile.mkdtemp(prefix="bench_wallet_pg"))
    cluster = postgres.Cluster()
    quills: list[QuillDaemon] = []
    core = None
    try:
        core, descs = cached_core(sizes, core_sizes, tmp)
        pg_url = cluster.create_database("bench")
        source = f"-chainsource={core.url_for_follower}"
        quills = [QuillDaemon(tmp / "sqlite", source, *AUTH, "-store=sqlite").start(),
                  QuillDaemon(tmp / "pg", source, *AUTH, f"-store={pg_url}").start()]
        best = core.rpc("getbestblockhash")
        t = time.monotonic()
        for q in quills:
            wait_for(lambda q=q: q.rpc("getbestblockhash") == best, timeout=3600)
        print(f"both quilld followed the chain in {time.monotonic() - t:.0f} s", flush=True)
        rows = []
        for n, desc in descs.items():
            clients = [UpstreamRPC(f"{core.url_for_follower}/wallet/w{n}", timeout=7200)] if n in core_sizes else []
            rescans = []
            for q in quills:
                q.rpc("createwallet", f"w{n}", True, True)
                client = UpstreamRPC(f"http://bench:bench@127.0.0.1:{q.port}/wallet/w{n}", timeout=7200)
                clients.append(client)
                if q is quills[1] and n > args.pg_rescan_max:
                    q.rpc("unloadwallet", f"w{n}")
                    copied = copy_wallet(tmp / "sqlite" / "regtest" / "wallets" / f"w{n}" / "wallet.sqlite",
                                         pg_url, f"w{n}")
                    t = time.monotonic()
                    q.rpc("loadwallet", f"w{n}", timeout=7200)
                    print(f"w{n} copied into PostgreSQL in {copied:.1f} s, loaded in {time.monotonic() - t:.1f} s",
                          flush=True)
                    rescans.append(float("nan"))
                    continue
                t = time.monotonic()
                client.call("importdescriptors", [{"desc": desc, "timestamp": 0, "range": [0, 999]}])
                rescans.append(time.monotonic() - t)
                print(f"w{n} imported in {rescans[-1]:.1f} s (load {os.getloadavg()[0]:.2f})", flush=True)
            answers = [len(c.call("listsinceblock", "")["transactions"]) for c in clients]
            assert answers == [n] * len(clients), answers
            rows.append((n, "import (rescan)", float("nan"), *rescans))
            calls = {
                'listsinceblock("")': ("listsinceblock", ""),
                f"listtransactions {PAGE} from {n // 2}": ("listtransactions", "*", PAGE, n // 2),
                "getbalances": ("getbalances",),
                "listunspent": ("listunspent",),
            }
            repeat = 1 if n > ONE_CALL_ABOVE else 3
            for label, call in calls.items():
                times = best_of([lambda c=c, call=call: c.call(*call) for c in clients], repeat)
                if n not in core_sizes:
                    times.insert(0, float("nan"))
                rows.append((n, label, *times))
            rows.append((n, f"load average (1 min) {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores", None, None, None))
            print(table([r for r in rows if r[0] == n]), flush=True)     # each size's rows as they come
        print("\n" + table(rows))
    finally:
        for q in quills:
            q.stop()
        if core is not None:
            core.stop()
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)      # a million's chain and wallets: about 1 GB


if __name__ == "__main__":
    main()
