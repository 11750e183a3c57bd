"""Rescanning mainnet-sized blocks served by the real Bitcoin Core, and the projection for a wallet born in 2020.

    .venv/bin/python -m tests.bench.bench_follow_mainnet [blocks]     (default 40 mainnet-sized blocks)

The blocks are made here and given to Core with submitblock (tests.bench.mainnet_blocks: ~3,000
transactions, ~6,400 inputs of five script shapes, ~7,600 outputs, every output script unique,
~1.5 MB, three payments per block to the watched wallet). Core runs with -blockfilterindex and -rest.

Measured, per block (medians or totals over the blocks, on this 2-core machine, Core and Quill
sharing it):
  * Core serving a block: `getblock <hash> 0` by JSON-RPC, and /rest/block/<hash>.bin.
  * Quill reading a block: JSON + hex as before (json.loads) and now (UpstreamRPC.raw_blocks' find),
    a full parse with the GC on and paused, quill.chain.scan (the wallet's transactions only), and
    Wallet.block_connected for a block that pays the wallet.
  * The real rescan path, end to end: WalletManager.rescan over a ChainService following Core
    (blocks fetched ahead on FETCH_CONNECTIONS connections, scanned, given to a SQLite wallet),
    for wallets of 1,000 and 100,000 scripts, by REST and by JSON-RPC, on blocks that do not pay the
    wallet (what almost every block of a rescan is) and on blocks that do.
  * Block filters: Core's scanblocks per block over the range, for scripts no block pays (its fixed
    cost per call measured apart: parsing the descriptors), and Quill's own BIP158 matcher
    (getblockfilter, decode, SipHash of every script) per block.

Projection for a 2020 birthday: 300,000 mainnet blocks, of which MATCHED pay the wallet (an
assumption; Core's false positives are removed by scanblocks). Without filters every block is read
(at the non-paying rate) and MATCHED are connected (at the paying rate's extra). With filters, the
filters of all blocks are matched (at the better of scanblocks and Quill's matcher) and MATCHED blocks
read. Quill's choice: the follower's own rule (Follower.filter_matches: above FETCH_ALL_SCRIPTS
scripts with REST, read every block). Assumptions named: the blocks here stand for mainnet's (same
size, counts and unique scripts; mainnet's older blocks are smaller, so this errs long); the disk is
warm (Core's block files in the page cache, as after a first read).
"""
from __future__ import annotations

import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from quill.bulk import bulk_gc
from quill.chain import follower as follower_mod
from quill.chain.block import Block
from quill.chain.blockfilter import FilterQuery
from quill.chain.scan import scan_block
from quill.chain.service import ChainService
from quill.chain.upstream import UpstreamRPC
from quill.wallet import store as st
from quill.wallet.descriptors import parse
from quill.wallet.manager import WalletManager
from quill.wallet.wallet import Wallet
from tests.bench.mainnet_blocks import MainnetShapedChain
from tests.kit.bitcoind import BitcoinD

BLOCKS_2020 = 300_000
MATCHED = 5_000


def wallet_with(scripts: list[bytes], path: Path) -> Wallet:
    store = st.Store(str(path), create=True)
    w = Wallet("bench", store, "regtest", keypool=1)
    with store.batch():
        info = w.add_descriptor(parse("raw(00140000000000000000000000000000000000000000)", "regtest"),
                                0, 0, 1, 0, False, False, None)
    for s in scripts:
        w.scripts[s] = [(info.id, 0)]
    return w


def per_block(f: Any, items: list[Any]) -> float:
    """The median time of f(item), in ms."""
    times = []
    for item in items:
        t = time.perf_counter()
        f(item)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    nblocks = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rng = random.Random(16)
    paid = [b"\x00\x14" + rng.randbytes(20) for _ in range(1_000)]       # the builder pays these
    unpaid = [b"\x00\x14" + rng.randbytes(20) for _ in range(100_000)]   # no block pays these
    tmp = Path(tempfile.mkdtemp(prefix="bench_follow_mainnet"))
    core = BitcoinD(tmp / "core", "-blockfilterindex=1", "-rest=1", "-rpcthreads=8").start()
    service = None
    try:
        chain = MainnetShapedChain(core, paid)
        t = time.monotonic()
        chain.build(nblocks)
        built = time.monotonic() - t
        while not core.rpc("getindexinfo")["basic block filter index"]["synced"]:
            time.sleep(0.1)
        rpc = UpstreamRPC(core.url_for_follower, timeout=600)
        first, last = chain.first, chain.last
        hashes = rpc.batch([("getblockhash", h) for h in range(first, last + 1)])
        raws = [rpc.rest_block(h) for h in hashes]
        size = statistics.mean(len(r) for r in raws) / 1e6
        sample = Block.from_bytes(raws[0])
        n_in = sum(len(tx.vin) for tx in sample.txs)
        n_out = sum(len(tx.vout) for tx in sample.txs)
        print(f"{nblocks} mainnet-sized blocks built on Core in {built:.0f} s: {len(sample.txs)} txs, {n_in} inputs, "
              f"{n_out} outputs, {size:.2f} MB per block")

        rows: list[tuple[str, float]] = []
        # -- Core serving blocks
        rows.append(("Core: getblock <hash> 0 (JSON-RPC, one connection)",
                     per_block(lambda h: rpc.raw_blocks([h]), hashes)))
        rows.append(("Core: /rest/block/<hash>.bin (one connection)", per_block(rpc.rest_block, hashes)))
        # -- Quill reading a block
        replies = [json.dumps({"result": r.hex(), "error": None, "id": 0}).encode() for r in raws]
        rows.append(("Quill: JSON + hex, json.loads (before)",
                     per_block(lambda b: bytes.fromhex(json.loads(b)["result"]), replies)))
        from quill.chain.upstream import _hex_results
        rows.append(("Quill: JSON + hex, raw_blocks' find (now)", per_block(lambda b: _hex_results(b, 1), replies)))
        rows.append(("Quill: full parse, GC on", per_block(Block.from_bytes, raws)))
        with bulk_gc():
            rows.append(("Quill: full parse, GC paused", per_block(Block.from_bytes, raws)))
        for n in (1_000, 100_000):
            scripts = frozenset(unpaid[:n])
            with bulk_gc():
                rows.append((f"Quill: scan, {n:,} scripts", per_block(lambda r, s=scripts: scan_block(r, s, set()),
                                                                        raws)))
        w = wallet_with(paid, tmp / "connect.sqlite")
        sparse = [scan_block(r, w.script_set(), w.outpoints) for r in raws]
        heights = iter(range(first, last + 1))
        with bulk_gc():
            rows.append(("Quill: block_connected, block paying the wallet",
                         per_block(lambda b: w.block_connected(b, next(heights)), sparse)))
        w.store.close()
        print("\nper block (median)")
        for label, ms in rows:
            print(f"  {label:<58} {ms:8.2f} ms")

        # -- the real rescan path, end to end
        service = ChainService("regtest", str(tmp / "quill"), core.url_for_follower, poll_interval=0.2).start()
        while service.state.tip is None or service.state.tip.height < last:
            time.sleep(0.1)
        manager = WalletManager(service, "regtest", str(tmp / "quill"))
        e2e: dict[tuple[str, int, str], float] = {}
        for transport in ("REST", "JSON-RPC"):
            service.follower._rest = transport == "REST"
            for n in (1_000, 100_000):
                for pays in ("not paying", "paying"):
                    scripts = (paid + unpaid[:n - 1_000]) if pays == "paying" else unpaid[:n]
                    w = wallet_with(scripts, tmp / f"e2e-{transport}-{n}-{pays}.sqlite")
                    follower_mod_filters = service.follower._filters
                    service.follower._filters = False          # every block read: the path without filters
                    gc.collect()
                    t = time.perf_counter()
                    manager.rescan(w, first, last)
                    e2e[(transport, n, pays)] = (time.perf_counter() - t) / nblocks * 1e3
                    service.follower._filters = follower_mod_filters
                    w.store.close()
        print(f"\nrescan without filters, end to end (WalletManager.rescan, {follower_mod.FETCH_CONNECTIONS} "
              "connections fetching ahead), ms per block")
        print(f"  {'transport':<9} {'scripts':>8} {'not paying':>11} {'paying':>8}")
        for transport in ("REST", "JSON-RPC"):
            for n in (1_000, 100_000):
                print(f"  {transport:<9} {n:>8,} {e2e[(transport, n, 'not paying')]:>11.2f} "
                      f"{e2e[(transport, n, 'paying')]:>8.2f}")

        # -- block filters
        print("\nblock filters, ms per block (scripts no block pays)")
        scan_ms: dict[int, float] = {}
        own_ms: dict[int, float] = {}
        filters = [bytes.fromhex(f["filter"]) for f in rpc.batch([("getblockfilter", h) for h in hashes])]
        block_hashes = [bytes.fromhex(h)[::-1] for h in hashes]
        t = time.perf_counter()
        rpc.batch([("getblockfilter", h) for h in hashes])
        fetch_filter = (time.perf_counter() - t) / nblocks * 1e3
        for n in (1_000, 10_000, 100_000):
            descs = [f"raw({s.hex()})" for s in unpaid[:n]]
            t = time.perf_counter()
            rpc.call("scanblocks", "start", descs, first, first, "basic", {"filter_false_positives": True})
            fixed = time.perf_counter() - t
            t = time.perf_counter()
            found = rpc.call("scanblocks", "start", descs, first, last, "basic", {"filter_false_positives": True})
            whole = time.perf_counter() - t
            assert not found["relevant_blocks"]
            scan_ms[n] = max(whole - fixed, 0) / (nblocks - 1) * 1e3
            query = FilterQuery(unpaid[:n])
            k = max(2, min(nblocks, 200_000 // n))           # Quill's matcher at 100k: a few blocks suffice
            own_ms[n] = fetch_filter + per_block(lambda i, q=query: q.match_any(block_hashes[i], filters[i]),
                                                 list(range(k)))
            print(f"  {n:>7,} scripts: Core scanblocks {scan_ms[n]:7.2f} (+{fixed * 1e3:.0f} ms per call), "
                  f"Quill getblockfilter + match {own_ms[n]:8.2f}")

        projection(e2e, scan_ms, own_ms)
    finally:
        if service is not None:
            service.close()
        core.stop()


def projection(e2e: dict[tuple[str, int, str], float], scan_ms: dict[int, float], own_ms: dict[int, float]) -> None:
    print(f"\nprojection, 2020 birthday: {BLOCKS_2020:,} mainnet blocks, {MATCHED:,} of them paying the wallet "
          "(assumption), Core serving on this machine as measured above; minutes")
    print("  before (previous bench, Core's serve times assumed): 1k scripts 87 without filters, 4.0 with; "
          "100k scripts 63 without, 18.5 with")
    print(f"  {'transport':<9} {'scripts':>8} {'without filters':>16} {'scanblocks':>11} {'own matcher':>12} "
          f"{'Quill chooses':>14}  goal: < 60 without, < 10 with")
    for transport in ("REST", "JSON-RPC"):
        for n in (1_000, 100_000):
            skip, pay = e2e[(transport, n, "not paying")], e2e[(transport, n, "paying")]
            without = (BLOCKS_2020 * skip + MATCHED * max(pay - skip, 0)) / 60_000
            with_scan = (BLOCKS_2020 * scan_ms[n] + MATCHED * pay) / 60_000
            with_own = (BLOCKS_2020 * own_ms[n] + MATCHED * pay) / 60_000
            chosen = without if (transport == "REST" and n > follower_mod.FETCH_ALL_SCRIPTS) else with_scan
            print(f"  {transport:<9} {n:>8,} {without:>16.1f} {with_scan:>11.1f} {with_own:>12.1f} {chosen:>14.1f}")


if __name__ == "__main__":
    main()
