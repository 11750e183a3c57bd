"""Follower mode (-chainsource): the chain as Quill keeps it when it trusts its upstream node.

The upstream node is the user's own Bitcoin Core, which has validated every block
and script itself. Quill therefore keeps only
  * the header chain, checked here: each header links to its parent, carries the
    difficulty the rules require (Core's GetNextWorkRequired; min-difficulty
    testnets: up to the limit) and meets it (CheckProofOfWork). A lying upstream
    cannot make Quill accept a chain without the work; it can only withhold blocks
    or choose which valid chain Quill follows (the upstream's best chain is ours);
  * which of those headers the wallets have seen (the active chain up to `tip`);
    `best_header` may be further ahead while the blocks are still being delivered;
  * a mirror of the upstream mempool, taken as the upstream gives it (no checks).
No raw block, UTXO set, undo data or txindex is stored and no script is run:
blocks are fetched from the upstream node when a wallet needs them and dropped.

Storage: the `blocks` table of chain.sqlite holds headers with an empty `raw`;
meta `tip` (delivered) and `best_header`; meta `mode` = b"follow" marks the file as
a follower's, which the built-in chain refuses to open. Each batch of headers and
each delivery is one SQLite transaction, so kill -9 leaves a consistent file.
"""
from __future__ import annotations

import time as _time
from typing import Any, Callable

from quill.atomic_store import RolledBack
from quill.tx.hashes import hash_to_hex

from . import index as ix
from .block import Block, BlockHeader
from .errors import BadHeader
from .mempool import REASON_BLOCK, REASON_CONFLICT, Mempool, MempoolEntry
from .params import MAX_TIP_AGE, ChainParams
from .pow import check_proof_of_work, next_work_required
from .store import ChainStore
from .validation import ChainError

FOLLOW_MODE = b"follow"


class TrustedChainState:
    def __init__(self, params: ChainParams, store: ChainStore, clock: Callable[[], float] = _time.time) -> None:
        self.params = params
        self.store = store
        self.clock = clock
        self.index = ix.BlockIndex()
        self.mempool = Mempool()
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        self.best_header: ix.BlockEntry | None = None
        self.ibd_latched = False
        self._events_mark = 0
        transactions = store.transaction
        transactions.handled = (BadHeader, RolledBack)
        transactions.on_begin = self._mark_events
        transactions.resync = self._resync
        self._load()

    # -- start -----------------------------------------------------------------------

    def _load(self) -> None:
        mode = self.store.get_meta("mode")
        rows = self.store.block_rows()
        if rows and mode != FOLLOW_MODE:
            raise ChainError(f"{self.store.path} holds a built-in chain; follow another node in another datadir")
        with self.store.transaction():
            self.store.set_meta("mode", FOLLOW_MODE)
            self.store.db.execute("DELETE FROM mempool")   # the mirror refills from the upstream node
        self._read_headers(rows)

    def _read_headers(self, rows: list[Any]) -> None:
        """The header index and the active chain from chain.sqlite's rows."""
        if not rows:
            return
        if rows[0][0] != self.params.genesis_hash:
            raise ChainError(f"{self.store.path} holds a chain whose genesis is {hash_to_hex(rows[0][0])}, "
                             f"not the {self.params.name} genesis block")
        entries = self.index.entries
        for hash_, prev, height, header, n_tx, _status, seq in rows:
            parent = entries.get(prev)
            if parent is None and height != 0:
                raise ChainError(f"block {hash_to_hex(hash_)} has no parent in {self.store.path}")
            self.index.add(hash_, parent, BlockHeader.from_bytes(header), n_tx, ix.VALID_DATA, seq)
        tip = self.index.get(self.store.get_meta("tip") or self.params.genesis_hash)
        best = self.index.get(self.store.get_meta("best_header") or self.params.genesis_hash)
        if tip is None or best is None:
            raise ChainError(f"the stored tip of {self.store.path} is not in its header chain")
        self.index.set_tip(tip)
        for e in self.index.active:
            e.status = ix.VALID_CONNECTED
        self.best_header = best

    # -- after a failed write (quill.atomic_store) ----------------------------------------

    def _mark_events(self) -> None:
        self._events_mark = len(self.events)

    def _resync(self) -> None:
        """A transaction did not commit: the headers and the active chain become what
        chain.sqlite holds; the lost transaction's events are dropped. The mempool mirror is
        memory only and refills from the upstream node."""
        kept = self.events[:self._events_mark]
        self.index.clear()
        self.best_header = None
        self._read_headers(self.store.block_rows())
        self.events = kept

    # -- reading -------------------------------------------------------------------------

    @property
    def tip(self) -> ix.BlockEntry | None:
        return self.index.tip

    def is_initial_block_download(self) -> bool:
        """Core's IsInitialBlockDownload, where 'validated' means 'delivered to the wallets'."""
        tip = self.tip
        if tip is None:
            return True
        if not self.ibd_latched and tip is self.best_header and tip.header.time >= self.clock() - MAX_TIP_AGE:
            self.ibd_latched = True
        return not self.ibd_latched

    def verification_progress(self) -> float:
        """Delivered blocks over known headers (Core estimates by transactions; headers carry no count)."""
        if self.tip is None or self.best_header is None or self.best_header.height == 0:
            return 1.0 if self.tip is not None else 0.0
        return min(1.0, self.tip.height / self.best_header.height)

    def best_path(self) -> list[ix.BlockEntry]:
        """The entries from the fork with the active chain (excluded) up to the best header, parents first."""
        path = []
        e = self.best_header
        while e is not None and not self.index.contains(e):
            path.append(e)
            e = e.prev
        path.reverse()
        return path

    # -- headers -------------------------------------------------------------------------

    def add_headers(self, headers: list[BlockHeader]) -> ix.BlockEntry | None:
        """Check and store consecutive headers; the last one becomes the best header. Raises BadHeader."""
        if not headers:
            raise BadHeader("no headers")
        first = headers[0]
        with self.store.transaction():
            if not self.index.entries:
                if first.hash() != self.params.genesis_hash:
                    raise BadHeader(f"the upstream genesis block {hash_to_hex(first.hash())} is not "
                                    f"the {self.params.name} genesis block")
                entry = self.index.add(first.hash(), None, first, 0, ix.VALID_CONNECTED)
                self.store.add_block(entry.hash, bytes(32), 0, first.serialize(), 0, b"", entry.status, entry.seq)
                self.store.set_meta("tip", entry.hash)
                self.index.set_tip(entry)
                self.best_header = entry
                headers = headers[1:]
            if not headers:
                return self.best_header
            parent = self.index.get(headers[0].prev_hash)
            if parent is None:
                raise BadHeader(f"header {hash_to_hex(headers[0].hash())} does not connect to a known header")
            prev: ix.BlockEntry = parent
            rows = []
            for header in headers:
                hash_ = header.hash()
                if header.prev_hash != prev.hash:
                    raise BadHeader(f"header {hash_to_hex(hash_)} does not follow {hash_to_hex(prev.hash)}")
                known = self.index.get(hash_)
                if known is not None:
                    prev = known
                    continue
                required = next_work_required(prev, self.params)
                if required is not None and header.bits != required:
                    raise BadHeader(f"header {hash_to_hex(hash_)} has nBits {header.bits:08x}, "
                                    f"the rules require {required:08x} (bad-diffbits)")
                if not check_proof_of_work(hash_, header.bits, self.params.pow_limit):
                    raise BadHeader(f"header {hash_to_hex(hash_)} fails its proof of work (high-hash)")
                entry = self.index.add(hash_, prev, header, 0, ix.VALID_DATA)
                rows.append((hash_, prev.hash, entry.height, header.serialize(), 0, b"", entry.status, entry.seq))
                prev = entry
            self.store.db.executemany("INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self.set_best_header(prev)
        return prev

    def set_best_header(self, entry: ix.BlockEntry) -> None:
        """The upstream node's best block (it decides, even for less work); inside the caller's transaction."""
        with self.store.transaction():
            self.best_header = entry
            self.store.set_meta("best_header", entry.hash)

    # -- delivery to the listeners ---------------------------------------------------------

    def connect(self, entry: ix.BlockEntry, block: Block) -> None:
        """Make `entry` (a child of the tip) the tip and announce `block`: the full block when a
        listener needs it, else the header with no transactions (see follower.py)."""
        assert entry.prev is self.tip
        with self.store.transaction():
            self.store.set_meta("tip", entry.hash)
            self.index.set_tip(entry)
            entry.status = ix.VALID_CONNECTED
            if block.txs:
                self._remove_for_block(block)
        self.events.append(("block_connected", (block, entry.height)))

    def advance(self, entry: ix.BlockEntry) -> None:
        """Move the tip up to `entry` (a descendant of it) without announcing the blocks in between:
        they hold nothing any listener asked for. The last one is announced by the caller."""
        with self.store.transaction():
            self.store.set_meta("tip", entry.hash)
            old = self.tip
            self.index.set_tip(entry)
            e = entry
            while e is not old and e is not None:
                e.status = ix.VALID_CONNECTED
                e = e.prev

    def disconnect_tip(self, block: Block) -> None:
        entry = self.tip
        assert entry is not None and entry.prev is not None
        with self.store.transaction():
            self.store.set_meta("tip", entry.prev.hash)
            self.index.set_tip(entry.prev)
            entry.status = ix.VALID_DATA
        self.events.append(("block_disconnected", (block, entry.height)))

    # -- the mempool mirror ----------------------------------------------------------------

    def mempool_add(self, tx: Any, fee: int, when: int, height: int) -> None:
        if tx.txid() in self.mempool:
            return
        entry = MempoolEntry(tx, fee, when, height, self.mempool.sequence)
        self.mempool.add(entry)
        self.events.append(("transaction_added_to_mempool", (tx,)))

    def mempool_remove(self, txid: bytes, reason: str) -> None:
        """Remove `txid` and its in-pool descendants, children first."""
        if txid not in self.mempool:
            return
        gone = self.mempool.descendants(txid)
        for t in reversed(gone):
            entry = self.mempool.remove(t)
            self.events.append(("transaction_removed_from_mempool", (entry.tx, reason)))

    def _remove_for_block(self, block: Block) -> None:
        """Core's removeForBlock on the mirror: mined transactions leave it, and what they conflict with."""
        pool = self.mempool
        for tx in block.txs:
            txid = tx.txid()
            if txid in pool:
                entry = pool.remove(txid)
                self.events.append(("transaction_removed_from_mempool", (entry.tx, REASON_BLOCK)))
            if tx.is_coinbase():
                continue
            for txin in tx.vin:
                spender = pool.spender(txin.prevout)
                if spender is not None and spender != txid:
                    self.mempool_remove(spender, REASON_CONFLICT)

    # -- consistency -----------------------------------------------------------------------

    def check_consistency(self) -> list[str]:
        problems = []
        active = self.index.active
        for h, e in enumerate(active):
            if e.height != h or (h and e.prev is not active[h - 1]):
                problems.append(f"active chain broken at height {h}")
        if self.tip is not None and self.store.get_meta("tip") != self.tip.hash:
            problems.append("stored tip differs from the active tip")
        if self.best_header is not None and self.store.get_meta("best_header") != self.best_header.hash:
            problems.append("stored best header differs")
        return problems
