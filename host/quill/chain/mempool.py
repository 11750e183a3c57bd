"""The memory pool: unconfirmed transactions that spend the UTXO set or each other.

This holds entries and the spends index; the acceptance rules run in
validation.ChainState.accept_to_mempool, which owns the chain the pool sits on.
Removal reasons are Core's MemPoolRemovalReason strings.
"""
from . import cluster
from .coins import Coin

# Core's MemPoolRemovalReason names
REASON_EXPIRY = "expiry"
REASON_REORG = "reorg"
REASON_BLOCK = "block"
REASON_CONFLICT = "conflict"
REASON_REPLACED = "replaced"

# The height Core gives a coin that exists only in the mempool (MEMPOOL_HEIGHT).
MEMPOOL_HEIGHT = 0x7FFFFFFF


class MempoolEntry:
    __slots__ = ("tx", "txid", "fee", "vsize", "weight", "time", "height", "sequence", "unbroadcast")

    def __init__(self, tx, fee, time, height, sequence):
        self.tx = tx
        self.txid = tx.txid()
        self.fee = fee
        self.weight = tx.weight()
        self.vsize = (self.weight + 3) // 4
        self.time = time
        self.height = height
        self.sequence = sequence
        # Submitted here and never announced to a peer (Core's unbroadcast set); Quill has no peers.
        self.unbroadcast = False


class Mempool:
    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.entries: dict = {}      # txid -> MempoolEntry, in arrival order
        self.spenders: dict = {}     # (txid, n) -> txid of the mempool tx spending it
        self.sequence = 1      # Core's mempool_sequence: bumped on every add and removal

    def __contains__(self, txid) -> bool:
        return txid in self.entries

    def __len__(self):
        return len(self.entries)

    def get(self, txid):
        return self.entries.get(txid)

    def spender(self, prevout):
        return self.spenders.get((prevout.hash, prevout.n))

    def coin(self, prevout):
        """The output a mempool transaction creates, as a Coin, or None."""
        entry = self.entries.get(prevout.hash)
        if entry is None or prevout.n >= len(entry.tx.vout):
            return None
        out = entry.tx.vout[prevout.n]
        return Coin(out.value, out.script_pubkey, MEMPOOL_HEIGHT, False)

    def add(self, entry) -> None:
        self.entries[entry.txid] = entry
        for txin in entry.tx.vin:
            self.spenders[(txin.prevout.hash, txin.prevout.n)] = entry.txid
        self.sequence += 1

    def remove(self, txid):
        entry = self.entries.pop(txid)
        for txin in entry.tx.vin:
            key = (txin.prevout.hash, txin.prevout.n)
            if self.spenders.get(key) == txid:
                del self.spenders[key]
        self.sequence += 1
        return entry

    def children(self, txid):
        entry = self.entries[txid]
        out = []
        for n in range(len(entry.tx.vout)):
            child = self.spenders.get((txid, n))
            if child is not None and child not in out:
                out.append(child)
        return out

    def parents(self, txid):
        entry = self.entries[txid]
        out = []
        for txin in entry.tx.vin:
            h = txin.prevout.hash
            if h in self.entries and h not in out:
                out.append(h)
        return out

    def descendants(self, txid):
        """`txid` and everything spending it, parents before children."""
        seen = [txid]
        i = 0
        while i < len(seen):
            for child in self.children(seen[i]):
                if child not in seen:
                    seen.append(child)
            i += 1
        return self.sorted(seen)

    def ancestors(self, txid):
        """Every in-pool ancestor of `txid` (not itself)."""
        seen = []
        todo = self.parents(txid)
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.append(t)
                todo.extend(self.parents(t))
        return seen

    def cluster(self, txid):
        """Every pool transaction connected to `txid` through spends, either way (Core's cluster)."""
        seen = [txid]
        found = {txid}
        i = 0
        while i < len(seen):
            for other in self.parents(seen[i]) + self.children(seen[i]):
                if other not in found:
                    found.add(other)
                    seen.append(other)
            i += 1
        return seen

    def mining_order(self) -> list[bytes]:
        """Every txid in Core 31's mining order, the order getrawmempool lists (cluster.mining_order)."""
        return cluster.mining_order({t: cluster.Node(e.fee, e.weight, frozenset(self.parents(t)))
                                     for t, e in self.entries.items()})

    def sorted(self, txids=None):
        """Txids in an order where every parent comes before its children (arrival order otherwise)."""
        pending = list(self.entries) if txids is None else list(txids)
        wanted = set(pending)
        placed, out = set(), []

        def place(t):
            stack = [t]
            while stack:
                cur = stack[-1]
                waiting = [p for p in self.parents(cur) if p in wanted and p not in placed]
                if waiting:
                    stack.extend(waiting)
                    continue
                stack.pop()
                if cur not in placed:
                    placed.add(cur)
                    out.append(cur)

        for t in pending:
            place(t)
        return out
