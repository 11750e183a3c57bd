"""A watch-only descriptor wallet: which scripts are ours, which transactions
concern us, and the state machine Core's wallet runs on chain and mempool
events (core-wallet.md §4).

Every chain event is applied inside one store batch (one SQLite transaction)
that also records the wallet's last processed block. Memory holds only
indexes rebuilt from the file on load (scripts, spent outpoints, labels) and
Core's memory-only `mempool_conflicts`.
"""

import logging
import threading
import time

from quill.chain.scan import outpoint_key
from quill.consensus import COINBASE_MATURITY
from quill.tx.address import encode_destination
from quill.tx.hashes import hash_to_hex
from quill.wallet import store as st
from quill.wallet.coins import LockedCoins
from quill.wallet.credit import CreditCache
from quill.wallet.descriptors import DerivationError, parse

log = logging.getLogger("quill.wallet")

DEFAULT_KEYPOOL = 1000
SMART_TIME_TOLERANCE = 300


def block_time(block) -> int:
    return block.header.time


def block_prev(block) -> bytes:
    return block.header.prev_hash


class DescriptorInfo:
    """A stored descriptor, parsed once."""

    def __init__(self, row, chain_name):
        (self.id, self.text, self.timestamp, self.range_start, self.range_end, self.next_index,
         active, internal, self.output_type) = row
        self.active = bool(active)
        self.internal = bool(internal)
        self.desc = parse(self.text, chain_name)


class Wallet:
    def __init__(self, name: str, store: st.Store, chain_name: str, keypool: int = DEFAULT_KEYPOOL):
        self.name = name
        self.store = store
        self.chain_name = chain_name
        self.keypool = keypool
        self.lock = store.lock
        self.mempool_conflicts: dict = {}   # txid -> set of mempool txids (memory only, §3.7)
        self.scanning: list | None = None   # [started, start, stop, height] while a rescan is reserved or runs
        self.abort_rescan = False     # set by abortrescan, read by the running rescan
        self._scan_lock = threading.Lock()
        self._script_set = None
        self._addresses: dict = {}
        self.credit_cache = CreditCache()   # getbalance's cached credit, kept current from the store's writes
        self._load_indexes()
        store.batch.resync = self._resync
        self.locked_coins = LockedCoins(store)  # lockunspent

    # -- indexes rebuilt from the file --------------------------------------

    # the memory each of the wallet's tables is read into (refresh: only the changed ones again)
    INDEXED_TABLES = frozenset({"descriptors", "scripts", "addrbook", "txouts", "spends", "tx_values"})
    # the tables whose rows the cached credit is computed from
    CREDIT_TABLES = frozenset({"descriptors", "scripts", "txs", "txouts", "spends"})

    def _load_indexes(self, tables=INDEXED_TABLES):
        """Memory read from the store's `tables` (every indexed one by default)."""
        if "descriptors" in tables:
            self.descs = {row[0]: DescriptorInfo(row, self.chain_name) for row in self.store.descriptors()}
        if "scripts" in tables:
            self.scripts = {}
            for script, desc_id, idx in self.store.all_scripts():
                self.scripts.setdefault(bytes(script), []).append((desc_id, idx))
        if "addrbook" in tables:
            self.labels = {addr: (label, purpose) for addr, label, purpose in self.store.addrbook()}
        if "txouts" in tables:
            # Our outputs, (txid, n) -> value: debits and IsMine of inputs without one SQL query per input.
            self.txouts = {(bytes(txid), n): value for txid, n, value, _ in self.store.all_txouts()}
        if "spends" in tables:
            self.spends = {}
            for prev_txid, prev_n, txid in self.store.all_spends():
                self.spends.setdefault((bytes(prev_txid), prev_n), set()).add(bytes(txid))
        if "txouts" in tables or "spends" in tables:
            # The same outpoints (ours, or spent by a wallet tx) as they appear in a serialized input:
            # what quill.chain.scan looks for in a raw block.
            self.outpoints = ({outpoint_key(t, n) for t, n in self.txouts}
                              | {outpoint_key(t, n) for t, n in self.spends})
        if "tx_values" in tables:
            # Core's mapValue (replaced_by_txid, replaces_txid): few, read for every listed transaction.
            self.tx_values = {}
            for txid, key, value in self.store.all_tx_values():
                self.tx_values.setdefault(bytes(txid), {})[key] = value

    def _resync(self):
        """A batch did not commit (quill.atomic_store): the indexes become what the file holds."""
        self._load_indexes()
        self._script_set = None
        self.credit_cache.invalidate()

    def refresh(self, tables=None):
        """Another process changed the wallet in the store (docs/postgresql.md): memory becomes
        what the store holds, coin locks included. `tables`: the only tables it changed (the store's
        change log, quill.wallet.pg_store), whose memory alone is read again; None: all of them."""
        if tables is None:
            self._resync()
        else:
            self._load_indexes(self.INDEXED_TABLES & tables)
            if "scripts" in tables:
                self._script_set = None
            if self.CREDIT_TABLES & tables:
                self.credit_cache.invalidate()
        if tables is None or "meta" in tables:
            self.locked_coins.reload()

    @property
    def disable_private_keys(self) -> bool:
        return True

    @property
    def external_signer(self) -> bool:
        """Core's WALLET_FLAG_EXTERNAL_SIGNER: the wallet signs through the -signer command."""
        return bool(self.store.get_meta("external_signer", 0))

    @property
    def blank(self) -> bool:
        return bool(self.store.get_meta("blank", 0))

    # -- tip ---------------------------------------------------------------

    def tip(self):
        """The wallet's last processed block: (height, hash) or (-1, None)."""
        h = self.store.get_meta("tip_hash")
        return (-1, None) if h is None else (int(self.store.get_meta("tip_height")), bytes(h))

    def _set_tip(self, height, block_hash):
        self.store.set_meta("tip_height", height)
        self.store.set_meta("tip_hash", block_hash)

    def reserve_rescan(self) -> bool:
        """Core's WalletRescanReserver::reserve: False when a rescan holds the wallet already. From here
        until release_rescan the wallet is scanning (getwalletinfo, abortrescan), as in Core."""
        with self._scan_lock:
            if self.scanning is not None:
                return False
            self.scanning = [time.time(), 0, 0, 0]
            self.abort_rescan = False
            return True

    def release_rescan(self) -> None:
        with self._scan_lock:
            self.scanning = None

    def scanning_range(self, start: int, stop: int) -> None:
        """The reserved rescan goes over [start, stop]: progress is measured on it."""
        scan = self.scanning
        if scan is not None:
            scan[1:] = [start, stop, start]

    def scanning_at(self, height: int) -> None:
        scan = self.scanning
        if scan is not None:
            scan[3] = height

    def request_abort(self) -> bool:
        """Core's abortrescan: True when a rescan is running and was not already asked to stop."""
        if self.scanning is None or self.abort_rescan:
            return False
        self.abort_rescan = True
        return True

    def scanning_json(self):
        """getwalletinfo's `scanning`: false, or the running rescan's duration (s) and progress (0..1)."""
        scan = self.scanning
        if scan is None:
            return False
        started, start, stop, height = scan
        return {"duration": int(time.time() - started),
                "progress": (height - start) / (stop - start) if stop > start else 0.0}

    def address_of(self, script: bytes):
        """encode_destination(script), cached by script: listing a large wallet encodes the same few
        scripts again and again (bech32 is the costliest step of an entry)."""
        try:
            return self._addresses[script]
        except KeyError:
            address = self._addresses[script] = encode_destination(script, self.chain_name)
            return address

    def birthday(self):
        """The earliest descriptor timestamp (Core's key birth time), None without descriptors."""
        times = [i.timestamp for i in self.descs.values()]
        return min(times) if times else None

    def script_set(self):
        """The scripts we watch as one frozen set, rebuilt only when new scripts were derived."""
        if self._script_set is None or len(self._script_set) != len(self.scripts):
            self._script_set = frozenset(self.scripts)
        return self._script_set

    # -- IsMine --------------------------------------------------------------

    def is_mine(self, script: bytes) -> bool:
        return script in self.scripts

    def parent_descs(self, script: bytes):
        return [self.descs[d].text for d, _ in self.scripts.get(script, ())]

    def label_of(self, address):
        """The address-book label (None when there is no non-change entry)."""
        entry = self.labels.get(address)
        return None if entry is None else entry[0]

    def is_change(self, script: bytes) -> bool:
        """Core's OutputIsChange: ours, and no address or no address-book entry."""
        if not self.is_mine(script):
            return False
        address = self.address_of(script)
        return address is None or self.label_of(address) is None

    def set_label(self, address, label, purpose="receive"):
        with self.store.batch():
            self.store.set_address(address, label, purpose)
        self.labels[address] = (label, purpose)

    # -- descriptors ---------------------------------------------------------

    def add_descriptor(self, desc, timestamp, range_start, range_end, next_index, active, internal, label):
        """Store a descriptor, derive its scripts, set it active (Core's AddWalletDescriptor)."""
        text = desc.to_string()
        output_type = desc.output_type()
        desc_id = self.store.upsert_descriptor(text, timestamp, range_start, range_end, next_index,
                                               active and output_type is not None, internal, output_type)
        if active and output_type is not None:
            self.store.deactivate(output_type, internal, desc_id)
        elif not active and output_type is not None:
            # Core's DeactivateScriptPubKeyMan for this very descriptor.
            self.store.db.execute("UPDATE descriptors SET active=0 WHERE id=?", (desc_id,))
        self.descs = {row[0]: DescriptorInfo(row, self.chain_name) for row in self.store.descriptors()}
        info = self.descs[desc_id]
        self._derive(info, info.range_start if desc.is_range() else 0,
                     info.range_end if desc.is_range() else 1)
        if not desc.is_range() and not internal:
            # Core labels every address of a non-ranged, non-internal descriptor; with no label
            # given the label is "" (LabelFromValue(null)), which makes its receives non-change.
            address = encode_destination(desc.script(0), self.chain_name)
            if address is not None:
                self.set_label(address, label or "")
        return info

    def _derive(self, info, start, end):
        rows = []
        for i in range(start, end):
            script = info.desc.script(i)
            rows.append((script, info.id, i))
            owners = self.scripts.setdefault(script, [])
            if (info.id, i) not in owners:
                owners.append((info.id, i))
        self.store.add_scripts(rows)

    def _mark_used(self, script):
        """Core's MarkUnusedAddresses: a script at or past a descriptor's next_index moves next_index
        beyond it and tops up the range; each address passed over that way gets an empty
        address-book entry when its descriptor is an active external one (as Core 31 does,
        checked against it). Scripts below next_index change nothing."""
        for desc_id, idx in list(self.scripts.get(script, ())):
            info = self.descs[desc_id]
            if not info.desc.is_range() or idx < info.next_index:
                continue
            passed = list(range(info.next_index, idx + 1))
            info.next_index = idx + 1
            new_end = max(info.range_end, info.next_index + self.keypool)
            if new_end > info.range_end:
                self._derive(info, info.range_end, new_end)
                info.range_end = new_end
            self.store.set_range(desc_id, info.range_end, info.next_index)
            if not info.active or info.internal:
                continue
            for i in passed:
                address = encode_destination(info.desc.script(i), self.chain_name)
                if address is not None and address not in self.labels:
                    self.set_label(address, "")

    def top_up(self, size: int = 0) -> None:
        """Core's TopUpKeyPool: each active ranged descriptor derives up to `size` scripts past
        its next index (the wallet's -keypool when 0); a range is never shrunk."""
        target = size or self.keypool
        with self.store.batch():
            for info in self.descs.values():
                if not info.active or not info.desc.is_range():
                    continue
                new_end = max(info.range_end, info.next_index + target)
                if new_end > info.range_end:
                    self._derive(info, info.range_end, new_end)
                    info.range_end = new_end
                    self.store.set_range(info.id, info.range_end, info.next_index)

    def keypool_size(self) -> int:
        """Core's GetKeyPoolSize: scripts not yet handed out, over the active descriptors."""
        return sum(i.range_end - i.next_index for i in self.descs.values() if i.active)

    def active_descriptor(self, output_type, internal):
        for info in self.descs.values():
            if info.active and info.internal == internal and info.output_type == output_type:
                return info
        return None

    def can_get_addresses(self, internal) -> bool:
        return any(i.active and i.internal == internal for i in self.descs.values())

    def new_destination(self, output_type, internal):
        """Hand out the next script of the active descriptor; None if there is none."""
        with self.store.batch():
            # chosen inside the transaction: in a PostgreSQL store another process may have handed
            # out addresses since, and the transaction's start read them (WalletConnection)
            info = self.active_descriptor(output_type, internal)
            if info is None:
                return None
            index = info.next_index
            if index >= info.range_end:
                self._derive(info, info.range_end, index + self.keypool)
                info.range_end = index + self.keypool
            info.next_index = index + 1
            self.store.set_range(info.id, info.range_end, info.next_index)
            script = info.desc.script(index)
        return script

    # -- amounts (core-wallet.md §1.3) -------------------------------------------

    def debit(self, tx) -> int:
        total = 0
        if tx.is_coinbase():
            return 0
        txouts = self.txouts
        for txin in tx.vin:
            value = txouts.get((txin.prevout.hash, txin.prevout.n))
            if value is not None:
                total += value
        return total

    def credit_outputs(self, tx):
        return [(n, out) for n, out in enumerate(tx.vout) if out.script_pubkey in self.scripts]

    def depth(self, row, tip_height=None) -> int:
        if tip_height is None:
            tip_height = self.tip()[0]
        if row.state == st.CONFIRMED:
            return tip_height - row.block_height + 1
        if row.state == st.CONFLICTED:
            return -(tip_height - row.block_height + 1)
        return 0

    def blocks_to_maturity(self, row, depth) -> int:
        if not row.coinbase:
            return 0
        return max(0, COINBASE_MATURITY + 1 - depth)

    def credit(self, row, depth) -> int:
        if row.coinbase and self.blocks_to_maturity(row, depth) > 0:
            return 0
        return sum(out.value for _, out in self.credit_outputs(row.tx))

    def is_abandoned(self, row) -> bool:
        return row.state == st.INACTIVE and row.abandoned

    def is_trusted(self, row, memo=None, tip_height=None) -> bool:
        """Core's CachedTxIsTrusted (§3.5)."""
        memo = {} if memo is None else memo
        if row.txid in memo:
            return memo[row.txid]
        memo[row.txid] = False  # cycles cannot happen; guard anyway
        result = self._trusted(row, memo, tip_height)
        memo[row.txid] = result
        return result

    def _trusted(self, row, memo, tip_height):
        if row.state == st.CONFIRMED:
            return True
        if row.state == st.CONFLICTED:
            return False
        if self.debit(row.tx) <= 0 or row.state != st.MEMPOOL:
            return False
        for txin in row.tx.vin:
            parent = self.store.get_tx(txin.prevout.hash)
            if parent is None or (txin.prevout.hash, txin.prevout.n) not in self.txouts:
                return False
            if not self.is_trusted(parent, memo, tip_height):
                return False
        return True

    def wallet_conflicts(self, row):
        others = set()
        if not row.coinbase:
            for txin in row.tx.vin:
                others |= self.spends.get((txin.prevout.hash, txin.prevout.n), set())
        others.discard(row.txid)
        return sorted(others)  # internal byte order = Core's std::set<uint256> order

    # -- transactions: insert and state changes -----------------------------------

    def _involves_me(self, tx) -> bool:
        if any(out.script_pubkey in self.scripts for out in tx.vout):
            return True
        if tx.is_coinbase():
            return False
        return any((i.prevout.hash, i.prevout.n) in self.txouts for i in tx.vin)

    def may_concern(self, tx) -> bool:
        """Could a block's `tx` change this wallet? It pays one of our scripts, spends one of our
        outputs, or spends an outpoint a wallet tx spends (a conflict). Memory only: a block's other
        transactions are skipped before any SQL."""
        scripts = self.scripts
        for out in tx.vout:
            if out.script_pubkey in scripts:
                return True
        if tx.is_coinbase():
            return False
        txouts, spends = self.txouts, self.spends
        for i in tx.vin:
            key = (i.prevout.hash, i.prevout.n)
            if key in txouts or key in spends:
                return True
        return False

    def _smart_time(self, received, blocktime, rescan):
        """Core's ComputeTimeSmart (§3.8)."""
        if blocktime is None:
            return received
        if rescan:
            return blocktime
        latest_now, latest_entry = received, 0
        for row in self.store.last_inserted():
            t = row.time_smart or row.time_received
            if t <= received + SMART_TIME_TOLERANCE:
                latest_entry = t
                latest_now = max(latest_now, t)
                break
        return max(latest_entry, min(blocktime, latest_now))

    def sync_tx(self, tx, state, block=None, rescan=False, force=False):
        """Core's AddToWalletIfInvolvingMe + AddToWallet. Returns the row or None.

        `state` is (kind, block_hash, height, index, block_time) or (kind,).
        """
        txid = tx.txid()
        row = self.store.get_tx(txid)
        if row is None and not (force or self._involves_me(tx)):
            return None
        if row is None and not tx.is_coinbase():
            for txin in tx.vin:  # Core's AddToSpends: a coin a new wallet transaction spends is unlocked
                self.locked_coins.unlock(txin.prevout)
        if row is None:
            now = int(time.time())
            blocktime = state[4] if state[0] in (st.CONFIRMED, st.CONFLICTED) else None
            self.store.insert_tx(txid, self.store.next_seq(), tx.serialize(), tx.is_coinbase(), now,
                                 self._smart_time(now, blocktime, rescan))
        for n, out in enumerate(tx.vout):
            if out.script_pubkey in self.scripts:
                self.store.add_txout(txid, n, out.value, out.script_pubkey)
                self.txouts[(txid, n)] = out.value
                self.outpoints.add(outpoint_key(txid, n))
                self._mark_used(out.script_pubkey)
        if not tx.is_coinbase():
            for txin in tx.vin:
                self.store.add_spend(txin.prevout.hash, txin.prevout.n, txid)
                self.spends.setdefault((txin.prevout.hash, txin.prevout.n), set()).add(txid)
                self.outpoints.add(outpoint_key(txin.prevout.hash, txin.prevout.n))
        self._write_state(txid, state)
        row = self.store.get_tx(txid)
        if row.coinbase and row.state == st.INACTIVE:
            self._abandon_coinbase_tree(txid)
        return row

    def _write_state(self, txid, state, abandoned=False):
        kind = state[0]
        if kind in (st.CONFIRMED, st.CONFLICTED):
            self.store.set_state(txid, kind, False, state[1], state[2], state[3] if kind == st.CONFIRMED else None,
                                 state[4])
        else:
            self.store.set_state(txid, kind, abandoned)

    def _abandon_coinbase_tree(self, txid):
        """v25+: an inactive coinbase and every in-wallet descendant are abandoned (§4.5)."""
        def abandon(t):
            self.store.set_state(t, st.INACTIVE, True)
            return True

        self._walk_descendants(txid, abandon)

    def _walk_descendants(self, txid, visit):
        """Visit `txid` and its in-wallet descendants, each once; `visit(t)` returns
        whether to go on below t."""
        todo, done = [txid], set()
        while todo:
            t = todo.pop()
            if t in done:
                continue
            done.add(t)
            if visit(t):
                todo.extend(self.store.children(t))

    def _recursive_update(self, txid, update):
        """Core's RecursiveUpdateTxState: apply `update(row) -> bool changed` to txid and,
        below every tx that changed, to its in-wallet descendants."""
        def visit(t):
            row = self.store.get_tx(t)
            return row is not None and update(row)

        self._walk_descendants(txid, visit)

    def mark_conflicted(self, block_hash, height, block_t, txid):
        tip_height = self.tip()[0]
        if tip_height < 0 or height < 0:
            return
        conflict_confirms = -(tip_height - height + 1)
        if conflict_confirms >= 0:
            return

        def update(row):
            if conflict_confirms < self.depth(row, tip_height):
                self.store.set_state(row.txid, st.CONFLICTED, False, block_hash, height, None, block_t)
                return True
            return False
        self._recursive_update(txid, update)

    # -- chain events -----------------------------------------------------------

    def block_connected(self, block, height, rescan=False, move_tip=True):
        """`move_tip` False (a rescan's block without wallet transactions): the last processed block is
        left for the rescan to record at its next checkpoint."""
        block_hash = block.hash()
        bt = block_time(block)
        with self.store.batch():
            # A rescan of older blocks leaves the tip where it is.
            if move_tip and (not rescan or height > self.tip()[0]):
                self._set_tip(height, block_hash)
            for index, tx in block.indexed_txs():
                if not self.may_concern(tx):
                    continue
                txid = tx.txid()
                if not tx.is_coinbase():
                    for txin in tx.vin:
                        for other in list(self.spends.get((txin.prevout.hash, txin.prevout.n), ())):
                            if other != txid:
                                self.mark_conflicted(block_hash, height, bt, other)
                self.sync_tx(tx, (st.CONFIRMED, block_hash, height, index, bt), rescan=rescan)
                self._note_mempool_conflicts(tx, set.discard)

    def block_disconnected(self, block, height):
        with self.store.batch():
            for tx in block.txs:
                txid = tx.txid()
                if self.store.has_tx(txid):
                    self._write_state(txid, (st.INACTIVE,), abandoned=False)
                    if tx.is_coinbase():
                        self._abandon_coinbase_tree(txid)
                if tx.is_coinbase():
                    continue
                for txin in tx.vin:
                    for spender in list(self.spends.get((txin.prevout.hash, txin.prevout.n), ())):
                        row = self.store.get_tx(spender)
                        if row is not None and row.state == st.CONFLICTED:
                            self._unconflict(spender, height)
            self._set_tip(height - 1, block_prev(block))

    def _unconflict(self, txid, disconnect_height):
        def update(row):
            if row.state == st.CONFLICTED and row.block_height >= disconnect_height:
                self.store.set_state(row.txid, st.INACTIVE, False)
                return True
            return False
        self._recursive_update(txid, update)

    def transaction_added_to_mempool(self, tx):
        with self.store.batch():
            self.sync_tx(tx, (st.MEMPOOL,))
            self._note_mempool_conflicts(tx, set.add)

    def transaction_removed_from_mempool(self, tx, reason=None):
        with self.store.batch():
            row = self.store.get_tx(tx.txid())
            if row is not None and row.state == st.MEMPOOL:
                self.store.set_state(row.txid, st.INACTIVE, False)
            self._note_mempool_conflicts(tx, set.discard)

    def _note_mempool_conflicts(self, tx, change):
        """Add (set.add) or drop (set.discard) `tx` in the mempool conflicts of every
        wallet transaction spending the same outputs, and of their descendants."""
        txid = tx.txid()
        if tx.is_coinbase():
            return
        for txin in tx.vin:
            for other in list(self.spends.get((txin.prevout.hash, txin.prevout.n), ())):
                if other != txid:
                    self._recursive_memory(other, lambda conflicts: change(conflicts, txid))

    def _recursive_memory(self, txid, change):
        """Apply `change` to the mempool-conflict set of txid and all its descendants."""
        def visit(t):
            self.store.touched.add(t)   # its parents' outputs may count as spent or not now
            change(self.mempool_conflicts.setdefault(t, set()))
            if not self.mempool_conflicts[t]:
                del self.mempool_conflicts[t]
            return True

        self._walk_descendants(txid, visit)

    def mark_replaced(self, original, replacement) -> None:
        """Core's feebumper::CommitTransaction and MarkReplaced: the replacement keeps the
        original's values and names it in replaces_txid; the original names it in replaced_by_txid."""
        values = dict(self.tx_values.get(original, {}), replaces_txid=hash_to_hex(original))
        values.pop("replaced_by_txid", None)
        with self.store.batch():
            for key, value in values.items():
                self.store.set_tx_value(replacement, key, value)
            self.store.set_tx_value(original, "replaced_by_txid", hash_to_hex(replacement))
        self.tx_values[replacement] = values
        self.tx_values.setdefault(original, {})["replaced_by_txid"] = hash_to_hex(replacement)

    def values_of(self, txid):
        """Core's mapValue of a wallet tx, [(key, value)] in std::map's order (bytewise keys)."""
        values = self.tx_values.get(txid)
        return sorted(values.items(), key=lambda kv: kv[0].encode()) if values else []

    # -- load-time repair (core-wallet.md §4.1) ------------------------------------

    def reset_for_load(self, in_active_chain):
        """Mempool txs become inactive; confirmed/conflicted txs whose block left the
        active chain become inactive (an orphaned coinbase is abandoned with its
        descendants); children of conflicted txs are conflicted again."""
        with self.store.batch():
            for row in self.store.txs_in_states((st.MEMPOOL,)):
                self.store.set_state(row.txid, st.INACTIVE, False)
            for row in self.store.txs_in_states((st.CONFIRMED, st.CONFLICTED)):
                if not in_active_chain(row.block_hash):
                    self.store.set_state(row.txid, st.INACTIVE, False)
                    if row.coinbase:
                        self._abandon_coinbase_tree(row.txid)
            for row in self.store.txs_in_states((st.CONFLICTED,)):
                self.mark_conflicted(row.block_hash, row.block_height, row.block_time, row.txid)

    # -- abandon -------------------------------------------------------------------

    def abandon(self, txid) -> str:
        """'ok', 'unknown' or 'not eligible' (Core's AbandonTransaction)."""
        with self.store.batch():
            row = self.store.get_tx(txid)
            if row is None:
                return "unknown"
            if self.depth(row) != 0 or row.state == st.MEMPOOL:
                return "not eligible"

            def update(r):
                if r.state == st.CONFLICTED or self.is_abandoned(r):
                    return False
                if r.state == st.MEMPOOL or r.state == st.CONFIRMED:
                    return False
                self.store.set_state(r.txid, st.INACTIVE, True)
                return True
            self._recursive_update(txid, update)
            return "ok"


def derive_scripts(desc, start, end):
    """Scripts of a (ranged) descriptor, or DerivationError."""
    return [desc.script(i) for i in range(start, end)]


__all__ = ["Wallet", "DerivationError", "derive_scripts", "block_time", "block_prev"]
