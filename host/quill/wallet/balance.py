"""How a wallet output is spent, and the wallet's balance: Core's CWallet::HowSpent/IsSpent and
wallet/receive.cpp GetBalance as of v31 (bitcoin/bitcoin#33671).

    how_spent(view, txid, n)     UNSPENT, CONFIRMED, MEMPOOL or NONMEMPOOL
    is_spent(view, txid, n)      any spender that counts (listunspent, lockunspent, sendall)
    get_balance(view, min_depth) getbalances (min_depth 0) and getbalance, from the cached credit

A coin spent only by wallet transactions that are neither confirmed nor in the mempool, nor
conflicted nor abandoned (an expired or evicted spend, one the mempool refused), still counts in
its bucket (trusted, untrusted_pending or immature) and is subtracted again in `nonmempool`, so
the buckets add up to what they would be without that spend. getbalance does not count it:
checked against Core 31.99 (tests/wallet_core/test_nonmempool_vs_core.py).

`view` is a quill.wallet.results.View (one call's wallet, tip and mempool).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from quill.bulk import bulk_gc
from quill.wallet import store as st


class Spent(Enum):
    """Core's CWallet::SpendType."""
    UNSPENT = 0
    CONFIRMED = 1
    MEMPOOL = 2
    NONMEMPOOL = 3


def how_spent(view: Any, txid: bytes, n: int) -> Spent:
    """The strongest spender of (txid, n) among the wallet's transactions: a confirmed one, else
    one in the mempool, else an inactive one that is not abandoned; conflicted spenders
    (in a block or in the mempool) do not spend."""
    w = view.wallet
    found = Spent.UNSPENT
    for spender in w.spends.get((txid, n), ()):
        if spender in w.mempool_conflicts:
            continue
        row = w.store.get_tx(spender)
        if row is None:
            continue
        depth = view.depth(row)
        if depth > 0:
            return Spent.CONFIRMED
        if depth < 0:
            continue
        if row.state == st.MEMPOOL:
            found = Spent.MEMPOOL
        elif not w.is_abandoned(row) and found is Spent.UNSPENT:
            found = Spent.NONMEMPOOL
    return found


def is_spent(view: Any, txid: bytes, n: int) -> bool:
    """Core's CWallet::IsSpent."""
    return (txid, n) in view.wallet.spends and how_spent(view, txid, n) is not Spent.UNSPENT


@dataclass
class Balance:
    """Core's Balance (amounts in satoshis); `available` is what getbalance answers: the trusted
    coins that no wallet transaction spends."""
    trusted: int = 0
    untrusted_pending: int = 0
    immature: int = 0
    nonmempool: int = 0
    available: int = 0


def tx_credit(view: Any, row: Any) -> tuple[int, int]:
    """What `row`'s outputs of ours hold, (unspent, spent only out of the mempool): outputs spent
    by a confirmed or mempool wallet transaction count in neither."""
    w = view.wallet
    spends = w.spends
    unspent = nonmempool = 0
    for n, out in w.credit_outputs(row.tx):
        spent = how_spent(view, row.txid, n) if (row.txid, n) in spends else Spent.UNSPENT
        if spent is Spent.UNSPENT:
            unspent += out.value
        elif spent is Spent.NONMEMPOOL:
            nonmempool += out.value
    return unspent, nonmempool


@bulk_gc()
def get_balance(view: Any, min_depth: int = 0) -> Balance:
    """Core's GetBalance: every unspent (or only non-mempool-spent) output of the wallet's
    transactions, by the state of the transaction that made it. Each transaction's credit is
    cached (quill.wallet.credit); at min_depth <= 1 the confirmed non-coinbase ones are summed
    already and only the others are visited."""
    w = view.wallet
    cache = w.credit_cache
    cache.refresh(view, tx_credit)
    bal = Balance()
    if min_depth <= 1:
        bal.trusted = cache.settled_unspent + cache.settled_nonmempool
        bal.available = cache.settled_unspent
        bal.nonmempool = -cache.settled_nonmempool
        entries = cache.volatile()
    else:
        entries = cache.all()
    for entry in entries:
        row = entry.row
        depth = view.depth(row)
        if depth < 0:
            continue  # conflicted: trusted in no bucket
        immature = row.coinbase and w.blocks_to_maturity(row, depth) > 0
        if immature and depth == 0:
            continue  # an orphaned coinbase
        trusted = not immature and w.is_trusted(row, view.trust_memo, view.tip_height)
        if not (immature or (trusted and depth >= min_depth) or (not trusted and row.state == st.MEMPOOL)):
            continue
        value = entry.unspent + entry.nonmempool
        if immature:
            bal.immature += value
        elif trusted:
            bal.trusted += value
            bal.available += entry.unspent
        else:
            bal.untrusted_pending += value
        bal.nonmempool -= entry.nonmempool
    return bal
