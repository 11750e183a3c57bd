"""Replacing mempool transactions, as Bitcoin Core 31 does (policy/rbf.cpp and
MemPoolAccept::ReplacementChecks in validation.cpp, with the cluster mempool; regtest defaults).

Full replace-by-fee: a transaction that spends an output some mempool transaction already
spends replaces it (and its descendants) whether or not either signals BIP125, if

  * it conflicts with at most 100 distinct clusters (rule 5: "too many potential replacements");
  * it pays at least the fees of everything it evicts, and the difference pays for its own
    size at the incremental relay feerate (rules 3 and 4: "insufficient fee");
  * the clusters it touches stay within the cluster limits ("too-large-cluster");
  * the mempool's feerate diagram strictly improves ("replacement-failed"): the chunks of the
    clusters touched, before and after, compared as Core's ImprovesFeerateDiagram does;
  * it does not spend an output of a transaction it evicts ("bad-txns-spends-conflicting-tx").

Core 31 has dropped the former rules that the originals signal replaceability, that new inputs
be confirmed, and that the new feerate beat each original's. The cluster limits apply to every
transaction entering the pool (Core's -limitclustercount/-limitclustersize defaults).
Each check raises rules.Invalid with Core's reject reason and text; nothing here changes the pool.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from quill.consensus import WITNESS_SCALE_FACTOR
from quill.tx.hashes import hash_to_hex
from quill.tx.transaction import Transaction

from . import cluster
from .mempool import Mempool, MempoolEntry
from .policy import fee_for
from .rules import Invalid, format_money

MAX_REPLACEMENT_CANDIDATES = 100      # distinct clusters a replacement may conflict with
INCREMENTAL_RELAY_FEE = 100           # sat/kvB (Core's DEFAULT_INCREMENTAL_RELAY_FEE since v30)
CLUSTER_COUNT_LIMIT = 64              # Core's DEFAULT_CLUSTER_LIMIT (-limitclustercount)
CLUSTER_SIZE_LIMIT_KVB = 101          # Core's DEFAULT_CLUSTER_SIZE_LIMIT_KVB (-limitclustersize)


@dataclass
class Replacement:
    """What accepting a transaction would evict: its direct conflicts and every descendant."""
    conflicts: list[bytes]     # the pool transactions spending an outpoint the new one spends
    evicted: list[bytes]       # those and their descendants, parents first


def direct_conflicts(pool: Mempool, tx: Transaction) -> list[bytes]:
    """Core's GetConflictTx over the inputs: the pool transactions spending the same outpoints."""
    out: list[bytes] = []
    for txin in tx.vin:
        spender = pool.spender(txin.prevout)
        if spender is not None and spender not in out:
            out.append(spender)
    return out


def check(pool: Mempool, entry: MempoolEntry, conflicts: list[bytes]) -> Replacement:
    """Every check Core runs after PreChecks, in its order: ReplacementChecks when there are
    conflicts, the cluster limits, then that no ancestor is evicted. Raises Invalid."""
    txid = entry.txid
    evicted: list[bytes] = []
    if conflicts:
        clusters = {min(pool.cluster(t)) for t in conflicts}
        if len(clusters) > MAX_REPLACEMENT_CANDIDATES:
            raise Invalid("too many potential replacements",
                          f"rejecting replacement {hash_to_hex(txid)}; too many conflicting clusters "
                          f"({len(clusters)} > {MAX_REPLACEMENT_CANDIDATES})")
        evicted = pool.sorted([d for t in conflicts for d in pool.descendants(t)])
        _pays_for_rbf(sum(pool.get(t).fee for t in evicted), entry, txid)
        _check_cluster_limits(pool, entry, evicted)
        if cluster.compare_diagrams(*_diagrams(pool, entry, evicted)) != "better":
            raise Invalid("replacement-failed", "insufficient feerate: does not improve feerate diagram")
    else:
        _check_cluster_limits(pool, entry, evicted)
    if conflicts:
        for ancestor in _ancestors(pool, entry.tx):
            if ancestor in conflicts:
                raise Invalid("bad-txns-spends-conflicting-tx",
                              f"{hash_to_hex(txid)} spends conflicting transaction {hash_to_hex(ancestor)}")
    return Replacement(conflicts, evicted)


def _pays_for_rbf(original_fees: int, entry: MempoolEntry, txid: bytes) -> None:
    """Core's PaysForRBF (rules 3 and 4)."""
    if entry.fee < original_fees:
        raise Invalid("insufficient fee", f"rejecting replacement {hash_to_hex(txid)}, less fees than conflicting "
                                          f"txs; {format_money(entry.fee)} < {format_money(original_fees)}")
    additional = entry.fee - original_fees
    relay = fee_for(INCREMENTAL_RELAY_FEE, entry.vsize)
    if additional < relay:
        raise Invalid("insufficient fee", f"rejecting replacement {hash_to_hex(txid)}, not enough additional fees "
                                          f"to relay; {format_money(additional)} < {format_money(relay)}")


def _parents(pool: Mempool, tx: Transaction) -> list[bytes]:
    out: list[bytes] = []
    for txin in tx.vin:
        h = txin.prevout.hash
        if h in pool and h not in out:
            out.append(h)
    return out


def _ancestors(pool: Mempool, tx: Transaction) -> list[bytes]:
    """The new transaction's in-pool ancestors (before anything is evicted)."""
    out: list[bytes] = []
    for parent in _parents(pool, tx):
        for t in [parent, *pool.ancestors(parent)]:
            if t not in out:
                out.append(t)
    return out


def _touched(pool: Mempool, entry: MempoolEntry, evicted: Iterable[bytes]) -> list[bytes]:
    """The pool transactions of every cluster the change touches: the evicted ones' clusters
    and the new transaction's parents' clusters."""
    out: list[bytes] = []
    seen: set[bytes] = set()
    for t in [*evicted, *_parents(pool, entry.tx)]:
        if t not in seen:
            members = pool.cluster(t)
            seen.update(members)
            out.extend(members)
    return out


def _node(pool: Mempool, txid: bytes) -> cluster.Node:
    e = pool.get(txid)
    return cluster.Node(e.fee, e.weight, frozenset(pool.parents(txid)))


def _after(pool: Mempool, entry: MempoolEntry, evicted: list[bytes]) -> dict[bytes, cluster.Node]:
    """The touched clusters once the change is made: the evicted transactions gone, the new one in."""
    gone = set(evicted)
    nodes = {t: _node(pool, t) for t in _touched(pool, entry, evicted) if t not in gone}
    nodes[entry.txid] = cluster.Node(entry.fee, entry.weight,
                                     frozenset(p for p in _parents(pool, entry.tx) if p not in gone))
    return nodes


def _check_cluster_limits(pool: Mempool, entry: MempoolEntry, evicted: list[bytes]) -> None:
    """Core's CheckMemPoolPolicyLimits: the new transaction's cluster, evictions made, within limits."""
    nodes = _after(pool, entry, evicted)
    for members in cluster.components(nodes):
        if entry.txid not in members:
            continue
        if (len(members) > CLUSTER_COUNT_LIMIT
                or sum(nodes[t].size for t in members) > CLUSTER_SIZE_LIMIT_KVB * 1000 * WITNESS_SCALE_FACTOR):
            raise Invalid("too-large-cluster")


def _diagrams(pool: Mempool, entry: MempoolEntry,
              evicted: list[bytes]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(new, old): the chunks of the touched clusters after and before the change (Core's
    CalculateChunksForRBF)."""
    old = cluster.chunk_feerates({t: _node(pool, t) for t in _touched(pool, entry, evicted)})
    return cluster.chunk_feerates(_after(pool, entry, evicted)), old
