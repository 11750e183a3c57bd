"""ChainService: the one object the daemon, the RPC handlers and the wallet use to reach the chain.

    service = ChainService(chain_name, chain_datadir, chainsource=None, logger=None, spender_index=False,
                           accept_stale_fee_estimates=False)
    service.start()            # open <chain_datadir>/chain.sqlite, resume, start the follower if any
    service.close()            # stop the follower, close the database

The built-in chain feeds Core's fee estimator (service.fee_estimator, fee_estimator.py): it is
read from <chain_datadir>/fee_estimates.json at start, written every hour and at close
(fee_estimates_file.py). A follower has none: its node estimates.

Notifications: `service.subscribe(listener)`; a listener defines any of
    block_connected(block, height)
    block_disconnected(block, height)
    transaction_added_to_mempool(tx)
    transaction_removed_from_mempool(tx, reason)   # reason: "block", "conflict", "reorg", "expiry", "replaced"
    mempool_entry_added(info)                      # fee_estimator.NewMempoolTransactionInfo (built-in chain)
    mempool_removed_for_block(removed, height)     # [fee_estimator.RemovedMempoolTransactionInfo] (built-in)
They are called in order, after the chain's own DB commit, on the thread that
changed the chain, while it holds `service.lock`. A listener must not start
another thread that waits for the lock. An exception in a listener is logged
and does not undo the chain change.

Queries (all take `service.lock` themselves; hold it across several calls for
a consistent view). Hashes are 32 bytes in internal order:
    tip() -> (height, hash)
    block_hash(height) -> hash | None          (active chain)
    block(hash) -> Block | None                (active or stale)
    header_info(hash) -> HeaderInfo | None     (height, in_active_chain, time, mediantime, ...)
    is_in_active_chain(hash) -> bool
    find_fork(hash) -> int | None              (height of the last common block with the active chain)
    mempool_txs() -> [Transaction]             (Core 31's mining order: parents before children)
    get_transaction(txid) -> (tx, block_hash | None) | None   (mempool first, then the txindex)
    coin(outpoint) -> Coin | None              (UTXO set, without the mempool)
    mempool_entry(txid) -> MempoolEntry | None (fee, vsize, time, height, ...)
    spender_index_progress() -> (synced, height) | None        (-txospenderindex, spender_index.py)
    confirmed_spenders(outpoints, with_tx) -> [(tx | txid, block_hash) | None] | None

Changes (raise ChainUnavailable in follower mode where they make no sense):
    submit_block(block) -> None | "duplicate" | "duplicate-invalid" | "inconclusive" | reject reason
    generate(script_pubkey, nblocks, max_tries) -> [hash]
    generate_block(script_pubkey, txs, submit) -> Block      (raises Invalid)
    send_transaction(tx) -> MempoolEntry                        (raises Invalid)
    broadcast_transaction(tx, max_fee=0) -> MempoolEntry | None (sendrawtransaction's order of checks)
    invalidate(hash) / reconsider(hash)
"""
import logging
import threading
import time
from typing import NamedTuple

from quill.atomic_store import RolledBack
from quill.consensus import COIN

from . import fee_estimates_file, rules, spender_index
from . import index as ix
from .block_scan import BlockScan, first_tx_offset, scan_block
from .errors import AlreadyInUtxoSet, ChainUnavailable, FeeAboveMaximum, FeeExceeded, UpstreamRejected
from .fee_estimator import BlockPolicyEstimator
from .params import chain_params, regtest_genesis_block
from .rules import Invalid
from .spender_index import SpenderIndexSync
from .store import ChainStore
from .trusted import FOLLOW_MODE, TrustedChainState
from .validation import ChainError, ChainState

_log = logging.getLogger("quill.chain")


class HeaderInfo(NamedTuple):
    height: int
    in_active_chain: bool
    time: int
    mediantime: int
    hash: bytes
    prev_hash: bytes            # None for the genesis block
    next_hash: bytes            # None unless in the active chain and not the tip
    confirmations: int          # tip height - height + 1 in the active chain, else -1 (Core)
    version: int
    merkle_root: bytes
    bits: int
    nonce: int
    chain_work: int
    n_tx: int
    failed: bool


class ChainService:
    def __init__(self, chain_name, chain_datadir, chainsource=None, logger=None, poll_interval=0.5,
                 clock=time.time, spender_index=False, accept_stale_fee_estimates=False, store_factory=None,
                 replica=False):
        self.chain_name = chain_name
        # -store=postgresql, another quilld leads: the chain is read from the store, reloaded when the
        # leader announces a change (quill.daemon.cluster), and never written here
        self.replica = replica
        # opens the chain's store: <chain_datadir>/chain.sqlite by default (quill.chain.pg_store otherwise)
        self.store_factory = store_factory or (lambda: ChainStore(chain_datadir))
        self.spender_index = spender_index and chainsource is None   # a follower asks its node
        self.spender_sync = None
        self.chain_datadir = chain_datadir
        self.chainsource = chainsource
        self.log = logger or _log
        self.poll_interval = poll_interval
        self.clock = clock
        self.params = chain_params(chain_name)
        self.lock = threading.RLock()
        self.listeners = []
        self.store = None
        self.state = None
        self.follower = None
        self.accept_stale_fee_estimates = accept_stale_fee_estimates
        self.fee_estimator = None
        self._fee_flush = None

    # -- lifecycle ------------------------------------------------------------------

    @property
    def builtin(self) -> bool:
        """True when this node runs its own regtest chain rather than following a node."""
        return self.chainsource is None

    def start(self) -> "ChainService":
        if self.builtin and self.chain_name != "regtest":
            raise ChainError(f"the built-in chain is regtest only; use -chainsource to follow a {self.chain_name} node")
        with self.lock:
            self.store = self.store_factory()
            if self.replica:
                self._start_fee_estimator()     # estimates from this process's file (the leader sees the mempool)
                self.state = self._replica_state()
            elif self.builtin:
                if self.store.get_meta("mode") == FOLLOW_MODE:
                    raise ChainError(f"{self.store.path} was written by a follower (-chainsource); "
                                     "the built-in chain needs another datadir")
                self._start_fee_estimator()
                self.state = ChainState(self.params, self.store, regtest_genesis_block(), clock=self.clock)
                self._hand_reloaded_mempool_to_fee_estimator()
                self._fee_flush = fee_estimates_file.PeriodicFlush(self.fee_estimator,
                                                                   fee_estimates_file.path_in(self.chain_datadir))
                self._fee_flush.start()
                self.state.spender_index = self.spender_index
                # A stop between storing a better branch and connecting it (a crash
                # mid-reorg) is finished here, as Core's ActivateBestChain at start-up.
                self.state.activate_best_chain()
            else:
                self.state = TrustedChainState(self.params, self.store, clock=self.clock)
            if self.state.tip is not None:
                self.log.info("Chain %s loaded: height=%d best=%s", self.chain_name, self.state.tip.height,
                              self.state.tip.hash[::-1].hex())
        if not self.builtin and not self.replica:
            from .follower import Follower
            self.follower = Follower(self, self.chainsource, self.poll_interval, self.log)
            self.follower.start()
        if self.spender_index and not self.replica:
            self.spender_sync = SpenderIndexSync(self, self.log)
            self.spender_sync.start()
        return self

    def _replica_state(self):
        """The chain as the store holds it, read only (no genesis written, no mempool re-saved),
        in one snapshot: the leader's commits meanwhile are read at the next reload."""
        db = self.store.db
        db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            if self.builtin:
                return ChainState(self.params, self.store, None, clock=self.clock, persist=False)
            return TrustedChainState(self.params, self.store, clock=self.clock)
        finally:
            db.execute("COMMIT")

    def reload(self) -> None:
        """A replica's chain, read again from the store after the leader committed a change."""
        with self.lock:
            if self.store is not None:
                self.state = self._replica_state()

    def _start_fee_estimator(self) -> None:
        """Core's estimator, read from its file, listening before the chain loads its mempool."""
        self.fee_estimator = BlockPolicyEstimator()
        path = fee_estimates_file.path_in(self.chain_datadir)
        fee_estimates_file.load(self.fee_estimator, path, self.accept_stale_fee_estimates)
        self.listeners.append(self.fee_estimator)

    def _hand_reloaded_mempool_to_fee_estimator(self) -> None:
        """The saved mempool was just accepted again (Core's LoadMempool): its entries go to the fee
        estimator only; the chain's other events wait for the listeners still to come."""
        mine = [e for e in self.state.events if e[0] == "mempool_entry_added"]
        self.state.events = [e for e in self.state.events if e[0] != "mempool_entry_added"]
        for _, (info,) in mine:
            self.fee_estimator.mempool_entry_added(info)

    def close(self) -> None:
        if self.spender_sync is not None:
            self.spender_sync.stop()
            self.spender_sync = None
        if self.follower is not None:
            self.follower.stop()
            self.follower = None
        if self._fee_flush is not None:
            self._fee_flush.stop()
            self._fee_flush = None
        with self.lock:
            if self.fee_estimator is not None:
                # Core's Flush at shutdown: what is still unconfirmed counts, then the file.
                fee_estimates_file.flush(self.fee_estimator, fee_estimates_file.path_in(self.chain_datadir))
                self.listeners.remove(self.fee_estimator)
                self.fee_estimator = None
            if self.store is not None:
                self.store.close()
                self.store = None

    def subscribe(self, listener) -> None:
        with self.lock:
            self.listeners.append(listener)

    def unsubscribe(self, listener) -> None:
        with self.lock:
            self.listeners.remove(listener)

    def notify(self) -> None:
        """Hand the events of the change just committed to the listeners, in order."""
        events, self.state.events = self.state.events, []
        for name, args in events:
            for listener in list(self.listeners):
                method = getattr(listener, name, None)
                if method is None:
                    continue
                try:
                    method(*args)
                except Exception:
                    self.log.exception("chain listener %r failed in %s", listener, name)

    def scan_hint(self):
        """What the listeners need of the blocks to come (follower.ScanHint): listeners that define
        scan_hint() say so; any other listener needs every block."""
        from .follower import EVERYTHING, hint_union
        hints = []
        for listener in list(self.listeners):
            method = getattr(listener, "scan_hint", None)
            if method is None:
                return EVERYTHING
            hints.append(method())
        return hint_union(hints)

    def _require_leader(self, what: str) -> None:
        if self.replica:
            raise ChainUnavailable(f"{what} is done by the quilld that leads the chain in the store; "
                                   "this one is a replica (docs/postgresql.md)")

    def _require_chain(self):
        if self.state is None or self.state.tip is None:
            raise ChainUnavailable("the chain has no blocks yet (waiting for -chainsource)")
        return self.state

    def _require_builtin(self, what: str):
        self._require_leader(what)
        if not self.builtin:
            raise ChainUnavailable(f"{what} is not available while following -chainsource")
        return self._require_chain()

    # -- queries ---------------------------------------------------------------------

    def tip(self):
        with self.lock:
            tip = self._require_chain().tip
            return tip.height, tip.hash

    def block_hash(self, height: int):
        with self.lock:
            active = self._require_chain().index.active
            return active[height].hash if 0 <= height < len(active) else None

    def entry(self, hash_):
        with self.lock:
            return self._require_chain().index.get(hash_)

    def block(self, hash_):
        with self.lock:
            state = self._require_chain()
            entry = state.index.get(hash_)
            if entry is None:
                return None
            if not self.builtin:
                return self.follower.fetch_blocks([hash_])[0]
            return state.read_block(entry)

    def block_raw(self, hash_):
        """The built-in chain's block `hash_` as stored (serialized, BIP144), or None."""
        with self.lock:
            self._require_builtin("reading a stored block")
            return self.store.block_raw(hash_)

    def block_layout(self, hash_, raw: bytes) -> BlockScan:
        """The txids and sizes of the built-in chain's stored block `hash_` (serialized: `raw`):
        as stored with it, or for a block stored before they were, by one pass over it."""
        with self.lock:
            self._require_builtin("reading a stored block")
            stored = self.store.block_txids(hash_)
        if stored is None:
            return scan_block(raw)
        txids, stripped_size = stored
        return BlockScan(txids, len(raw), stripped_size, first_tx_offset(raw))

    def block_undo(self, hash_):
        """The coins an active block spent, in input order (None for the genesis block or a stale block)."""
        with self.lock:
            state = self._require_chain()
            if not self.builtin:
                return None     # the follower keeps no undo data
            entry = state.index.get(hash_)
            return None if entry is None or entry.height == 0 else state.read_undo(entry)

    def header_info(self, hash_):
        with self.lock:
            state = self._require_chain()
            e = state.index.get(hash_)
            if e is None:
                return None
            active = state.index.contains(e)
            nxt = state.index.next_in_active(e)
            h = e.header
            return HeaderInfo(e.height, active, h.time, rules.median_time_past(e), e.hash,
                              e.prev.hash if e.prev else None, nxt.hash if nxt else None,
                              state.tip.height - e.height + 1 if active else -1,
                              h.version, h.merkle_root, h.bits, h.nonce, e.chain_work, e.n_tx, e.failed)

    def is_in_active_chain(self, hash_) -> bool:
        with self.lock:
            state = self._require_chain()
            e = state.index.get(hash_)
            return e is not None and state.index.contains(e)

    def find_fork(self, hash_):
        """The height where `hash_`'s branch meets the active chain, or None for an unknown block."""
        branch = self.branch_since(hash_)
        return None if branch is None or branch[0] < 0 else branch[0]

    def branch_since(self, hash_):
        """Core's FindFork with the stale part of `hash_`'s branch, in one look under the lock:
        (fork height, stale block hashes from `hash_` down to just above the fork), or None
        for an unknown block. The stale list is empty when `hash_` is in the active chain."""
        with self.lock:
            state = self._require_chain()
            e = state.index.get(hash_)
            if e is None:
                return None
            fork = state.index.find_fork(e)
            fork_height = -1 if fork is None else fork.height
            stale = []
            while e is not None and e.height > fork_height:
                stale.append(e.hash)
                e = e.prev
            return fork_height, stale

    def mempool_txs(self):
        """The pool's transactions in the order Core's CTxMemPool::entryAll gives them (getrawmempool's),
        the order a rescan or a wallet's load takes them in (Core's requestMempoolTransactions)."""
        with self.lock:
            pool = self._require_chain().mempool
            return [pool.get(t).tx for t in pool.mining_order()]

    def mempool_entry(self, txid):
        with self.lock:
            return self._require_chain().mempool.get(txid)

    def mempool(self):
        """The Mempool itself, for RPC views; read it only while holding `lock`."""
        return self._require_chain().mempool

    def scan_utxos(self, needles, should_abort=lambda: False):
        """Core's FindScriptPubKey: (completed, outputs seen, [(txid, n, Coin)] paying a needle),
        over the built-in chain's UTXO set."""
        with self.lock:
            state = self._require_builtin("scantxoutset")
            count, found = 0, []
            for txid, n, coin in state.store.iter_coins():
                count += 1
                if count % 8192 == 0 and should_abort():
                    return False, count, found
                if coin.script_pubkey in needles:
                    found.append((txid, n, coin))
            return True, count, found

    def utxo_stats(self, hash_type):
        """gettxoutsetinfo's statistics of the built-in chain's UTXO set, with its tip."""
        from .utxo_stats import utxo_stats
        with self.lock:
            state = self._require_builtin("gettxoutsetinfo")
            coins = ((txid, n, c.value, c.script_pubkey, c.height, c.coinbase)
                     for txid, n, c in state.store.iter_coins())
            return utxo_stats(coins, hash_type), state.tip.height, state.tip.hash

    def block_index(self):
        """The BlockIndex itself, for RPC views; read it only while holding `lock`."""
        return self._require_chain().index

    def coin(self, outpoint):
        with self.lock:
            state = self._require_chain()
            if not self.builtin:
                return self._upstream_coin(outpoint)
            return state.chain_coin(outpoint)

    def _upstream_coin(self, outpoint):
        """The upstream node's UTXO (without its mempool) as a Coin, or None."""
        from .coins import Coin
        found = self.follower.rpc.call("gettxout", outpoint.hash[::-1].hex(), outpoint.n, False)
        if found is None:
            return None
        value = round(float(found["value"]) * COIN)
        height = self.state.tip.height - int(found["confirmations"]) + 1
        return Coin(value, bytes.fromhex(found["scriptPubKey"]["hex"]), height, bool(found["coinbase"]))

    def spender_index_progress(self) -> tuple[bool, int] | None:
        """(synced, best block height) of the spender index (-txospenderindex), None when off."""
        if not self.spender_index:
            return None
        with self.lock:
            self._require_chain()
            return spender_index.progress(self.state)

    def confirmed_spenders(self, outpoints, with_tx: bool):
        """For each outpoint, the spender index's (spending tx or its txid, block hash), or None;
        None for the whole answer when the index is off or not synced (Core's
        BlockUntilSyncedToCurrentChain failing)."""
        with self.lock:
            state = self._require_chain()
            if not self.spender_index or not spender_index.progress(state)[0]:
                return None
            out = []
            for outpoint in outpoints:
                found = state.store.spender(outpoint.hash, outpoint.n)
                if found is not None and with_tx:
                    spender, block_hash = found
                    block = state.read_block(state.index.get(block_hash))
                    found = (next(tx for tx in block.txs if tx.txid() == spender), block_hash)
                out.append(found)
            return out

    def get_transaction(self, txid):
        with self.lock:
            state = self._require_chain()
            entry = state.mempool.get(txid)
            if entry is not None:
                return entry.tx, None
            if not self.builtin:
                return self._upstream_transaction(txid)
            block_hash = state.store.tx_block(txid)
            if block_hash is None:
                return None
            block = state.read_block(state.index.get(block_hash))
            for tx in block.txs:
                if tx.txid() == txid:
                    return tx, block_hash
            return None

    def find_transaction(self, txid, block_hash=None):
        """getrawtransaction's search: (tx, hash of the block holding it, or None for the mempool),
        looking only in `block_hash` when given; (None, None) when not found."""
        with self.lock:
            if block_hash is not None:
                block = self.block(block_hash)
                for tx in block.txs if block is not None else ():
                    if tx.txid() == txid:
                        return tx, block_hash
                return None, None
            found = self.get_transaction(txid)
            return found if found is not None else (None, None)

    def genesis_coinbase_txid(self):
        """The genesis block's coinbase, which Core never treats as an ordinary transaction."""
        with self.lock:
            return self.block(self.block_hash(0)).txs[0].txid()

    def spent_coins(self, block_hash, txid):
        """The coins transaction `txid` of active block `block_hash` spent, from the block's undo
        data in input order; None where there is no undo data (a follower keeps none)."""
        with self.lock:
            undo = self.block_undo(block_hash)
            if undo is None:
                return None
            k = 0
            for t in self.block(block_hash).txs[1:]:
                if t.txid() == txid:
                    return undo[k:k + len(t.vin)]
                k += len(t.vin)
            return None

    def _upstream_transaction(self, txid):
        """getrawtransaction on the upstream node (which needs -txindex for confirmed ones), or None."""
        from quill.tx.transaction import Transaction
        try:
            found = self.follower.rpc.call("getrawtransaction", txid[::-1].hex(), 1)
        except UpstreamRejected:
            return None
        block_hash = bytes.fromhex(found["blockhash"])[::-1] if "blockhash" in found else None
        if block_hash is not None and block_hash not in self.state.index:
            return None
        return Transaction.from_hex(found["hex"]), block_hash

    def verification_progress(self) -> float:
        """1 on the built-in chain; delivered blocks over known headers while following."""
        with self.lock:
            state = self._require_chain()
            return 1.0 if self.builtin else state.verification_progress()

    def is_initial_block_download(self) -> bool:
        with self.lock:
            return self._require_chain().is_initial_block_download()

    def size_on_disk(self) -> int:
        with self.lock:
            return self.store.size_on_disk()

    def check_consistency(self):
        with self.lock:
            return self._require_chain().check_consistency()

    # -- changes -----------------------------------------------------------------------

    def submit_block(self, block):
        """Core's submitblock outcome: None when the block became the tip, else a BIP22 string."""
        with self.lock:
            state = self._require_builtin("submitblock")
            entry = state.index.get(block.hash())
            if entry is not None:
                if entry.status & ix.FAILED_MASK:
                    return "duplicate-invalid"
                if entry.status & ix.VALID_CONNECTED:
                    return "duplicate"
                return "duplicate-inconclusive"
            try:
                entry, became_tip = state.process_block(block)
            except Invalid as e:
                return e.reason
            finally:
                self.notify()
            return None if became_tip else "inconclusive"

    def generate(self, script_pubkey: bytes, nblocks: int, max_tries: int):
        """Core's generateBlocks: mine `nblocks` blocks with the mempool's transactions."""
        hashes = []
        for _ in range(nblocks):
            with self.lock:
                state = self._require_builtin("generate")
                miner = _miner()
                txs, fees = miner.select_mempool_txs(state)
                block = miner.new_block(state, script_pubkey, txs, fees, self.clock())
                if not miner.grind(block, self.params.pow_limit, max_tries):
                    break
                max_tries -= block.header.nonce + 1
                try:
                    state.process_block(block)
                finally:
                    self.notify()
                hashes.append(block.hash())
        return hashes

    def generate_block(self, script_pubkey: bytes, txs, submit: bool = True):
        """Core's generateblock: exactly `txs` after a coinbase paying the subsidy only. Raises Invalid."""
        with self.lock:
            state = self._require_builtin("generateblock")
            miner = _miner()
            block = miner.new_block(state, script_pubkey, txs, 0, self.clock())
            _test_block_validity(state, block)
            miner.grind(block, self.params.pow_limit, 0xFFFFFFFF)
            if submit:
                try:
                    state.process_block(block)
                finally:
                    self.notify()
            return block

    def send_transaction(self, tx):
        """Accept `tx` into the mempool (in follower mode: relay it upstream first). Raises Invalid."""
        with self.lock:
            self._require_chain()
            self._require_leader("sendrawtransaction")
            if not self.builtin:
                self.follower.relay(tx)
                return self.state.mempool.get(tx.txid())
            return self._accept(tx)

    def broadcast_transaction(self, tx, max_fee: int = 0):
        """Core's BroadcastTransaction: AlreadyInUtxoSet, a pool copy is success, then a test acceptance
        (Invalid, or FeeExceeded above `max_fee` when it is positive), then send_transaction."""
        with self.lock:
            state = self._require_chain()
            self._require_leader("sendrawtransaction")
            txid = tx.txid()
            if not self.builtin:
                if txid in state.mempool:
                    return state.mempool.get(txid)
                try:
                    self.follower.relay(tx, max_fee)
                except FeeAboveMaximum:
                    raise FeeExceeded() from None
                except UpstreamRejected as e:
                    if e.code == -27:       # RPC_VERIFY_ALREADY_IN_UTXO_SET
                        raise AlreadyInUtxoSet() from None
                    raise
                return state.mempool.get(txid)
            if state.store.has_outputs(txid):
                raise AlreadyInUtxoSet()
            if txid in state.mempool:
                return state.mempool.get(txid)
            if max_fee > 0 and self._test_accept(tx).fee > max_fee:
                raise FeeExceeded()
            return self._accept(tx)

    def test_accept(self, tx):
        """Core's test acceptance (testmempoolaccept): the MempoolEntry it would make, keeping
        nothing; raises Invalid."""
        with self.lock:
            self._require_chain()
            return self._test_accept(tx)

    def _test_accept(self, tx):
        """Every mempool check, keeping nothing."""
        return self.state.accept_to_mempool(tx, test_only=True)

    def _accept(self, tx):
        state = self.state
        try:
            with state.store.transaction():
                entry = state.accept_to_mempool(tx)
            entry.unbroadcast = self.builtin
            return entry
        finally:
            self.notify()

    def best_header_height(self) -> int:
        """Height of the most-work valid block known (Core's `headers`)."""
        with self.lock:
            state = self._require_chain()
            if not self.builtin:
                return state.best_header.height
            return state.index.best_candidate().height

    def invalidate(self, hash_) -> bool:
        """False when the block is unknown."""
        with self.lock:
            state = self._require_builtin("invalidateblock")
            entry = state.index.get(hash_)
            if entry is None:
                return False
            try:
                state.invalidate(entry)
            finally:
                self.notify()
            return True

    def reconsider(self, hash_) -> bool:
        with self.lock:
            state = self._require_builtin("reconsiderblock")
            entry = state.index.get(hash_)
            if entry is None:
                return False
            try:
                state.reconsider(entry)
            finally:
                self.notify()
            return True

    # -- wallet rescans --------------------------------------------------------------------

    def scan(self, start: int, stop: int, hint, should_stop=lambda: False):
        """The active blocks in [start, stop] a wallet rescan needs, as (height, block), in order.

        `hint()` gives the wallet's current ScanHint. The built-in chain gives every block. A follower
        goes through the range DELIVERY_CHUNK blocks at a time (so that progress shows and abortrescan
        is heard); where the upstream node has block filters it reads only the blocks they match
        against the wallet's scripts (Follower.filter_matches). Scripts the wallet derives meanwhile
        (its keypool moving on) are matched afterwards; should any block of the chunk match them, the
        scan goes on again from the first such block (seeing a block twice changes nothing in a wallet).
        """
        from .follower import DELIVERY_CHUNK
        h = start
        while h <= stop and not should_stop():
            end = stop if self.builtin else min(stop, h + DELIVERY_CHUNK - 1)
            current = hint()
            matched = None
            if not self.builtin and current.scripts is not None:
                matched = self.follower.filter_matches(h, end, current.scripts)
            with self.lock:
                active = self._require_chain().index.active
                hashes = [(k, active[k].hash) for k in range(h, min(end, len(active) - 1) + 1)]
            heights = {x: k for k, x in hashes}
            if matched is not None:
                hashes = [(k, x) for k, x in hashes if x in matched]
            for k, block in self._read_in_order(hashes, hint):
                if should_stop():
                    return
                yield k, block
            if matched is not None:
                grown = set(hint().scripts or ()) - set(current.scripts)
                again = self.follower.filter_matches(h, end, grown) if grown else set()
                if again is None:
                    again = set(heights)
                hits = [heights[x] for x in again if x in heights]
                if hits:
                    h = min(hits)
                    continue
            h = end + 1

    def _read_in_order(self, hashes, hint):
        """(height, block) for `hashes` [(height, hash)]. While following, the next blocks are fetched
        ahead (Follower.raw_in_order) while this thread reads the current ones; each is read with the
        hint as it is when its turn comes, since the wallet's scripts may have grown meanwhile."""
        if self.builtin:
            for k, x in hashes:
                yield k, self.block(x)
            return
        follower = self.follower
        raws = follower.raw_in_order([x for _, x in hashes], spent=follower.spent_wanted(hint))
        try:
            for (k, x), data in zip(hashes, raws, strict=True):
                yield k, follower.read_block(x, data, hint())
        finally:
            raws.close()


def _miner():
    """quill.chain.miner, imported when a block is first generated: it brings in the signing code,
    which start-up does not need."""
    from . import miner
    return miner


def _test_block_validity(state, block) -> None:
    """Core's TestBlockValidity: every check of a block on the tip, connection included, leaving no trace."""
    prev = state.tip
    rules.check_block(block, state.params, check_pow=False)
    rules.check_header_context(block.header, prev, state.params, int(state.clock()))
    rules.check_block_context(block, prev, state.params)
    events = list(state.events)
    pool_before = dict(state.mempool.entries), dict(state.mempool.spenders), state.mempool.sequence
    try:
        with state.store.transaction():
            entry = ix.BlockEntry(block.hash(), prev, prev.height + 1, block.header, len(block.txs), 0, -1)
            state.index.entries[entry.hash] = entry
            try:
                state._connect(entry, block)
            finally:
                state.index.entries.pop(entry.hash, None)
                state.index.set_tip(prev)
            raise RolledBack()
    except RolledBack:
        pass
    finally:
        state.events = events
        state.mempool.entries, state.mempool.spenders, state.mempool.sequence = pool_before
