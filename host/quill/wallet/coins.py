"""A watch-only wallet's coins and receipts, as Core's wallet/spend.cpp (AvailableCoins),
wallet/receive.cpp (GetBalance) and wallet/rpc/coins.cpp, transactions.cpp (GetReceived,
ListReceived) compute them.

    available_coins(view, CoinFilter(...))   the unspent outputs listunspent shows
    received_by(view, scripts, ...)          getreceivedbyaddress / getreceivedbylabel
    tally(view, ...)                         listreceivedbyaddress / listreceivedbylabel
    LockedCoins                              lockunspent / listlockunspent

`view` is a quill.wallet.results.View (one call's wallet, tip and mempool).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quill.consensus import MAX_MONEY
from quill.tx import script as S
from quill.tx.transaction import OutPoint, TxOut
from quill.wallet import store as st
from quill.wallet.balance import is_spent

MAX_DEPTH = 9_999_999
LOCKS_META_KEY = "locked_coins"
SESSION_LOCKS_META_KEY = "locked_coins_session"    # a shared store's locks that are not persistent

# Core's OutputType order, which AvailableCoins' result lists its coins in.
_OUTPUT_TYPE_ORDER = {S.PUBKEYHASH: 0, S.SCRIPTHASH: 1, S.WITNESS_V0_KEYHASH: 2, S.WITNESS_V0_SCRIPTHASH: 2,
                      S.WITNESS_V1_TAPROOT: 3}


@dataclass
class CoinFilter:
    """Core's CoinFilterParams and the coin-control depths listunspent sets."""
    min_depth: int = 1
    max_depth: int = MAX_DEPTH
    include_unsafe: bool = True
    min_amount: int = 0
    max_amount: int = MAX_MONEY
    min_sum_amount: int = MAX_MONEY
    max_count: int = 0
    include_immature_coinbase: bool = False


@dataclass
class WalletCoin:
    outpoint: OutPoint
    txout: TxOut
    depth: int
    safe: bool
    solvable: bool
    seq: int = field(default=0)


def _output_type_rank(script: bytes) -> int:
    kind, _ = S.solver(script)
    if kind == S.SCRIPTHASH:
        return 1  # P2SH-wrapped segwit or legacy P2SH: Core files both by the descriptor's type
    return _OUTPUT_TYPE_ORDER.get(kind, 4)


def available_coins(view: Any, coin_filter: CoinFilter, locked: LockedCoins) -> list[WalletCoin]:
    """Core's AvailableCoins for listunspent (locked coins skipped), grouped by output type."""
    w = view.wallet
    found: list[WalletCoin] = []
    total = 0
    scripts = w.scripts
    solvable_descs = {desc_id for desc_id, info in w.descs.items() if info.desc.is_solvable()}
    solvable_scripts: dict[bytes, bool] = {}
    for row in w.store.all_txs():
        depth = view.depth(row)
        if row.coinbase and w.blocks_to_maturity(row, depth) > 0 and not coin_filter.include_immature_coinbase:
            continue
        if depth < 0 or (depth == 0 and row.state != st.MEMPOOL):
            continue  # not even in our mempool
        safe = w.is_trusted(row, view.trust_memo, view.tip_height)
        if not coin_filter.include_unsafe and not safe:
            continue
        if not coin_filter.min_depth <= depth <= coin_filter.max_depth:
            continue
        for n, out in w.credit_outputs(row.tx):
            if not coin_filter.min_amount <= out.value <= coin_filter.max_amount:
                continue
            outpoint = OutPoint(row.txid, n)
            if outpoint in locked or is_spent(view, row.txid, n):
                continue
            solvable = solvable_scripts.get(out.script_pubkey)
            if solvable is None:   # a script paid several times is looked up once
                solvable = solvable_scripts[out.script_pubkey] = any(
                    desc_id in solvable_descs for desc_id, _ in scripts.get(out.script_pubkey, ()))
            found.append(WalletCoin(outpoint, out, depth, safe, solvable, row.seq))
            total += out.value
            if coin_filter.min_sum_amount != MAX_MONEY and total >= coin_filter.min_sum_amount:
                return _ordered(found)
            if coin_filter.max_count > 0 and len(found) >= coin_filter.max_count:
                return _ordered(found)
    return _ordered(found)


def _ordered(coins: list[WalletCoin]) -> list[WalletCoin]:
    ranks: dict[bytes, int] = {}   # a script paid several times is classified once

    def key(c: WalletCoin) -> tuple[int, int, int]:
        script = c.txout.script_pubkey
        rank = ranks.get(script)
        if rank is None:
            rank = ranks[script] = _output_type_rank(script)
        return rank, c.seq, c.outpoint.n

    return sorted(coins, key=key)


def _counts(w: Any, row: Any, depth: int, min_depth: int, include_immature: bool) -> bool:
    if depth < min_depth or (row.coinbase and depth < 1):
        return False
    return not (row.coinbase and w.blocks_to_maturity(row, depth) > 0 and not include_immature)


def received_by(view: Any, scripts: set[bytes], min_depth: int, include_immature: bool) -> int:
    """Core's GetReceived: every output to these scripts in transactions deep enough."""
    w = view.wallet
    total = 0
    for row in w.store.all_txs():
        if _counts(w, row, view.depth(row), min_depth, include_immature):
            total += sum(out.value for out in row.tx.vout if out.script_pubkey in scripts)
    return total


@dataclass
class Tally:
    amount: int = 0
    confirmations: int | None = None
    txids: list[bytes] = field(default_factory=list)


def tally(view: Any, min_depth: int, include_immature: bool, only_script: bytes | None = None) -> dict[bytes, Tally]:
    """Core's ListReceived tally: per owned script, amount, fewest confirmations and txids."""
    w = view.wallet
    out: dict[bytes, Tally] = {}
    for row in w.store.all_txs():
        depth = view.depth(row)
        if not _counts(w, row, depth, min_depth, include_immature):
            continue
        for txout in row.tx.vout:
            script = txout.script_pubkey
            if only_script is not None and script != only_script:
                continue
            if not w.is_mine(script):
                continue
            item = out.setdefault(script, Tally())
            item.amount += txout.value
            item.confirmations = depth if item.confirmations is None else min(item.confirmations, depth)
            item.txids.append(row.txid)
    return out


def destination_sort_key(script: bytes) -> tuple[int, bytes]:
    """Core's CTxDestination order (its std::map address book): by destination kind, then bytes."""
    kind, solutions = S.solver(script)
    rank = {S.PUBKEYHASH: 2, S.SCRIPTHASH: 3, S.WITNESS_V0_SCRIPTHASH: 4, S.WITNESS_V0_KEYHASH: 5,
            S.WITNESS_V1_TAPROOT: 6, S.ANCHOR: 7, S.WITNESS_UNKNOWN: 8}.get(kind, 9)
    if kind == S.WITNESS_UNKNOWN:
        return rank, bytes(solutions[0]) + bytes(solutions[1])
    return rank, bytes(solutions[0]) if solutions else script


class LockedCoins:
    """Core's m_locked_coins: outpoints kept out of coin selection; persistent ones are written
    to the wallet file and come back when it is loaded. In a store several processes share
    (`store.shared`: PostgreSQL, docs/postgresql.md) the others are written too, apart, so that
    every process sees them; they go when the last process holding the wallet lets it go."""

    def __init__(self, wallet_store: Any) -> None:
        self.store = wallet_store
        self.shared = bool(getattr(wallet_store, "shared", False))
        self.locks: dict[OutPoint, bool] = self._read()

    def _read(self) -> dict[OutPoint, bool]:
        locks = {}
        for txid_hex, n in json.loads(self.store.get_meta(LOCKS_META_KEY, "[]") or "[]"):
            locks[OutPoint(bytes.fromhex(txid_hex), n)] = True
        if self.shared:
            for txid_hex, n in json.loads(self.store.get_meta(SESSION_LOCKS_META_KEY, "[]") or "[]"):
                locks.setdefault(OutPoint(bytes.fromhex(txid_hex), n), False)
        return locks

    def reload(self) -> None:
        """Another process changed the wallet: the locks are the store's."""
        self.locks = self._read()

    def __contains__(self, outpoint: OutPoint) -> bool:
        return outpoint in self.locks

    def lock(self, outpoint: OutPoint, persistent: bool) -> None:
        def change(locks: dict[OutPoint, bool]) -> bool:
            locks[outpoint] = persistent or locks.get(outpoint, False)
            return persistent
        self._change(change)

    def unlock(self, outpoint: OutPoint) -> None:
        self._change(lambda locks: locks.pop(outpoint, False))

    def unlock_all(self) -> None:
        def change(locks: dict[OutPoint, bool]) -> bool:
            was_persistent = any(locks.values())
            locks.clear()
            return was_persistent
        self._change(change)

    def _change(self, change: Callable[[dict[OutPoint, bool]], bool]) -> None:
        """The file first, then memory: a write that fails changes neither. `change` edits a copy
        of the locks and says whether a persistent one changed."""
        if not self.shared:
            locks = dict(self.locks)
            if change(locks):
                self._write(locks)
            self.locks = locks
            return
        with self.store.batch():
            locks = dict(self.locks)    # read inside: the transaction's start caught up with the others
            change(locks)
            self._write(locks)
            self.store.set_meta(SESSION_LOCKS_META_KEY,
                                json.dumps([[o.hash.hex(), o.n] for o, persistent in locks.items() if not persistent]))
        self.locks = locks

    def _write(self, locks: dict[OutPoint, bool]) -> None:
        kept = [[o.hash.hex(), o.n] for o, persistent in locks.items() if persistent]
        with self.store.batch():
            self.store.set_meta(LOCKS_META_KEY, json.dumps(kept))

    def listed(self) -> list[OutPoint]:
        """Core's ListLockedCoins: in outpoint order (txid bytes, then index)."""
        return sorted(self.locks, key=lambda o: (o.hash, o.n))

