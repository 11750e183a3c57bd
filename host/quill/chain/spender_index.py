"""Core's spender index (-txospenderindex, index/txospenderindex.cpp) on the built-in chain: for each
output spent in the active chain, the transaction spending it and that transaction's block, which
gettxspendingprevout answers for confirmed spends.

Built as Core's BaseIndex builds an index. Its best block is kept in the chain store's meta
"txospenderindex". Once it is the tip, the index is synced: each block connect and disconnect
changes it in the same chain-store transaction (ChainState._connect and _disconnect_tip call
`connected` and `disconnected`), so a kill at any instant leaves it consistent with the tip. Until
then (first start with the option, a restart after running without it) `SpenderIndexSync` catches
it up in the background a few blocks per transaction, first rewinding the blocks it holds that a
reorg left stale, and getindexinfo reports it unsynced at its height; block connects meanwhile
leave it alone, as Core's BlockConnected before m_synced.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from .block import Block
from .store import ChainStore

NAME = "txospenderindex"     # Core's GetName(), getindexinfo's key and the meta key
BATCH = 100                  # blocks per transaction while catching up


def best_hash(store: ChainStore) -> bytes | None:
    """The last block the index covers, or None before it has covered the genesis block."""
    value = store.get_meta(NAME)
    return None if value is None else bytes(value)


def _spends(block: Block) -> list[tuple[bytes, int, bytes]]:
    return [(txin.prevout.hash, txin.prevout.n, tx.txid()) for tx in block.txs[1:] for txin in tx.vin]


def _add(store: ChainStore, block: Block, block_hash: bytes) -> None:
    store.add_spenders([(txid, n, spender, block_hash) for txid, n, spender in _spends(block)])
    store.set_meta(NAME, block_hash)


def _remove(store: ChainStore, block: Block, prev_hash: bytes) -> None:
    store.remove_spenders([(txid, n) for txid, n, _ in _spends(block)])
    store.set_meta(NAME, prev_hash)


def connected(store: ChainStore, block: Block, block_hash: bytes, prev_hash: bytes) -> None:
    """A block became the tip, inside the caller's transaction: indexed when the index is synced."""
    if best_hash(store) == prev_hash:
        _add(store, block, block_hash)


def disconnected(store: ChainStore, block: Block, block_hash: bytes, prev_hash: bytes) -> None:
    """The tip `block` was disconnected, inside the caller's transaction."""
    if best_hash(store) == block_hash:
        _remove(store, block, prev_hash)


def progress(state: Any) -> tuple[bool, int]:
    """(synced, best block height) as getindexinfo reports them; the caller holds the chain lock."""
    best = best_hash(state.store)
    entry = None if best is None else state.index.get(best)
    return entry is state.tip, 0 if entry is None else entry.height


def step(state: Any, limit: int = BATCH) -> bool:
    """Up to `limit` blocks of catching up, in one transaction of the caller's; True when synced."""
    store, index = state.store, state.index
    for _ in range(limit):
        best = best_hash(store)
        entry = None if best is None else index.get(best)
        if best is not None and entry is None:
            raise RuntimeError(f"{NAME}'s best block is not in the block index")
        if entry is state.tip:
            return True
        if entry is not None and not index.contains(entry):
            _remove(store, state.read_block(entry), entry.prev.hash)    # a reorg left it stale
            continue
        following = index.active[0 if entry is None else entry.height + 1]
        _add(store, state.read_block(following), following.hash)
    return best_hash(store) == state.tip.hash


class SpenderIndexSync:
    """The background catch-up (Core's BaseIndex::Sync thread), `BATCH` blocks per chain-lock hold."""

    def __init__(self, service: Any, log: logging.Logger) -> None:
        self.service = service
        self.log = log
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="txospenderindex", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()

    def _run(self) -> None:
        service = self.service
        with service.lock:
            synced, height = progress(service.state)
        if not synced:
            self.log.info("Syncing %s with block chain from height %d", NAME, height)
        while not self.stopping.is_set():
            with service.lock:
                state = service.state
                try:
                    with state.store.transaction():
                        done = step(state)
                except Exception as e:  # a failed write (the disk): the index stops, the chain goes on
                    self.log.error("%s: sync failed (%s), the index stays at its last block", NAME,
                                   type(e).__name__)
                    return
                if done:
                    self.log.info("%s is enabled at height %d", NAME, state.tip.height)
                    return
