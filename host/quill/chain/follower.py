"""Follow the user's own node through its JSON-RPC (-chainsource=http://user:pass@host:port).

The upstream node is trusted for validity (see trusted.py for what is still
checked); Quill keeps headers and what its wallets need. Every `poll_interval`:

1. Headers first. Ask for the best block; if it is unknown, find the last height
   where the upstream's active chain and our best header chain agree (one batch of
   `getblockhash` over the last 64 heights, then a bisection), and fetch the rest
   in batches of HEADER_BATCH (`getblockhash` + `getblockheader <hash> false`, two
   JSON-RPC batches per 2,000 headers). Progress goes to the log.
2. Delivery. Disconnect our delivered tip down to the fork with the best header
   chain (the blocks are fetched again for the listeners), then walk up. Listeners
   tell what they need through `scan_hint()` (ScanHint: the earliest block time and
   the scripts they watch): blocks older than that time, and, when the upstream node
   has a synced basic block filter index, blocks `scanblocks` does not match, are
   not fetched; a run of them is announced as its last block without transactions.
   When the scripts change after a matching block (a wallet's keypool grows), the
   rest of the range is matched again. Filters are matched by the node (`scanblocks`)
   or, where it has no scanblocks or refuses it (one scan at a time), by Quill itself
   on the filters it fetches (`getblockfilter`, quill.chain.blockfilter.FilterQuery).
   For a very large script set, matching costs more than reading every block (see
   FETCH_ALL_SCRIPTS), and every block is read.
   A block read for wallets is first searched at C speed for what they look for (quill.chain.prescan:
   their scripts in the block and, by REST, in the outputs it spends, `/rest/spenttxouts`) and walked
   in Python (quill.chain.scan) only when something may be there. The wallets' coins are looked up
   in the node's UTXO set once (`gettxout`, UTXO_BATCH at a time): a coin unspent at its tip is spent
   by no block below it, so the spent outputs are fetched only for blocks that might spend a coin
   spent later on (OutpointBook.survey decides, ahead in the fetching threads and again when the
   block is read, where they are fetched after all if they were not).
   Blocks come by REST (`-rest`, binary) when the node serves it, else by JSON-RPC
   batches of `getblock <hash> 0`; they are fetched ahead on FETCH_CONNECTIONS
   connections while the current ones are read (raw_in_order).
3. Mempool. `getrawmempool false true`: when its `mempool_sequence` moved, the
   transactions we lack are fetched (`getrawtransaction` and `getmempoolentry` for
   the fee, in batches) and the ones upstream dropped are removed. Polling sees
   the mempool as it is at each poll: a transaction that enters and leaves it
   between two polls (replaced, or mined and reorged away) is never seen.

sendrawtransaction is relayed upstream. Errors are typed (quill.chain.errors).
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from quill.atomic_store import StoreWriteFailed
from quill.bulk import bulk_gc
from quill.consensus import COIN
from quill.tx.hashes import hash_to_hex, hex_to_hash, sha256d
from quill.tx.transaction import Transaction

from . import index as ix
from .block import HEADER_SIZE, Block, BlockHeader
from .blockfilter import FilterQuery
from .errors import ChainSourceUnavailable, FeeAboveMaximum, UpstreamError, UpstreamRejected
from .prescan import OutpointBook, ScriptPatterns, Survey, TipChains
from .rules import Invalid
from .scan import AnyOf, SparseBlock, block_count, scan_block
from .upstream import UpstreamRPC
from .validation import ChainError

HEADER_BATCH = 2000
BLOCK_BATCH = 8            # blocks fetched per JSON-RPC batch
DELIVERY_CHUNK = 1000      # blocks matched against filters per scanblocks call (~15 s at 100k scripts)
FILTER_MIN_RANGE = 8       # below this many blocks, fetching them beats a scanblocks call
MEMPOOL_BATCH = 500
FILTER_BATCH = 100         # filters per getblockfilter batch (~37 KB each for a mainnet-sized block)
FETCH_CONNECTIONS = 2      # connections fetching blocks ahead of the reader
FETCH_AHEAD = 3            # batches of blocks in flight ahead of the reader
# Above this many scripts, matching every block's filter costs more than reading the block
# (bench_follow_mainnet, CPU per 1.5 MB block): the node's scanblocks takes ~0.18 us per script
# (0.3 ms at 1k scripts, 1 ms at 10k, 10-18 ms at 100k), reading a block costs the node ~0.8 ms by
# REST or ~9 ms by getblock (hex encoding), and Quill ~5 ms to walk it, the two overlapping. Where the
# node also serves the block's spent outputs (another ~0.7-1.2 ms of the node's, read only for blocks
# that might spend a coin spent later on), Quill's prescan takes ~1 ms instead of the walk
# (quill.chain.prescan), so reading wins from ~12,000 scripts on (from ~6,000 where no coin is open,
# which is left to the filters: they cost the machine less in all).
FETCH_ALL_SCRIPTS = 40_000          # by REST
FETCH_ALL_SCRIPTS_PRESCAN = 12_000  # by REST, with /rest/spenttxouts
FETCH_ALL_SCRIPTS_RPC = 80_000      # by JSON-RPC getblock
SPENT_TRIES = 3            # /rest/spenttxouts failures before the node is taken not to serve it
UTXO_BATCH = 1000          # gettxout calls per JSON-RPC batch (the wallets' coins in the node's UTXO set)
RPC_METHOD_NOT_FOUND = -32601
PROGRESS_EVERY = 5.0       # seconds between progress lines in the log


@dataclass
class ScanHint:
    """What the listeners need: blocks from `since` (a block time; None: none at all), and of those
    only the ones touching `scripts` (None: every one); `version` changes when `scripts` grows.
    `outpoints` (36-byte keys, quill.chain.scan), when given with `scripts`, lets a fetched block be
    scanned for its matching transactions instead of decoded whole."""
    since: int | None
    scripts: Any = None
    version: int = 0
    outpoints: Any = None


NOTHING = ScanHint(None, None)
EVERYTHING = ScanHint(0, None)


class Follower:
    def __init__(self, service: Any, url: str, poll_interval: float, log: logging.Logger | Any) -> None:
        self.service = service
        self.url = url
        self.rpc = UpstreamRPC(url)
        self.poll_interval = poll_interval
        self.log = log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quill-chain-follower", daemon=True)
        self._healthy: bool | None = None
        self._mempool_lock = threading.Lock()
        self._mempool_sequence: int | None = None
        self._filters: bool | None = None
        self._scanblocks = True          # False once the node said it has no scanblocks
        self._rest: bool | None = None
        self._fetchers = [UpstreamRPC(url) for _ in range(FETCH_CONNECTIONS)]
        self._query: tuple[Any, FilterQuery] | None = None
        self._spent_rest: bool | None = None     # the node serves /rest/spenttxouts (Core v30 and later)
        self._spent_failures = 0
        self._patterns: list[tuple[Any, ScriptPatterns]] = []    # by (hint version, number of scripts)
        self._patterns_lock = threading.Lock()
        self.book = OutpointBook()
        self.tip_chains = TipChains(lambda h: self.state.index.get(h))
        self._last_progress = 0.0
        self._wake = threading.Event()
        self.stream: Any = None          # zmqstream.MempoolStream when the upstream node publishes
        self._stream_checked = False

    def start(self) -> None:
        self.log.info("Following the chain of %s (trusting it for validity)", self.rpc.display)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)
        if self.stream is not None:
            self.stream.stop()
        self.rpc.close()
        for client in self._fetchers:
            client.close()

    def wake(self) -> None:
        """Start the next round now (a block was announced)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
                if self._healthy is not True:
                    self.log.info("Chain source %s: in sync", self.rpc.display)
                self._healthy = True
            except (UpstreamError, ChainError, Invalid, ValueError, StoreWriteFailed) as e:
                # a write the disk refused was rolled back whole: the next round tries again
                if self._healthy is not False:
                    self.log.warning("Chain source %s: %s", self.rpc.display, e)
                self._healthy = False
            self._wake.wait(self.poll_interval)
            self._wake.clear()

    # -- one round -------------------------------------------------------------------------

    def step(self) -> None:
        self.sync_headers()
        self.deliver()
        if not self._stream_checked:
            self._start_stream()
        if not self._stop.is_set() and (self.stream is None or self._mempool_sequence is None):
            self.sync_mempool()

    def _start_stream(self) -> None:
        """Use the upstream node's ZMQ `sequence` and `rawtx` topics when it publishes both."""
        from .zmqstream import MempoolStream, endpoints
        self._stream_checked = True
        try:
            found = endpoints(self.rpc.call("getzmqnotifications"))
        except UpstreamRejected:
            found = None
        if found is None:
            self.log.info("Chain source %s: polling its mempool every %d ms (transactions replaced between "
                          "two polls are not seen)", self.rpc.display, round(self.poll_interval * 1000))
            return
        try:
            self.stream = MempoolStream(self, found)
        except ImportError:
            self.log.warning("Chain source %s publishes ZMQ but pyzmq is not installed; polling its mempool",
                             self.rpc.display)
            return
        self._zmq_rpc = UpstreamRPC(self.url)
        self.stream.start()
        self.resync_mempool()       # what happened before the subscription took effect
        self.log.info("Chain source %s: mempool through ZMQ (sequence %s, rawtx %s)", self.rpc.display,
                      found["sequence"], found["rawtx"])

    def resync_mempool(self) -> None:
        """Read the whole mempool again at the next round (ZMQ lost a message)."""
        self._mempool_sequence = None
        self._wake.set()

    def zmq_added(self, tx: Transaction, when: int) -> None:
        fee = 0
        try:
            entry = self._zmq_rpc.call("getmempoolentry", tx.txid_hex())
            fee = round(float(entry["fees"]["base"]) * COIN)
        except UpstreamRejected:
            pass            # already gone again (replaced at once): its fee is not known here
        with self.service.lock:
            if self.state.tip is None:
                return
            self.state.mempool_add(tx, fee, when, self.state.tip.height)
            self.service.notify()

    def zmq_removed(self, txid: bytes) -> None:
        with self.service.lock:
            self.state.mempool_remove(txid, "expiry")
            self.service.notify()

    @property
    def state(self) -> Any:
        return self.service.state

    # -- 1. headers ------------------------------------------------------------------------

    def sync_headers(self) -> None:
        best_hex = self.rpc.call("getbestblockhash")
        best = hex_to_hash(best_hex)
        with self.service.lock:
            known = self.state.index.get(best)
            if known is not None:
                if known is not self.state.best_header:
                    self.state.set_best_header(known)
                return
        up_height = int(self.rpc.call("getblockheader", best_hex, True)["height"])
        height = self._find_fork(up_height) + 1
        started = time.monotonic()
        while height <= up_height and not self._stop.is_set():
            n = min(HEADER_BATCH, up_height - height + 1)
            hashes = self.rpc.batch([("getblockhash", h) for h in range(height, height + n)])
            raws = self.rpc.batch([("getblockheader", h, False) for h in hashes])
            headers = [BlockHeader.from_bytes(bytes.fromhex(r)) for r in raws]
            with self.service.lock:
                last = self.state.add_headers(headers)
            height += n
            self._progress("Headers", last.height, up_height, started)

    def _find_fork(self, up_height: int) -> int:
        """The highest height where our best header chain and the upstream active chain agree (-1: none)."""
        with self.service.lock:
            best = self.state.best_header
            if best is None:
                return -1
            top = min(best.height, up_height)
            ours = {}
            e = best.ancestor(top)
            while e is not None and e.height > top - 64:
                ours[e.height] = e.hash
                e = e.prev
        heights = sorted(ours, reverse=True)
        theirs = self.rpc.batch([("getblockhash", h) for h in heights])
        for h, their in zip(heights, theirs, strict=True):
            if hex_to_hash(their) == ours[h]:
                return h
        lo, hi = -1, heights[-1] - 1          # agree at lo (or nothing), disagree above hi
        while lo < hi:
            mid = (lo + hi + 1) // 2
            with self.service.lock:
                mine = self.state.best_header.ancestor(mid).hash
            if hex_to_hash(self.rpc.call("getblockhash", mid)) == mine:
                lo = mid
            else:
                hi = mid - 1
        return lo

    # -- 2. delivery -----------------------------------------------------------------------

    def deliver(self) -> None:
        self._disconnect_to_fork()
        with self.service.lock:
            path = self.state.best_path()
        started = time.monotonic()
        for i in range(0, len(path), DELIVERY_CHUNK):
            if self._stop.is_set():
                return
            chunk = path[i:i + DELIVERY_CHUNK]
            with bulk_gc():
                self._deliver_chunk(chunk)
            self._progress("Blocks", chunk[-1].height, path[-1].height, started)

    def _disconnect_to_fork(self) -> None:
        while True:
            with self.service.lock:
                tip, best = self.state.tip, self.state.best_header
                if tip is None or best is None or best.ancestor(tip.height) is tip:
                    return
            block = self.fetch_blocks([tip.hash])[0]
            with self.service.lock:
                if self.state.tip is tip:
                    self.book.forget_settled()          # what it spent may be spent elsewhere now
                    self.state.disconnect_tip(block)
                self.service.notify()

    def _deliver_chunk(self, chunk: list[ix.BlockEntry]) -> None:
        """Deliver `chunk` (consecutive entries above the tip). Every step re-checks, under the chain's
        lock, that the listeners still want what was decided for them: a wallet created or given older
        descriptors meanwhile changes the hint, and the rest of the chunk is decided again."""
        hint = self.service.scan_hint()
        i = 0
        while i < len(chunk) and not self._stop.is_set():
            i, hint = self._deliver_wanted(chunk, i, self._wanted(chunk[i:], hint), hint)

    def _deliver_wanted(self, chunk: list[ix.BlockEntry], i: int, wanted: set[bytes],
                        hint: ScanHint) -> tuple[int, ScanHint]:
        """Deliver chunk[i:] as `wanted` decides (those blocks fetched ahead, the others announced
        empty), until the end or until the listeners' hint changes: the next position, and the hint."""
        todo = [k for k in range(i, len(chunk)) if chunk[k].hash in wanted]
        raws = self.raw_in_order([chunk[k].hash for k in todo], spent=self.spent_wanted(lambda: hint))
        try:
            for k in todo:
                data = next(raws)
                if self._stop.is_set():
                    return i, hint
                if k > i and not self._announce_skipped(chunk[k - 1], hint):
                    return i, self.service.scan_hint()
                block = self.read_block(chunk[k].hash, data, hint)
                with self.service.lock:
                    now = self.service.scan_hint()
                    if now.version != hint.version:
                        return i, now
                    self.state.connect(chunk[k], block)
                    self.service.notify()
                i = k + 1
                now = self.service.scan_hint()
                if now.version != hint.version:
                    return i, now       # new scripts, a new wallet, an older birthday: decide the rest again
        finally:
            raws.close()
        if i < len(chunk) and not self._announce_skipped(chunk[-1], hint):
            return i, self.service.scan_hint()
        return len(chunk), hint

    def _wanted(self, entries: list[ix.BlockEntry], hint: ScanHint) -> set[bytes]:
        """Hashes of the blocks among `entries` the listeners need in full."""
        if hint.since is None:
            return set()
        first = next((k for k, e in enumerate(entries) if e.header.time >= hint.since), None)
        if first is None:
            return set()
        entries = entries[first:]
        if hint.scripts is not None and len(entries) >= FILTER_MIN_RANGE:
            matched = self.filter_matches(entries[0].height, entries[-1].height, hint.scripts)
            if matched is not None:
                return matched
        return {e.hash for e in entries}

    def _announce_skipped(self, entry: ix.BlockEntry, hint: ScanHint) -> bool:
        """Move the tip over blocks no listener needs, announcing the last one without transactions;
        False (nothing done) when the listeners' hint changed since it was decided."""
        with self.service.lock:
            if self.service.scan_hint().version != hint.version:
                return False
            if self.state.tip is entry:
                return True
            if entry.prev is not self.state.tip:
                self.state.advance(entry.prev)
            self.state.connect(entry, Block(entry.header, []))
            self.service.notify()
            return True

    # -- block filters (BIP157/158 on the upstream node) ----------------------------------------

    def has_filters(self) -> bool:
        """True when the upstream node has a synced basic block filter index (-blockfilterindex)."""
        if self._filters is None:
            try:
                info = self.rpc.call("getindexinfo", "basic block filter index")
                self._filters = bool(info.get("basic block filter index", {}).get("synced"))
            except UpstreamRejected:
                self._filters = False
            self.log.info("Chain source %s: %s", self.rpc.display,
                          "block filters available, scanning with scanblocks" if self._filters
                          else "no block filter index, fetching every block after the wallets' birthdays")
        return self._filters

    def has_rest(self) -> bool:
        """True when the upstream node serves blocks by REST (-rest)."""
        if self._rest is None:
            try:
                status, _ = self.rpc.get("/rest/chaininfo.json")
                self._rest = status == 200
            except UpstreamError:
                self._rest = False
            self.log.info("Chain source %s: %s", self.rpc.display,
                          "blocks read by REST (binary)" if self._rest
                          else "no REST interface (-rest), blocks read by JSON-RPC getblock")
        return self._rest

    def filter_matches(self, start: int, stop: int, scripts: Any) -> set[bytes] | None:
        """Hashes of the active blocks in [start, stop] whose basic filter matches `scripts`, or None
        when every block is to be read: the upstream node has no filters, or reading is cheaper."""
        if not self.has_filters():
            return None
        if not scripts:
            return set()
        if self.reading_beats_filters(len(scripts)):
            return None
        if self._scanblocks:
            try:
                result = self.rpc.call("scanblocks", "start", [f"raw({s.hex()})" for s in scripts],
                                       start, stop, "basic", {"filter_false_positives": True})
                if result.get("completed", True):
                    return {hex_to_hash(h) for h in result["relevant_blocks"]}
            except UpstreamRejected as e:
                if e.code == RPC_METHOD_NOT_FOUND:
                    self._scanblocks = False
                self.log.warning("scanblocks on %s failed (%s); matching its filters here", self.rpc.display,
                                 e.message)
        return self.match_filters(start, stop, scripts)

    def reading_beats_filters(self, n_scripts: int) -> bool:
        """True when reading every block costs less than matching `n_scripts` against each filter."""
        if not self.has_rest():
            return n_scripts > FETCH_ALL_SCRIPTS_RPC
        return n_scripts > (FETCH_ALL_SCRIPTS_PRESCAN if self.serves_spent_outputs() else FETCH_ALL_SCRIPTS)

    def serves_spent_outputs(self) -> bool:
        """True when the upstream node serves /rest/spenttxouts (asked about its best block until it is
        known: a node at its genesis block has no spent outputs to serve, which tells nothing)."""
        if self._spent_rest is None and self.has_rest():
            if self.rpc.rest_spent_outputs(self.rpc.call("getbestblockhash")) is not None:
                self._spent_rest = True
        return self._spent_rest is True

    def match_filters(self, start: int, stop: int, scripts: Any) -> set[bytes]:
        """Quill's own BIP158 matching: the filters of the best chain's blocks [start, stop] by getblockfilter,
        matched against `scripts` (false positives are kept: reading those blocks finds nothing)."""
        with self.service.lock:
            # the upstream node's chain, as scanblocks would see it: blocks above our tip included
            best = self.state.best_header
            e = best.ancestor(min(stop, best.height)) if best is not None and start <= best.height else None
            hashes = []
            while e is not None and e.height >= start:
                hashes.append(e.hash)
                e = e.prev
            hashes.reverse()
        if self._query is None or self._query[0] is not scripts:
            self._query = (scripts, FilterQuery(scripts))
        query = self._query[1]
        matched = set()
        for i in range(0, len(hashes), FILTER_BATCH):
            part = hashes[i:i + FILTER_BATCH]
            for h, found in zip(part, self.rpc.batch([("getblockfilter", hash_to_hex(h), "basic") for h in part]),
                                strict=True):
                if query.match_any(h, bytes.fromhex(found["filter"])):
                    matched.add(h)
        return matched

    def fetch_blocks(self, hashes: list[bytes], hint: ScanHint | None = None) -> list[Any]:
        """The blocks from the upstream node: whole, or (a hint with scripts and outpoints) as
        SparseBlocks holding only the transactions the hint asks for."""
        return [self.read_block(h, data, hint) for h, data in zip(hashes, self.fetch_raw(hashes), strict=True)]

    def fetch_raw(self, hashes: list[bytes], client: UpstreamRPC | None = None,
                  spent: Callable[[bytes], bool] | None = None) -> list[Any]:
        """The serialized blocks: by REST when the node serves it, else in one JSON-RPC batch. `spent`
        (a predicate on the block hash, see spent_wanted): with the outputs each block for which it
        holds spends, where the node serves them (/rest/spenttxouts), as (block, spent outputs or None)
        pairs, which read_block takes as well."""
        client = client or self.rpc
        if not self.has_rest():
            blocks = client.raw_blocks([hash_to_hex(h) for h in hashes])
            return [(b, None) for b in blocks] if spent else blocks
        if not spent:
            return [client.rest_block(hash_to_hex(h)) for h in hashes]
        out = []
        for h in hashes:
            block = client.rest_block(hash_to_hex(h))
            out.append((block, self._spent_outputs(client, hash_to_hex(h)) if spent(h) else None))
        return out

    def spent_wanted(self, hint: Callable[[], ScanHint]) -> Callable[[bytes], bool] | None:
        """The predicate fetch_raw takes: True for a block whose spent outputs the prescan will need, as far
        as can be told ahead of reading it (read_block fetches them after all when it finds it needs them);
        None when the hint has no outpoints (the block is decoded whole)."""
        first = hint()
        if first.outpoints is None:
            return None
        if first.scripts is not None:       # the wallets' coins not asked about yet: before fetching ahead
            unasked = self.book.survey(first.outpoints, first.scripts, first.version, b"", guess=True).unasked
            if unasked:
                self.ask_utxos(unasked)

        def wanted(block_hash: bytes) -> bool:
            current = hint()
            if current.outpoints is None or current.scripts is None or not self.patterns(current).usable:
                return False
            survey = self._survey(block_hash, current, guess=True)
            return bool(survey.unasked) or survey.needs_spent
        return wanted

    def _spent_outputs(self, client: UpstreamRPC, block_hash: str) -> bytes | None:
        """/rest/spenttxouts/<hash>.bin, or None where the node has no such endpoint (Core before v30:
        after SPENT_TRIES failures and no success it is not asked again) or no undo data for the block."""
        if self._spent_rest is False:
            return None
        found = client.rest_spent_outputs(block_hash)
        if self._spent_rest is None:
            self._spent_failures += found is None
            if found is not None or self._spent_failures >= SPENT_TRIES:
                self._spent_rest = found is not None
                self.log.info("Chain source %s: %s", self.rpc.display,
                              "spent outputs read by REST (/rest/spenttxouts)" if found is not None
                              else "no /rest/spenttxouts: blocks spending the wallets' coins are found by reading "
                              "every block whole")
        return found

    def raw_in_order(self, hashes: list[bytes],
                     spent: Callable[[bytes], bool] | None = None) -> Generator[Any, None, None]:
        """The serialized blocks `hashes` in order (`spent`: with the spent outputs of those it holds for,
        see fetch_raw),
        BLOCK_BATCH at a time, up to FETCH_AHEAD batches fetched ahead on FETCH_CONNECTIONS connections
        while the caller reads (the node's work and the transfer overlap Quill's). Closing the
        generator drops what was fetched ahead."""
        parts = [hashes[i:i + BLOCK_BATCH] for i in range(0, len(hashes), BLOCK_BATCH)]
        if len(parts) <= 1:
            yield from (self.fetch_raw(parts[0], spent=spent) if parts else [])
            return
        fetchers = self._fetchers
        self.has_rest()         # asked once, before the fetchers ask it together
        pool = ThreadPoolExecutor(len(fetchers), thread_name_prefix="quill-fetch")
        try:
            ahead: deque[Future[list[Any]]] = deque()
            for k in range(len(parts)):
                ahead.append(pool.submit(self.fetch_raw, parts[k], fetchers[k % len(fetchers)], spent))
                if len(ahead) > FETCH_AHEAD:
                    yield from ahead.popleft().result()
            while ahead:
                yield from ahead.popleft().result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def read_block(self, block_hash: bytes, data: Any, hint: ScanHint | None = None) -> Any:
        """The block from its serialization `data` (or a (block, spent outputs) pair, see fetch_raw):
        whole, or (a hint with scripts and outpoints) as a SparseBlock of the transactions the hint
        asks for, none at all when the prescan (quill.chain.prescan) shows the block holds none."""
        raw, spent = data if isinstance(data, tuple) else (data, None)
        if sha256d(raw[:HEADER_SIZE]) != block_hash:
            raise UpstreamError(f"block {hash_to_hex(block_hash)} came back with another hash")
        if hint is None or hint.scripts is None or hint.outpoints is None:
            return Block.from_bytes(raw)
        if self._holds_nothing(block_hash, raw, spent, hint):
            empty = SparseBlock(BlockHeader.from_bytes(raw[:HEADER_SIZE]), block_count(raw), [])
            empty._hash = block_hash
            return empty
        block = scan_block(raw, hint.scripts, hint.outpoints)
        new = self.book.learn(block_hash, block.txs, hint.scripts)
        if new:
            self.ask_utxos(new)         # before the fetching threads look at the next blocks
        return block

    def _holds_nothing(self, block_hash: bytes, raw: bytes, spent: bytes | None, hint: ScanHint) -> bool:
        """True when the searches of quill.chain.prescan prove that no transaction of the block pays
        the hint's scripts or spends its outpoints (False: the block is to be walked). `spent`: the
        block's spent outputs when they were fetched ahead (None: not fetched, or not served)."""
        patterns = self.patterns(hint)
        if not patterns.usable:
            return False
        if self.book.pending:
            with self.service.lock:
                index = self.state.index
                self.book.confirm(lambda h: (e := index.get(h)) is not None and index.contains(e))
        survey = self._survey(block_hash, hint)
        if survey.unasked:
            self.ask_utxos(survey.unasked)
            survey = self._survey(block_hash, hint)
        fetch = spent is None and survey.needs_spent and self.has_rest()    # not fetched ahead: now
        if survey.risky(survey.needs_spent and (spent is not None or fetch)) is None or patterns.found_in(raw):
            return False
        if fetch:
            spent = self._spent_outputs(self.rpc, hash_to_hex(block_hash))
        searched = survey.needs_spent and spent is not None       # else the open coins are searched for in the block
        risky = survey.risky(searched)
        if risky is None:
            return False
        if spent is not None and searched and patterns.found_in(spent):
            return False
        return all(raw.find(key) < 0 for key in risky)

    def _survey(self, block_hash: bytes, hint: ScanHint, guess: bool = False) -> Survey:
        """OutpointBook.survey for the block, with the tips whose UTXO answers hold for it."""
        entry = self.state.index.get(block_hash)
        tips = () if entry is None else tuple(t for t in self.book.tips() if self.tip_chains.holds(t, entry))
        return self.book.survey(hint.outpoints, hint.scripts, hint.version, block_hash, tips, guess)

    def ask_utxos(self, outpoints: list[bytes]) -> None:
        """Ask the node's UTXO set about `outpoints` (36-byte keys): `gettxout <txid> <n> false`, whose
        answer names the tip it holds at (`bestblock`), or null for a coin spent there or never created."""
        for i in range(0, len(outpoints), UTXO_BATCH):
            part = outpoints[i:i + UTXO_BATCH]
            answers = self.rpc.batch_outcomes([("gettxout", hash_to_hex(k[:32]), int.from_bytes(k[32:], "little"),
                                                False) for k in part])
            self.book.record({k: hex_to_hash(a["bestblock"]) if isinstance(a, dict) else None
                              for k, a in zip(part, answers, strict=True)})
        self.tip_chains.forget(self.book.tips())

    def patterns(self, hint: ScanHint) -> ScriptPatterns:
        """The searches for the hint's scripts, kept for the last two script sets (a rescan's wallet
        and the union of all wallets), extended as the scripts grow."""
        key = (hint.version, len(hint.scripts))
        with self._patterns_lock:
            for k, found in self._patterns:
                if k == key:
                    return found
            base = next((p for _, p in self._patterns if p.scripts.issubset(hint.scripts)), None)
            if base is None:
                base = ScriptPatterns()
            self._patterns = [(k, p) for k, p in self._patterns if p is not base]
            base.update(hint.scripts)
            self._patterns.append((key, base))
            del self._patterns[:-2]
            return base

    def _progress(self, what: str, height: int, target: int, started: float) -> None:
        now = time.monotonic()
        if height < target and now - self._last_progress < PROGRESS_EVERY:
            return
        self._last_progress = now
        rate = height / max(now - started, 1e-3)
        self.log.info("%s: height=%d of %d (%.1f%%, %.0f/s)", what, height, target,
                      100.0 * height / max(target, 1), rate)

    # -- 3. mempool ----------------------------------------------------------------------------

    def sync_mempool(self) -> None:
        with self._mempool_lock:
            listing = self.rpc.call("getrawmempool", False, True)
            sequence = listing["mempool_sequence"]
            if sequence == self._mempool_sequence:
                return
            upstream = [hex_to_hash(t) for t in listing["txids"]]
            with self.service.lock:
                ours = set(self.state.mempool.entries)
            wanted = set(upstream)
            new = [t for t in upstream if t not in ours]
            fetched: list[tuple[Transaction, int, int, int]] = []
            for i in range(0, len(new), MEMPOOL_BATCH):
                part = new[i:i + MEMPOOL_BATCH]
                calls: list[tuple[Any, ...]] = []
                for t in part:
                    calls += [("getrawtransaction", hash_to_hex(t)), ("getmempoolentry", hash_to_hex(t))]
                answers = self.rpc.batch_outcomes(calls)
                for k in range(len(part)):
                    raw, entry = answers[2 * k], answers[2 * k + 1]
                    if isinstance(raw, UpstreamRejected) or isinstance(entry, UpstreamRejected):
                        continue    # mined or evicted upstream since the listing
                    fee = round(float(entry["fees"]["base"]) * COIN)
                    fetched.append((Transaction.from_hex(raw), fee, int(entry["time"]), int(entry["height"])))
            gone = [t for t in ours if t not in wanted]
            with self.service.lock:
                for txid in gone:
                    self.state.mempool_remove(txid, "expiry")
                for tx, fee, when, height in _parents_first(fetched):
                    self.state.mempool_add(tx, fee, when, height)
                self.service.notify()
            self._mempool_sequence = sequence

    # -- relaying ------------------------------------------------------------------------------

    def relay(self, tx: Transaction, max_fee: int = 0) -> None:
        """sendrawtransaction on the upstream node (its error is ours: UpstreamRejected), after checking
        the fee against `max_fee` when it is positive; then mirror its mempool."""
        hex_tx = tx.hex()
        try:
            if max_fee > 0:
                fee = self._fee(tx)
                if fee is not None and fee > max_fee:
                    raise FeeAboveMaximum()
            self.rpc.call("sendrawtransaction", hex_tx, 0)
        except (UpstreamRejected, FeeAboveMaximum):
            raise
        except UpstreamError as e:
            raise ChainSourceUnavailable(f"Chain source unavailable: {e}") from None
        self.sync_mempool()

    def _fee(self, tx: Transaction) -> int | None:
        """The fee of `tx` as the upstream node sees it: testmempoolaccept, or (a node without it)
        the parents' outputs through getrawtransaction. None when it cannot be known here
        (missing inputs: the upstream's sendrawtransaction then says why)."""
        try:
            result = self.rpc.call("testmempoolaccept", [tx.hex()], 0)[0]
            fee = result.get("fees", {}).get("base")
            return None if fee is None else round(float(fee) * COIN)
        except UpstreamRejected as e:
            if e.code != -32601:        # RPC_METHOD_NOT_FOUND
                raise
        parents = self.rpc.batch_outcomes([("getrawtransaction", hash_to_hex(i.prevout.hash)) for i in tx.vin])
        total = 0
        for txin, raw in zip(tx.vin, parents, strict=True):
            if isinstance(raw, UpstreamRejected):
                return None
            outs = Transaction.from_hex(raw).vout
            if txin.prevout.n >= len(outs):
                return None
            total += outs[txin.prevout.n].value
        return total - sum(o.value for o in tx.vout)


def _parents_first(items: list[tuple[Transaction, int, int, int]]) -> list[tuple[Transaction, int, int, int]]:
    """The transactions reordered so that a parent comes before its children (they form no cycles)."""
    by_id = {it[0].txid(): it for it in items}
    done: set[bytes] = set()
    out = []
    for item in items:
        stack = [item]
        while stack:
            cur = stack[-1]
            waiting = [by_id[i.prevout.hash] for i in cur[0].vin
                       if i.prevout.hash in by_id and i.prevout.hash not in done]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if cur[0].txid() not in done:
                done.add(cur[0].txid())
                out.append(cur)
    return out


def hint_union(hints: list[ScanHint]) -> ScanHint:
    """One ScanHint for several listeners. Those that need no block (since None) count for
    nothing: one listener that needs blocks beside them gives its own hint unchanged."""
    hints = [h for h in hints if h.since is not None] or hints[:1]
    if len(hints) == 1:
        return hints[0]
    if not hints:
        return NOTHING
    times = [h.since for h in hints if h.since is not None]
    if not times:
        return NOTHING
    scripts: set[bytes] | None = set()
    for h in hints:
        if h.since is None:
            continue
        if h.scripts is None:
            scripts = None
            break
        scripts |= h.scripts
    outpoints = None
    if scripts is not None and all(h.outpoints is not None for h in hints if h.since is not None):
        outpoints = AnyOf([h.outpoints for h in hints if h.since is not None])
    return ScanHint(min(times), scripts, sum(h.version for h in hints), outpoints)

