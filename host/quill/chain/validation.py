"""The chain state: accepting blocks, connecting and disconnecting them, reorgs, and mempool acceptance
(Core's validation.cpp, in the small).

ChainState is not thread-safe; quill.chain.service.ChainService serialises
every call under its lock. What happened is appended to `self.events` as
(name, args) in the order Core's validation interface would signal it; the
service hands them to listeners once the change is committed.
"""
import os
import time as _time

from quill.atomic_store import DiskSpaceTooLow, RolledBack, check_disk_space
from quill.tx.hashes import hash_to_hex

from . import index as ix
from . import policy, replacement, rules, spender_index
from .block import Block
from .coins import Coin, deserialize_undo, serialize_undo
from .fee_estimator import NewMempoolTransactionInfo, RemovedMempoolTransactionInfo
from .mempool import REASON_BLOCK, REASON_CONFLICT, REASON_REORG, REASON_REPLACED, Mempool, MempoolEntry
from .params import MAX_FEE_ESTIMATION_TIP_AGE, MAX_TIP_AGE, block_subsidy
from .rules import Invalid
from .script_check import script_failure
from .store import ChainStore


class ChainError(Exception):
    """The chain cannot start: wrong chain in the datadir, no genesis block."""


class ChainState:
    def __init__(self, params, store: ChainStore, genesis: Block | None = None, clock=_time.time,
                 persist: bool = True):
        self.params = params
        self.store = store
        self.clock = clock
        self.index = ix.BlockIndex()
        self.mempool = Mempool()
        self.events: list = []
        self.ibd_latched = False
        self.spender_index = False      # -txospenderindex: kept with the tip once synced
        self._events_mark = 0
        transactions = store.transaction
        transactions.handled = (Invalid, RolledBack)
        transactions.on_begin = self._mark_events
        transactions.resync = self._resync
        self._load(genesis, persist)

    # -- start --------------------------------------------------------------------

    def _load(self, genesis, persist: bool = True) -> None:
        rows = self.store.block_rows()
        if not rows:
            if genesis is None:
                return  # a follower fetches the genesis block from its upstream node
            self.add_genesis(genesis)
            return
        from .block import BlockHeader
        if rows[0][0] != self.params.genesis_hash:
            raise ChainError(f"{self.store.path} holds a chain whose genesis is {hash_to_hex(rows[0][0])}, "
                             f"not the {self.params.name} genesis block")
        for hash_, prev, height, header, n_tx, status, seq in rows:
            parent = self.index.get(prev)
            if parent is None and height != 0:
                raise ChainError(f"block {hash_to_hex(hash_)} has no parent in {self.store.path}")
            self.index.add(hash_, parent, BlockHeader.from_bytes(header), n_tx, status, seq)
        tip = self.index.get(self.store.get_meta("tip") or self.params.genesis_hash)
        if tip is None:
            raise ChainError(f"the stored tip of {self.store.path} is not in its block index")
        self.index.set_tip(tip)
        self._reload_mempool(persist)

    def add_genesis(self, block: Block) -> None:
        """Store and activate block 0. Core never adds the genesis outputs to the UTXO set."""
        hash_ = block.hash()
        if hash_ != self.params.genesis_hash:
            raise ChainError(f"genesis block {hash_to_hex(hash_)} is not the {self.params.name} genesis block")
        with self.store.transaction():
            entry = self.index.add(hash_, None, block.header, len(block.txs), ix.VALID_CONNECTED)
            self.store.add_block(hash_, bytes(32), 0, block.header.serialize(), len(block.txs),
                                 block.serialize(), entry.status, entry.seq)
            self.store.set_meta("tip", hash_)
        self.index.set_tip(entry)

    def _reload_mempool(self, persist: bool = True) -> None:
        """The stored mempool, accepted again in its order; `persist` False (a resync) keeps the
        file as it is, since a resync must not write."""
        from quill.tx.transaction import Transaction
        rows = self.store.mempool_rows()
        if not rows:
            return
        if self.store.read_only:    # a replica: its memory only, the leader keeps the stored mempool
            for raw, when in rows:
                try:
                    self.accept_to_mempool(Transaction.from_bytes(raw), when)
                except Invalid:
                    pass
            self.events = [event for event in self.events if event[0] == "mempool_entry_added"]
            return
        try:
            with self.store.transaction():
                self.store.db.execute("DELETE FROM mempool")
                for raw, when in rows:
                    try:
                        self.accept_to_mempool(Transaction.from_bytes(raw), when)
                    except Invalid:
                        pass  # spent or confirmed while we were down: dropped, as Core's LoadMempool
                if not persist:
                    raise RolledBack()
        except RolledBack:
            pass
        # Core's LoadMempool accepts them as any transaction: the fee estimator (subscribed
        # before the chain starts) hears of them; nobody else is listening yet.
        self.events = [event for event in self.events if event[0] == "mempool_entry_added"]

    # -- after a failed write (quill.atomic_store) ---------------------------------

    def _mark_events(self) -> None:
        self._events_mark = len(self.events)

    def _resync(self) -> None:
        """A transaction did not commit: the index, the active chain and the mempool become what
        chain.sqlite holds, and the events of the lost transaction are dropped (the events of
        transactions that did commit before it, in a reorg, stay to be delivered)."""
        kept = self.events[:self._events_mark]
        sequence = self.mempool.sequence
        self.index.clear()
        self.mempool.clear()
        self._load(None, persist=False)
        self.mempool.sequence = max(self.mempool.sequence, sequence)
        self.events = kept

    # -- reading ------------------------------------------------------------------

    @property
    def tip(self):
        return self.index.tip

    def read_block(self, entry) -> Block:
        return Block.from_bytes(self.store.block_raw(entry.hash))

    def read_undo(self, entry):
        data = self.store.get_undo(entry.hash)
        return None if data is None else deserialize_undo(data)

    def chain_coin(self, prevout):
        return self.store.get_coin(prevout.hash, prevout.n)

    def is_initial_block_download(self) -> bool:
        """Core's IsInitialBlockDownload (regtest view): the tip is older than -maxtipage; latches false."""
        if not self.ibd_latched and self.tip.header.time >= self.clock() - MAX_TIP_AGE:
            self.ibd_latched = True
        return not self.ibd_latched

    def is_current_for_fee_estimation(self) -> bool:
        """Core's IsCurrentForFeeEstimation: out of IBD, a tip at most 3 hours old, and no more
        than one block behind the best header; the estimator only counts transactions seen then."""
        if self.is_initial_block_download():
            return False
        if self.tip.header.time < int(self.clock()) - MAX_FEE_ESTIMATION_TIP_AGE:
            return False
        if len(self.index.entries) == self.tip.height + 1:
            return True     # every known block is on the active chain: the tip is the best header
        return self.tip.height >= self.index.best_candidate().height - 1

    # -- accepting blocks ---------------------------------------------------------

    def check_new_block(self, block: Block):
        """Every check that needs no UTXO set; returns the parent entry. Raises Invalid, stores nothing."""
        rules.check_block(block, self.params)
        prev = self.index.get(block.header.prev_hash)
        if prev is None:
            raise Invalid("prev-blk-not-found")
        if prev.failed:
            raise Invalid("bad-prevblk")
        rules.check_header_context(block.header, prev, self.params, int(self.clock()))
        rules.check_block_context(block, prev, self.params)
        return prev

    def process_block(self, block: Block, follow: bool = False):
        """Core's ProcessNewBlock. Returns (entry, became_tip). Raises Invalid for a rejected block.

        A block that extends the tip is stored and connected in ONE transaction, so a
        block failing its connection leaves nothing behind. Any other block is stored,
        then the most-work chain is activated (`follow`: the caller picks the tip instead).
        """
        hash_ = block.hash()
        known = self.index.get(hash_)
        if known is not None:
            # Core's AcceptBlockHeader: a block marked invalid stays so (generate remaking the block
            # that invalidateblock dropped gets "block not accepted"); a known one is accepted again
            if known.failed:
                raise Invalid("duplicate-invalid")
            return known, self.index.contains(known)
        prev = self.check_new_block(block)
        # Core's CheckDiskSpace before a block is written: refused whole, nothing changes
        if self.store.on_local_disk and not check_disk_space(os.path.dirname(self.store.path), 2 * block.size()):
            raise DiskSpaceTooLow(self.store.path)
        if prev is self.tip and not follow:
            with self.store.transaction():
                entry = self._store_block(hash_, prev, block)
                try:
                    self._connect(entry, block)
                except Invalid:
                    self.index.entries.pop(hash_, None)
                    self.index.set_tip(prev)
                    raise
            self._after_connect([])
            return entry, True
        with self.store.transaction():
            entry = self._store_block(hash_, prev, block)
        if follow:
            return entry, False
        self.activate_best_chain()
        if entry.failed:
            raise self._last_failure or Invalid("bad-block")
        return entry, self.index.contains(entry)

    def _store_block(self, hash_, prev, block):
        entry = self.index.add(hash_, prev, block.header, len(block.txs), ix.VALID_DATA)
        raw = block.serialize()
        self.store.add_block(hash_, prev.hash, entry.height, block.header.serialize(), len(block.txs),
                             raw, entry.status, entry.seq)
        self.store.add_block_txids(hash_, [tx.txid() for tx in block.txs], block.stripped_size())
        return entry

    # -- connecting and disconnecting ---------------------------------------------

    def _connect(self, entry, block) -> None:
        """Core's ConnectBlock + ConnectTip, inside the caller's transaction."""
        height = entry.height
        created: dict = {}
        spent_in_block: set = set()
        undo: list = []
        fees = 0
        for i, tx in enumerate(block.txs):
            txid = tx.txid()
            if i:
                coins = []
                for txin in tx.vin:
                    key = (txin.prevout.hash, txin.prevout.n)
                    coin = created.pop(key, None)
                    if coin is None:
                        coin = None if key in spent_in_block else self.store.get_coin(*key)
                        if coin is None:
                            raise Invalid("bad-txns-inputs-missingorspent",
                                          "CheckTxInputs: inputs missing/spent")
                        spent_in_block.add(key)
                    coins.append(coin)
                try:
                    fees += rules.check_tx_inputs(tx, coins, height)
                except Invalid as e:
                    raise Invalid(e.reason, f"{e.debug} (tx {tx.txid_hex()})") from None
                failure = script_failure(tx, coins, standard=False)
                if failure is not None:
                    raise Invalid(failure, f"tx {tx.txid_hex()}")
                undo.extend(coins)
            elif self.store.has_outputs(txid):
                raise Invalid("bad-txns-BIP30", "tried to overwrite transaction")
            for n, out in enumerate(tx.vout):
                if not _unspendable(out.script_pubkey):
                    created[(txid, n)] = Coin(out.value, out.script_pubkey, height, i == 0)
        coinbase_out = sum(o.value for o in block.txs[0].vout)
        limit = fees + block_subsidy(height, self.params)
        if coinbase_out > limit:
            raise Invalid("bad-cb-amount", f"coinbase pays too much (actual={coinbase_out} vs limit={limit})")
        store = self.store
        store.spend_coins(spent_in_block)
        store.add_coins([(k[0], k[1], c.value, c.script_pubkey, c.height, int(c.coinbase))
                         for k, c in created.items()])
        store.put_undo(entry.hash, serialize_undo(undo))
        store.index_txs([tx.txid() for tx in block.txs], entry.hash)
        if self.spender_index:
            spender_index.connected(store, block, entry.hash, entry.prev.hash)
        entry.status = (entry.status & ~ix.VALID_DATA) | ix.VALID_CONNECTED
        store.set_status(entry.hash, entry.status)
        store.set_meta("tip", entry.hash)
        self.index.set_tip(entry)
        self._remove_for_block(block, height)
        self.events.append(("block_connected", (block, height)))

    def _disconnect_tip(self):
        """Core's DisconnectTip, as one transaction; returns the block's transactions for the mempool."""
        entry = self.tip
        block = self.read_block(entry)
        undo = deserialize_undo(self.store.get_undo(entry.hash))
        with self.store.transaction():
            created = []
            for tx in block.txs:
                txid = tx.txid()
                created += [(txid, n) for n in range(len(tx.vout))]
            restored = []
            k = 0
            for tx in block.txs[1:]:
                for txin in tx.vin:
                    c = undo[k]
                    k += 1
                    restored.append((txin.prevout.hash, txin.prevout.n, c.value, c.script_pubkey,
                                     c.height, int(c.coinbase)))
            # Restored before the block's own outputs go: an output created and spent in this
            # block leaves with them, as Core's DisconnectBlock undoes transactions last to first.
            self.store.add_coins(restored)
            self.store.spend_coins(created)
            self.store.delete_undo(entry.hash)
            if self.spender_index:
                spender_index.disconnected(self.store, block, entry.hash, entry.prev.hash)
            self.store.set_meta("tip", entry.prev.hash)
            self.index.set_tip(entry.prev)
        self.events.append(("block_disconnected", (block, entry.height)))
        return block.txs[1:]

    # -- chain selection -----------------------------------------------------------

    _last_failure = None

    def activate_best_chain(self, target=None) -> None:
        """Core's ActivateBestChain: move to the most-work valid chain (or to `target`, for a follower).

        One transaction, the mempool's new state included: a reorg that cannot be written whole
        (a full disk) leaves the chain, the mempool and memory where they were, so the
        transactions of the blocks it disconnected are never lost between two commits."""
        with self.store.transaction():
            self._activate_best_chain(target)

    def _activate_best_chain(self, target) -> None:
        resurrected: list = []
        while True:
            best = target if target is not None else self.index.best_candidate()
            tip = self.tip
            if best is None or best is tip:
                break
            if target is None and not tip.failed and not _better(best, tip):
                break
            fork = self.index.find_fork(best)
            while self.tip is not fork:
                resurrected = self._disconnect_tip() + resurrected
            path = []
            e = best
            while e is not fork:
                path.append(e)
                e = e.prev
            failed = False
            for entry in reversed(path):
                block = self.read_block(entry)
                try:
                    with self.store.transaction():
                        self._connect(entry, block)
                except Invalid as e:
                    self._last_failure = e
                    self.index.set_tip(entry.prev)
                    self._mark_failed(entry)
                    failed = True
                    break
                resurrected = [tx for tx in resurrected if tx.txid() not in self._mined_txids(block)]
            if failed and target is not None:
                break
        self._after_connect(resurrected)

    @staticmethod
    def _mined_txids(block):
        return {tx.txid() for tx in block.txs}

    def _mark_failed(self, entry) -> None:
        with self.store.transaction():
            entry.status |= ix.FAILED
            self.store.set_status(entry.hash, entry.status)
            for d in self.index.descendants(entry):
                d.status |= ix.FAILED_CHILD
                self.store.set_status(d.hash, d.status)

    def invalidate(self, entry) -> None:
        """Core's InvalidateBlock: disconnect down to the block's parent, mark it and its descendants
        failed; one transaction, as activate_best_chain."""
        if entry.height == 0:
            raise Invalid("genesis", "cannot invalidate the genesis block")
        with self.store.transaction():
            self._invalidate(entry)

    def _invalidate(self, entry) -> None:
        resurrected: list = []
        while self.index.contains(entry):
            resurrected = self._disconnect_tip() + resurrected
        self._mark_failed(entry)
        self._readd(resurrected)
        self.activate_best_chain()

    def reconsider(self, entry) -> None:
        """Core's ReconsiderBlock: clear failure on the block, its descendants and its ancestors;
        one transaction, as activate_best_chain."""
        with self.store.transaction():
            for e in [entry] + self.index.descendants(entry):
                if e.status & ix.FAILED_MASK:
                    e.status &= ~ix.FAILED_MASK
                    self.store.set_status(e.hash, e.status)
            e = entry.prev
            while e is not None:
                if e.status & ix.FAILED_MASK:
                    e.status &= ~ix.FAILED_MASK
                    self.store.set_status(e.hash, e.status)
                e = e.prev
            self.activate_best_chain()

    # -- mempool ---------------------------------------------------------------------

    def accept_to_mempool(self, tx, now=None, test_only=False, bypass_limits=False):
        """Core's AcceptToMemoryPool, replacement included: returns the MempoolEntry or raises Invalid.

        The transactions it replaces (quill.chain.replacement) leave the pool with reason
        "replaced" before it enters, as Core's ChangeSet::Apply; every check runs before
        anything changes, so a refused transaction leaves the pool and the store as they were.
        `test_only` (testmempoolaccept) runs every check and changes nothing. `bypass_limits`:
        a transaction of a disconnected block coming back (the fee estimator ignores those).
        `missing_inputs` is set on the Invalid for "bad-txns-inputs-missingorspent".
        """
        pool = self.mempool
        rules.check_transaction(tx)
        if tx.is_coinbase():
            raise Invalid("coinbase")
        policy.check_standard(tx)
        tip = self.tip
        if not rules.is_final_tx(tx, tip.height + 1, rules.median_time_past(tip)):
            raise Invalid("non-final")
        txid = tx.txid()
        existing = pool.get(txid)
        if existing is not None:
            if existing.tx.wtxid() == tx.wtxid():
                raise Invalid("txn-already-in-mempool")
            raise Invalid("txn-same-nonwitness-data-in-mempool")
        conflicts = replacement.direct_conflicts(pool, tx)
        coins = []
        for txin in tx.vin:
            coin = pool.coin(txin.prevout) or self.chain_coin(txin.prevout)
            if coin is None:
                if self.store.has_outputs(txid):
                    raise Invalid("txn-already-known")
                raise Invalid("bad-txns-inputs-missingorspent", missing_inputs=True)
            coins.append(coin)
        fee = rules.check_tx_inputs(tx, coins, tip.height + 1)
        entry = MempoolEntry(tx, fee, int(self.clock() if now is None else now), tip.height, 0)
        policy.check_ephemeral_dust(tx, fee)
        policy.check_min_relay_fee(fee, entry.vsize)
        change = replacement.check(pool, entry, conflicts)
        failure = script_failure(tx, coins, standard=True)
        if failure is not None:
            raise Invalid(failure)
        if test_only:
            return entry
        for conflict in change.conflicts:
            self.remove_from_mempool(conflict, REASON_REPLACED)
        entry.sequence = pool.sequence
        pool.add(entry)
        self.store.mempool_add(txid, tx.serialize(), entry.time)
        self.events.append(("transaction_added_to_mempool", (tx,)))
        has_no_mempool_parents = not any(txin.prevout.hash in pool for txin in tx.vin)
        self.events.append(("mempool_entry_added", (NewMempoolTransactionInfo(
            txid, fee, entry.vsize, entry.height, bypass_limits, False, self.is_current_for_fee_estimation(),
            has_no_mempool_parents),)))
        return entry

    def remove_from_mempool(self, txid, reason) -> None:
        """Remove `txid` and every in-pool descendant, children first."""
        if txid not in self.mempool:
            return
        gone = self.mempool.descendants(txid)
        for t in reversed(gone):
            entry = self.mempool.remove(t)
            self.events.append(("transaction_removed_from_mempool", (entry.tx, reason)))
        self.store.mempool_remove(gone)

    def _remove_for_block(self, block, height) -> None:
        """Core's removeForBlock: mined transactions leave the pool; conflicting ones and their children too.
        Then the entries the block confirmed go to the fee estimator (MempoolTransactionsRemovedForBlock)."""
        pool = self.mempool
        confirmed = []
        for tx in block.txs:
            txid = tx.txid()
            if txid in pool:
                entry = pool.remove(txid)
                confirmed.append(RemovedMempoolTransactionInfo(txid, entry.fee, entry.vsize, entry.height))
                self.store.mempool_remove([txid])
                self.events.append(("transaction_removed_from_mempool", (entry.tx, REASON_BLOCK)))
            if tx.is_coinbase():
                continue
            for txin in tx.vin:
                spender = pool.spender(txin.prevout)
                if spender is not None and spender != txid:
                    self.remove_from_mempool(spender, REASON_CONFLICT)
        self.events.append(("mempool_removed_for_block", (confirmed, height)))

    def _readd(self, txs) -> None:
        """Return transactions of disconnected blocks to the pool where still valid (MaybeUpdateMempoolForReorg)."""
        self._after_connect(txs)

    def _after_connect(self, resurrected) -> None:
        with self.store.transaction():
            for tx in resurrected:
                if tx.txid() in self.mempool:
                    continue
                try:
                    self.accept_to_mempool(tx, bypass_limits=True)
                except Invalid:
                    pass
            self._remove_for_reorg()

    def _remove_for_reorg(self) -> None:
        """Drop pool transactions whose inputs vanished, became immature, or that are no longer final."""
        tip = self.tip
        mtp = rules.median_time_past(tip)
        for txid in self.mempool.sorted():
            entry = self.mempool.get(txid)
            if entry is None:
                continue
            ok = rules.is_final_tx(entry.tx, tip.height + 1, mtp)
            for txin in entry.tx.vin if ok else ():
                coin = self.mempool.coin(txin.prevout) or self.chain_coin(txin.prevout)
                if coin is None or (coin.coinbase and tip.height + 1 - coin.height < 100):
                    ok = False
                    break
            if not ok:
                self.remove_from_mempool(txid, REASON_REORG)

    # -- consistency -------------------------------------------------------------------

    def check_consistency(self):
        """Problems found between the index, the active chain and the UTXO set (an empty list when sound)."""
        problems = []
        active = self.index.active
        for h, e in enumerate(active):
            if e.height != h or (h and e.prev is not active[h - 1]):
                problems.append(f"active chain broken at height {h}")
            if h and self.store.get_undo(e.hash) is None:
                problems.append(f"no undo data for active block at height {h}")
        if self.store.get_meta("tip") != self.tip.hash:
            problems.append("stored tip differs from the active tip")
        expected = 0
        spent = set()
        for e in active[1:]:
            block = self.read_block(e)
            for tx in block.txs[1:]:
                spent.update((i.prevout.hash, i.prevout.n) for i in tx.vin)
        for e in active[1:]:
            block = self.read_block(e)
            for tx in block.txs:
                txid = tx.txid()
                for n, out in enumerate(tx.vout):
                    if not _unspendable(out.script_pubkey) and (txid, n) not in spent:
                        expected += 1
        if self.store.utxo_count() != expected:
            problems.append(f"UTXO set has {self.store.utxo_count()} coins, the active chain leaves {expected}")
        return problems


def _better(a, b) -> bool:
    """Core's work comparator: more work, or equal work and seen earlier."""
    return a.chain_work > b.chain_work or (a.chain_work == b.chain_work and a.seq < b.seq)


def _unspendable(script: bytes) -> bool:
    return (len(script) > 0 and script[0] == 0x6A) or len(script) > 10000
