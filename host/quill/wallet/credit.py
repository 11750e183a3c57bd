"""Each wallet transaction's credit, cached as Core's CWalletTx caches it (m_amounts, MarkDirty), and
the running totals of the transactions whose bucket no longer depends on the tip.

A transaction's cached credit is what its outputs add to a balance, split by how each is spent
(quill.wallet.balance.how_spent): `unspent` (no spender counts) and `nonmempool` (spent only by a
wallet transaction that is neither confirmed nor in the mempool). Both depend only on the
transaction's own outputs and on the state of its spenders, so an entry is recomputed when the
store writes the transaction, its outputs or a spend of it (Store.touched), or when a spender's
state or mempool conflicts change (then the spender's parents are dirty too), as Core's MarkDirty
marks a transaction and the ones it spends. Scripts newly derived can make more outputs ours, and
a lower tip can change a depth's sign: either rebuilds everything, as does a store resync.

A confirmed non-coinbase transaction counts as trusted at every depth >= 1, so its credit is kept
in running totals (`settled`), and getbalance / getbalances at minconf 0 or 1 visit only the other
transactions (unconfirmed, conflicted, coinbase), which are few.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from quill.wallet import store as st


@dataclass
class Credit:
    """One wallet transaction's row (as stored when the entry was made) and credit, in satoshis."""
    row: Any
    unspent: int
    nonmempool: int

    @property
    def settled(self) -> bool:
        """Trusted at every depth >= 1 until the store writes it again (a reorg does)."""
        return self.row.state == st.CONFIRMED and not self.row.coinbase


class CreditCache:
    """The cached credit of every wallet transaction, kept current from the store's writes."""

    def __init__(self) -> None:
        self._entries: dict[bytes, Credit] | None = None
        self._scripts = -1
        self._tip = -1
        self._volatile: dict[bytes, Credit] = {}
        self.settled_unspent = 0      # sums over the settled entries
        self.settled_nonmempool = 0

    def invalidate(self) -> None:
        """Everything is recomputed on the next refresh (a store resync, new scripts)."""
        self._entries = None

    def refresh(self, view: Any, credit_of: Callable[[Any, Any], tuple[int, int]]) -> None:
        """Bring the entries up to what the wallet holds; `credit_of(view, row)` is a transaction's
        (unspent, nonmempool) credit (quill.wallet.balance.tx_credit)."""
        w = view.wallet
        store = w.store
        if self._entries is None or len(w.scripts) != self._scripts or view.tip_height < self._tip:
            store.touched.clear()
            self._entries = {}
            self._volatile = {}
            self.settled_unspent = self.settled_nonmempool = 0
            self._scripts = len(w.scripts)
            for row in store.all_txs():
                self._put(row.txid, Credit(row, *credit_of(view, row)))
        elif store.touched:
            touched, store.touched = store.touched, set()
            dirty = set(touched)
            for txid in touched:
                row = store.get_tx(txid)
                if row is not None and not row.coinbase:
                    dirty.update(txin.prevout.hash for txin in row.tx.vin)
            for txid in dirty:
                row = store.get_tx(txid)
                self._put(txid, None if row is None else Credit(row, *credit_of(view, row)))
        self._tip = view.tip_height

    def volatile(self) -> Iterable[Credit]:
        """The entries not in the running totals: unconfirmed, conflicted and coinbase transactions."""
        return self._volatile.values()

    def all(self) -> Iterable[Credit]:
        assert self._entries is not None
        return self._entries.values()

    def _put(self, txid: bytes, entry: Credit | None) -> None:
        assert self._entries is not None
        old = self._entries.pop(txid, None)
        if old is not None:
            if old.settled:
                self.settled_unspent -= old.unspent
                self.settled_nonmempool -= old.nonmempool
            else:
                del self._volatile[txid]
        if entry is None:
            return
        self._entries[txid] = entry
        if entry.settled:
            self.settled_unspent += entry.unspent
            self.settled_nonmempool += entry.nonmempool
        else:
            self._volatile[txid] = entry
