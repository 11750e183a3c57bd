"""What spending unconfirmed outputs costs in fees for their ancestors: Core's MiniMiner
(node/mini_miner.cpp), the wallet's calculateIndividualBumpFees and calculateCombinedBumpFee.

The mempool transactions connected to the outputs' transactions (their clusters) are "mined"
into a mock block, best ancestor package first (a package is ranked by the lower of its
ancestor-set feerate and its own feerate; ties by txid), until the best package left pays less
than the target feerate. An output of a transaction in that block costs nothing more; an output
of one left out costs what its left-out ancestor set (or the transaction alone, whichever is
more) lacks at the target feerate. Transactions spending the given outputs, and their
descendants, are the ones the caller means to replace: they are left out of the mock mempool.

Sizes are virtual bytes, fees in satoshis, feerates in sat/kvB (policy.fee_for rounds up).
"""
from __future__ import annotations

from dataclasses import dataclass

from quill.tx.transaction import OutPoint

from .mempool import Mempool
from .policy import fee_for


@dataclass
class _Entry:
    fee: int
    size: int
    ancestor_fee: int
    ancestor_size: int
    parents: list[bytes]
    descendants: list[bytes]      # itself included


class BumpFees:
    """The wallet's view of the node's bump fees (Core's chain interface): each call a new MiniMiner
    over `pool`. Use it while holding the chain's lock."""

    def __init__(self, pool: Mempool) -> None:
        self.pool = pool

    def individual(self, outpoints: list[OutPoint], rate: int) -> dict[tuple[bytes, int], int]:
        """Core's calculateIndividualBumpFees."""
        return MiniMiner(self.pool, outpoints).individual_bump_fees(rate)

    def combined(self, outpoints: list[OutPoint], rate: int) -> int:
        """Core's calculateCombinedBumpFee."""
        return MiniMiner(self.pool, outpoints).combined_bump_fee(rate)


class MiniMiner:
    """Core's MiniMiner over the mempool `pool` for `outpoints`; one calculation per instance."""

    def __init__(self, pool: Mempool, outpoints: list[OutPoint]) -> None:
        self.bump_fees: dict[tuple[bytes, int], int] = {}
        self.requested: dict[bytes, list[tuple[bytes, int]]] = {}
        replaced: set[bytes] = set()
        for outpoint in outpoints:
            key = (outpoint.hash, outpoint.n)
            if outpoint.hash not in pool:
                self.bump_fees[key] = 0         # confirmed, or unknown: nothing to bump
                continue
            self.requested.setdefault(outpoint.hash, []).append(key)
            spender = pool.spender(outpoint)
            if spender is not None:
                replaced.update(pool.descendants(spender))
        members: list[bytes] = []
        for txid in self.requested:
            members += [t for t in pool.cluster(txid) if t not in members]
        self.entries: dict[bytes, _Entry] = {}
        for txid in members:
            if txid in replaced:
                for key in self.requested.pop(txid, []):
                    self.bump_fees[key] = 0     # it will not exist after the replacement
                continue
            e = pool.get(txid)
            family = [pool.get(t) for t in pool.ancestors(txid)]
            self.entries[txid] = _Entry(e.fee, e.vsize, e.fee + sum(a.fee for a in family),
                                        e.vsize + sum(a.vsize for a in family), pool.parents(txid),
                                        [d for d in pool.descendants(txid) if d not in replaced])
        self.in_block: set[bytes] = set()

    def _build_mock_template(self, rate: int) -> None:
        """Core's BuildMockTemplate: mine the best ancestor packages paying at least `rate`."""
        while self.entries:
            best = max(self.entries, key=self._score)
            entry = self.entries[best]
            if entry.ancestor_fee < fee_for(rate, entry.ancestor_size):
                break
            package, todo = set(), [best]
            while todo:
                t = todo.pop()
                if t not in package:
                    package.add(t)
                    todo += [p for p in self.entries[t].parents if p in self.entries]
            for t in package:
                mined = self.entries[t]
                for d in mined.descendants:
                    if d in self.entries:
                        self.entries[d].ancestor_fee -= mined.fee
                        self.entries[d].ancestor_size -= mined.size
            for t in package:
                del self.entries[t]
                self.in_block.add(t)

    def _score(self, txid: bytes) -> tuple[_Feerate, _Txid]:
        e = self.entries[txid]
        return min(_Feerate(e.ancestor_fee, e.ancestor_size), _Feerate(e.fee, e.size)), _Txid(txid)

    def individual_bump_fees(self, rate: int) -> dict[tuple[bytes, int], int]:
        """Core's CalculateBumpFees: (txid, n) -> what spending that output adds at `rate`."""
        self._build_mock_template(rate)
        out = dict(self.bump_fees)
        for txid, keys in self.requested.items():
            fee = 0
            if txid not in self.in_block:
                e = self.entries[txid]
                fee = max(fee_for(rate, e.ancestor_size) - e.ancestor_fee, fee_for(rate, e.size) - e.fee)
            for key in keys:
                out[key] = fee
        return out

    def combined_bump_fee(self, rate: int) -> int:
        """Core's CalculateTotalBumpFees: the left-out ancestors of all the outputs, counted once."""
        self._build_mock_template(rate)
        package: set[bytes] = set()
        todo = [t for t in self.requested if t not in self.in_block and t in self.entries]
        while todo:
            t = todo.pop()
            if t not in package:
                package.add(t)
                todo += [p for p in self.entries[t].parents if p in self.entries]
        return (fee_for(rate, sum(self.entries[t].size for t in package))
                - sum(self.entries[t].fee for t in package))


class _Feerate:
    """Core's FeeFrac order: by feerate, exactly; at equal feerates the smaller size first."""
    __slots__ = ("fee", "size")

    def __init__(self, fee: int, size: int) -> None:
        self.fee, self.size = fee, size

    def _key(self, other: _Feerate) -> tuple[int, int]:
        return self.fee * other.size, other.fee * self.size

    def __lt__(self, other: _Feerate) -> bool:
        a, b = self._key(other)
        return a < b or (a == b and self.size > other.size)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Feerate) and self._key(other)[0] == self._key(other)[1] \
            and self.size == other.size

    def __hash__(self) -> int:
        return hash((self.fee, self.size))


class _Txid:
    """The tie-break: Core sorts ascending by txid (uint256 compares its bytes), so the smaller wins."""
    __slots__ = ("txid",)

    def __init__(self, txid: bytes) -> None:
        self.txid = txid

    def __lt__(self, other: _Txid) -> bool:
        return self.txid > other.txid          # internal byte order, as uint256's memcmp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Txid) and self.txid == other.txid

    def __hash__(self) -> int:
        return hash(self.txid)
