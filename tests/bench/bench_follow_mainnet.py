"""Rescanning mainnet-sized blocks served by the real Bitcoin Core, and the projection for a wallet born in 2020.

    .venv/bin/python -m tests.bench.bench_follow_mainnet [blocks]     (default 40 mainnet-sized blocks)

The blocks are made here and given to Core with submitblock (tests.bench.mainnet_blocks: ~3,000
transactions, ~6,400 inputs of five script shapes, ~7,600 outputs, every output script unique,
~1.5 MB, three payments per block to the watched wallet). Core runs with -blockfilterindex and -rest.

Measured, per block (lower quartiles, or the best of two runs over all the blocks, on this
2-core machine, Core and Quill sharing it with whatever else runs: the load is printed):
  * Core serving a block: `getblock <hash> 0` by JSON-RPC, /rest/block/<hash>.bin, and the outputs
    it spends, /rest/spenttxouts/<hash>.bin (Core v30 and later).
  * Quill reading a block: JSON + hex as before (json.loads) and now (UpstreamRPC.raw_blocks' find),
    a full parse with the GC on and paused, quill.chain.scan (the wallet's transactions only),
    quill.chain.prescan's searches (the wallet's scripts in the block and in its spent outputs), and
    Wallet.block_connected for a block that pays the wallet.
  * The real rescan path, end to end: WalletManager.rescan over a ChainService following Core
    (blocks fetched ahead on FETCH_CONNECTIONS connections, scanned, given to a SQLite wallet),
    for wallets of 1,000 and 100,000 scripts, by REST and by JSON-RPC, on blocks that do not pay the
    wallet (what almost every block of a rescan is), on blocks that do, and on blocks that do not pay
    a wallet holding coins (which any block might spend): coins Core's UTXO set still holds at its tip
    ('holding coins': no block below the tip spends them, so no spent outputs are read), or coins
    spent later on, simulated by withholding Core's UTXO answers from Quill: for the coins of one
    script ('one open': searched for in each block, prescan.FIND_COVERED), or for all of them ('open
    coins': every block's spent outputs read and searched, as for a wallet with many coins whose
    spends are ahead).
    Each rescan follows an untimed one of the first WARM blocks (the wallet's coins; Quill's
    searches, built once per rescan, timed apart), by a follower that starts knowing nothing of
    the wallet's coins (a fresh OutpointBook, as a new quilld).
  * Block filters: Core's scanblocks per block over the range, for scripts no block pays (its fixed
    cost per call measured apart: parsing the descriptors), and Quill's own BIP158 matcher
    (getblockfilter, decode, SipHash of every script) per block.

Each end-to-end figure is given as wall time and as CPU time of each side (Quill's process, all
threads; bitcoind's threads' time on a CPU, from /proc/<pid>/task/*/schedstat), since the machine
is shared and the wall time depends on the load.

Projection for a 2020 birthday (printed with its method): 300,000 mainnet blocks, of which MATCHED
pay the wallet (an assumption; Core's false positives are removed by scanblocks).
What is timed: the end-to-end rescans above, as CPU seconds of each process per block (Quill's: all
its threads; Core's: bitcoind's threads' time on a CPU, from /proc, which counts its REST, JSON-RPC
and scanblocks work and nothing else of the machine's), and the wall clock of the same rescans.
What is assumed: per block the pace is the slower side's CPU time, max(Quill, Core): blocks are
fetched ahead on two connections, so the two processes work at once, each on a core of its own with
nothing else running (this machine's two cores are shared with other work: its load average is
printed, and the wall clock of this run, in brackets, is what that load gave); loopback latency is
hidden by the fetching ahead. Without filters every block is read (at the non-paying rate, the
dearer of 'not paying' and the coin-holding column) and MATCHED are connected (at the paying rate's
extra). With filters, the filters of all blocks are matched (by scanblocks, or by Quill's matcher)
and MATCHED blocks read. A wallet's coins: 'coins settled' takes every coin it holds to be still
unspent at Core's tip or already seen spent ('holding coins' column); 'coin open' takes some coin
it holds to be spent later on at every block: 'one open' (the coins of one script; searched for in
the block) and 'open' (all of them: every block's spent outputs read), the worst case. A real wallet
lies between: a coin is open over the blocks between its creation and its spend. Quill's choice: the follower's own rule
(Follower.reading_beats_filters: above 12,000 scripts by REST from a node serving /rest/spenttxouts
(40,000 from one that does not) and 80,000 by JSON-RPC, read every block).
Also assumed: the blocks here stand for mainnet's (same size, counts and unique scripts; mainnet's
older blocks are smaller, so this errs long; but a tenth of their outputs are P2WPKH, the watched
scripts' template, where mainnet's are about half: each costs the search ~0.07 us more, about
0.25 ms of Quill's per block); the disk is warm (Core's block files in the page cache, as after a
first read); the 100,000 scripts are P2WPKH (one group of searches: a wallet mixing templates
searches once per template).
"""
from __future__ import annotations

import gc
import json
import os
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
from quill.chain.follower import Follower
from quill.chain.prescan import OutpointBook, ScriptPatterns
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
WARM = 10               # blocks rescanned untimed before each timed rescan
PAYS = ("not paying", "paying", "holding coins", "one open", "open coins")
OPEN = ("holding coins", "one open", "open coins")


def wallet_with(scripts: list[bytes], path: Path) -> Wallet:
    store = st.Store(str(path), create=True)
    w = Wallet("bench", store, "regtest", keypool=1)
    with store.batch():
        info = w.add_descriptor(parse("raw(00140000000000000000000000000000000000000000)", "regtest"),
                                0, 0, 1, 0, False, False, None)
    for s in scripts:
        w.scripts[s] = [(info.id, 0)]
    return w


def withholding(follower: Follower, scripts: set[bytes]) -> Any:
    """Follower.ask_utxos with the coins paying `scripts` answered as spent (as if spent later on)."""
    def ask(keys: list[bytes]) -> None:
        book = follower.book
        book.record({k: None for k in keys if book.covered.get(k) in scripts})
        rest = [k for k in keys if book.covered.get(k) not in scripts]
        if rest:
            Follower.ask_utxos(follower, rest)
    return ask


def per_block(f: Any, items: list[Any]) -> float:
    """The lower quartile of the times of f(item), in ms: the machine is shared by several people's
    work, and the quieter moments are the ones that tell what the code costs."""
    times = []
    for item in items:
        t = time.perf_counter()
        f(item)
        times.append(time.perf_counter() - t)
    return statistics.quantiles(times, n=4)[0] * 1e3 if len(times) > 1 else times[0] * 1e3


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
        print(f"load average at the start: {os.getloadavg()[0]:.1f}")
        print(f"{nblocks} mainnet-sized blocks built on Core in {built:.0f} s: {len(sample.txs)} txs, {n_in} inputs, "
              f"{n_out} outputs, {size:.2f} MB per block")

        rows: list[tuple[str, float]] = []
        # -- Core serving blocks
        rows.append(("Core: getblock <hash> 0 (JSON-RPC, one connection)",
                     per_block(lambda h: rpc.raw_blocks([h]), hashes)))
        rows.append(("Core: /rest/block/<hash>.bin (one connection)", per_block(rpc.rest_block, hashes)))
        rows.append(("Core: /rest/spenttxouts/<hash>.bin (one connection)",
                     per_block(rpc.rest_spent_outputs, hashes)))
        spent = [rpc.rest_spent_outputs(h) for h in hashes]
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
            watched = frozenset(unpaid[:n])
            with bulk_gc():
                rows.append((f"Quill: scan, {n:,} scripts", per_block(lambda r, s=watched: scan_block(r, s, set()),
                                                                        raws)))
                patterns = ScriptPatterns()
                patterns.update(watched)
                rows.append((f"Quill: prescan (re searches of block and spent outputs), {n:,} scripts",
                             per_block(lambda k, p=patterns: p.found_in(raws[k]) or p.found_in(spent[k]),
                                       list(range(len(raws))))))
        w = wallet_with(paid, tmp / "connect.sqlite")
        sparse = [scan_block(r, w.script_set(), w.outpoints) for r in raws]
        heights = iter(range(first, last + 1))
        with bulk_gc():
            rows.append(("Quill: block_connected, block paying the wallet",
                         per_block(lambda b: w.block_connected(b, next(heights)), sparse)))
        w.store.close()
        print("\nper block (lower quartile)")
        for label, ms in rows:
            print(f"  {label:<58} {ms:8.2f} ms")

        # -- the real rescan path, end to end
        service = ChainService("regtest", str(tmp / "quill"), core.url_for_follower, poll_interval=0.2).start()
        while service.state.tip is None or service.state.tip.height < last:
            time.sleep(0.1)
        manager = WalletManager(service, "regtest", str(tmp / "quill"))
        e2e: dict[tuple[str, int, str], tuple[float, float, float]] = {}
        clocks = Clocks(core)
        # the "holding coins" wallet: scripts paid in the first WARM blocks and never after, so that it
        # holds coins (which any later block might spend) while no timed block pays it
        paid_in = [{o.script_pubkey for tx in Block.from_bytes(r).txs for o in tx.vout} for r in raws]
        early = set().union(*paid_in[:WARM]) & set(paid)
        holding = sorted(early - set().union(*paid_in[WARM:]))
        follower = service.follower
        for transport in ("REST", "JSON-RPC"):
            follower._rest = transport == "REST"
            for n in (1_000, 100_000):
                for pays in PAYS:
                    scripts = {"paying": paid + unpaid[:n - 1_000], "not paying": unpaid[:n]}.get(
                        pays, holding + unpaid[:n - len(holding)])
                    filters_known = follower._filters
                    follower._filters = False          # every block read: the path without filters
                    if pays in ("one open", "open coins"):     # Core's UTXO answers withheld: spent ahead?
                        follower.ask_utxos = withholding(follower, set(holding[:1] if pays == "one open" else holding))
                    spent = [0.0, 0.0, 0.0]
                    for run in range(2):                       # a new wallet each time
                        w = wallet_with(scripts, tmp / f"e2e-{transport}-{n}-{pays}-{run}.sqlite")
                        follower.book = OutpointBook()         # a follower that knows nothing of its coins yet
                        manager.rescan(w, first, first + WARM - 1)  # untimed: the wallet's coins, Quill's searches
                        gc.collect()
                        before = clocks.now()
                        manager.rescan(w, first + WARM, last)
                        spent = [a + b - c for a, b, c in zip(spent, clocks.now(), before, strict=True)]
                        w.store.close()
                    e2e[(transport, n, pays)] = tuple(v / 2 / (nblocks - WARM) * 1e3 for v in spent)  # type: ignore
                    follower._filters = filters_known
                    follower.__dict__.pop("ask_utxos", None)
        opened = sum(1 for r in raws[:WARM] for tx in Block.from_bytes(r).txs for o in tx.vout
                     if o.script_pubkey == holding[0])
        searches = {}
        for n in (1_000, 100_000):
            t = time.process_time()
            ScriptPatterns().update(frozenset(unpaid[:n]))
            searches[n] = time.process_time() - t
        print(f"\nrescan without filters, end to end (WalletManager.rescan, {follower_mod.FETCH_CONNECTIONS} "
              "connections fetching ahead), ms per block: wall / Quill's CPU / Core's CPU")
        print(f"  (the first {WARM} blocks are rescanned untimed before: a wallet's coins, Quill's searches built "
              f"once per rescan, {searches[1_000]:.2f} s CPU at 1k scripts, {searches[100_000]:.2f} s at 100k; "
              f"'holding coins': the wallet holds the {len(holding)} coins those blocks paid it, "
              "no timed block pays it, Core's UTXO set still holds them; 'one open', 'open coins': the same "
              f"wallet with Core's UTXO answers withheld, as if spent later on, for {opened} coin(s) of one script "
              "(searched for in each block) or for all (every block's spent outputs read))")
        print(f"  {'transport':<9} {'scripts':>8} " + " ".join(f"{p:>24}" for p in PAYS))
        for transport in ("REST", "JSON-RPC"):
            for n in (1_000, 100_000):
                cells = [" / ".join(f"{v:6.2f}" for v in e2e[(transport, n, pays)]) for pays in PAYS]
                print(f"  {transport:<9} {n:>8,} " + " ".join(f"{c:>24}" for c in cells))

        # -- block filters
        print("\nblock filters, ms per block (scripts no block pays): wall / Quill's CPU / Core's CPU")
        scan_ms: dict[int, tuple[float, float, float]] = {}
        own_ms: dict[int, tuple[float, float, float]] = {}
        filters = [bytes.fromhex(f["filter"]) for f in rpc.batch([("getblockfilter", h) for h in hashes])]
        block_hashes = [bytes.fromhex(h)[::-1] for h in hashes]
        before = clocks.now()
        rpc.batch([("getblockfilter", h) for h in hashes])
        fetch_filter = [(a - b) / nblocks * 1e3 for a, b in zip(clocks.now(), before, strict=True)]
        for n in (1_000, 10_000, 100_000):
            descs = [f"raw({s.hex()})" for s in unpaid[:n]]
            before = clocks.now()
            rpc.call("scanblocks", "start", descs, first, first, "basic", {"filter_false_positives": True})
            middle = clocks.now()
            found = rpc.call("scanblocks", "start", descs, first, last, "basic", {"filter_false_positives": True})
            after = clocks.now()
            assert not found["relevant_blocks"]
            scan_ms[n] = tuple(max((c - b) - (b - a), 0) / (nblocks - 1) * 1e3      # type: ignore[assignment]
                               for a, b, c in zip(before, middle, after, strict=True))
            fixed = (middle[0] - before[0]) * 1e3
            query = FilterQuery(unpaid[:n])
            k = max(2, min(nblocks, 200_000 // n))           # Quill's matcher at 100k: a few blocks suffice
            before = clocks.now()
            for i in range(k):
                query.match_any(block_hashes[i], filters[i])
            match = [(a - b) / k * 1e3 for a, b in zip(clocks.now(), before, strict=True)]
            own_ms[n] = tuple(f + m for f, m in zip(fetch_filter, match, strict=True))  # type: ignore[assignment]
            print(f"  {n:>7,} scripts: Core scanblocks {' / '.join(f'{v:6.2f}' for v in scan_ms[n])} "
                  f"(+{fixed:.0f} ms per call); Quill getblockfilter + match "
                  f"{' / '.join(f'{v:7.2f}' for v in own_ms[n])}")

        projection(e2e, scan_ms, own_ms)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        if service is not None:
            service.close()
        core.stop()


class Clocks:
    """Wall time, this process's CPU time (all of Quill's threads) and bitcoind's, in seconds: the
    machine is shared, and CPU times tell what each side costs whatever else runs. bitcoind's is the
    sum of its threads' time on a CPU from /proc/<pid>/task/*/schedstat (nanoseconds; /proc's stat
    counts in ticks of 10 ms, too coarse for a few ms per block)."""

    def __init__(self, core: BitcoinD) -> None:
        assert core.proc is not None
        self.tasks = Path(f"/proc/{core.proc.pid}/task")

    def core_cpu(self) -> float:
        total = 0
        for task in self.tasks.iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass            # a thread that ended meanwhile
        return total / 1e9

    def now(self) -> tuple[float, float, float]:
        return time.perf_counter(), time.process_time(), self.core_cpu()


def projection(e2e: dict[tuple[str, int, str], tuple[float, float, float]],
               scan_ms: dict[int, tuple[float, float, float]], own_ms: dict[int, tuple[float, float, float]]) -> None:
    """Minutes for BLOCKS_2020 blocks, MATCHED of them paying the wallet. Per block, Quill and Core work
    at once (blocks are fetched ahead), so the slower side sets the pace: max(Quill's CPU, Core's CPU),
    each on its own core. The wall-clock figure of this run is given beside it."""
    def pace(cell: tuple[float, float, float]) -> float:
        return max(cell[1], cell[2])

    def wall(cell: tuple[float, float, float]) -> float:
        return cell[0]

    print(f"\nprojection, 2020 birthday: {BLOCKS_2020:,} mainnet blocks, {MATCHED:,} of them paying the wallet "
          "(assumption), in minutes")
    print("  method: per block, the slower of Quill's and Core's CPU time in the end-to-end rescans above (the "
          "two overlap, blocks being fetched ahead; each assumed to have a core to itself);")
    print("  [in brackets: the wall clock of this run's rescans, on this machine under its load]; 'settled': "
          "every coin the wallet holds is still unspent at Core's tip or already seen spent;")
    print("  '1 open': at every block the coins of one script are spent later on (searched for in the block); "
          "'open': all of them (every block's spent outputs read), the worst case; a real wallet lies between")
    print("  before (previous bench, Core's serve times assumed): 1k scripts 87 without filters, 4.0 with; "
          "100k scripts 63 without, 18.5 with")
    print(f"  {'transport':<9} {'scripts':>8} {'without filters':>38} {'scanblocks':>16} {'own matcher':>16} "
          f"{'Quill chooses':>38}   goal: < 60 without, < 10 with")
    print(f"  {'':<9} {'':>8} {'settled / 1 open / open':>38} {'':>16} {'':>16} {'settled / 1 open / open':>38}")
    for transport in ("REST", "JSON-RPC"):
        for n in (1_000, 100_000):
            pay = e2e[(transport, n, "paying")]
            cols: list[list[float]] = []
            for f in (pace, wall):
                row = []
                for holding in OPEN:
                    # a block paying nothing: the dearer of a wallet without coins and one holding coins
                    skip = tuple(max(a, b) for a, b in zip(e2e[(transport, n, "not paying")],
                                                           e2e[(transport, n, holding)], strict=True))
                    row.append((BLOCKS_2020 * f(skip) + MATCHED * max(f(pay) - f(skip), 0)) / 60_000)
                row.append((BLOCKS_2020 * f(scan_ms[n]) + MATCHED * f(pay)) / 60_000)
                row.append((BLOCKS_2020 * f(own_ms[n]) + MATCHED * f(pay)) / 60_000)
                cols.append(row)
            limit = (follower_mod.FETCH_ALL_SCRIPTS_PRESCAN if transport == "REST"
                     else follower_mod.FETCH_ALL_SCRIPTS_RPC)
            reads = n > limit
            without = " / ".join(f"{cols[0][i]:.1f} [{cols[1][i]:.0f}]" for i in range(3))
            scanned = f"{cols[0][3]:.1f} [{cols[1][3]:.0f}]"
            own = f"{cols[0][4]:.1f} [{cols[1][4]:.0f}]"
            chosen = without if reads else f"{scanned} (all)"
            print(f"  {transport:<9} {n:>8,} {without:>38} {scanned:>16} {own:>16} {chosen:>38}")


if __name__ == "__main__":
    main()
