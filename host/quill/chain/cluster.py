"""Clusters of the mempool, their chunks and feerate diagrams (Core 31's cluster mempool:
txgraph.cpp, cluster_linearize.h, util/feefrac.cpp).

A cluster is a connected component of the mempool's spend graph. Core keeps each cluster
linearized (an order where parents come first) and cut into chunks: consecutive groups that a
miner takes together, in decreasing feerate. With an optimal linearization the chunks are
found by taking, again and again, the ancestor-closed set of highest feerate among what is
left; the diagram of cumulative (size, fee) they draw is the same whichever optimal
linearization is taken, which is what the replacement rule compares. Core linearizes a
cluster of up to 64 transactions optimally in practice; so does this module, exactly: the
highest-feerate closed set is found by Dinkelbach's method over maximum-weight closures
(a minimum cut), all in integers.

Sizes are in weight units, as Core's TxGraph counts them (FeePerWeight).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    """One transaction of a cluster: its fee, its size and its in-cluster parents."""
    fee: int
    size: int
    parents: frozenset[bytes]


def components(nodes: Mapping[bytes, Node]) -> list[list[bytes]]:
    """The connected components (clusters) of `nodes`, each in the order its members were given."""
    neighbours: dict[bytes, set[bytes]] = {t: set() for t in nodes}
    for t, node in nodes.items():
        for p in node.parents:
            if p in neighbours:
                neighbours[t].add(p)
                neighbours[p].add(t)
    seen: set[bytes] = set()
    out = []
    position = {t: i for i, t in enumerate(nodes)}
    for start in nodes:
        if start in seen:
            continue
        seen.add(start)
        found, todo = {start}, [start]
        while todo:
            for other in neighbours[todo.pop()]:
                if other not in seen:
                    seen.add(other)
                    found.add(other)
                    todo.append(other)
        out.append(sorted(found, key=position.__getitem__))
    return out


def chunk_feerates(nodes: Mapping[bytes, Node]) -> list[tuple[int, int]]:
    """The (fee, size) of each chunk of an optimal linearization of `nodes` (one or more
    clusters; parents outside `nodes` are ignored), highest feerate first."""
    left = dict(nodes)
    out = []
    while left:
        best = _best_closed_set(left)
        out.append((sum(left[t].fee for t in best), sum(left[t].size for t in best)))
        for t in best:
            del left[t]
    out.sort(key=_FeerateKey, reverse=True)
    return out


class _FeerateKey:
    """Sorts (fee, size) by feerate, exactly (cross-multiplied)."""
    __slots__ = ("fee", "size")

    def __init__(self, chunk: tuple[int, int]) -> None:
        self.fee, self.size = chunk

    def __lt__(self, other: _FeerateKey) -> bool:
        return self.fee * other.size < other.fee * self.size


def _best_closed_set(nodes: Mapping[bytes, Node]) -> set[bytes]:
    """A set of highest feerate among those holding every in-`nodes` parent of each member."""
    best = set(nodes)
    fee, size = sum(n.fee for n in nodes.values()), sum(n.size for n in nodes.values())
    while True:
        # Is there a closed set S with fee(S)/size(S) > fee/size, i.e. sum(n.fee*size - n.size*fee) > 0?
        weights = {t: n.fee * size - n.size * fee for t, n in nodes.items()}
        found = _max_weight_closure(nodes, weights)
        if not found or sum(weights[t] for t in found) <= 0:
            return best
        best = found
        fee, size = sum(nodes[t].fee for t in found), sum(nodes[t].size for t in found)


def _max_weight_closure(nodes: Mapping[bytes, Node], weights: Mapping[bytes, int]) -> set[bytes]:
    """The closed set (parents included) of greatest total weight, by a minimum s-t cut: the
    source feeds each positive node, each negative node drains to the sink, and a member's
    edge to its parent cannot be cut. The closure is what the source still reaches."""
    source, sink = b"s", b"t"
    capacity: dict[bytes, dict[bytes, int]] = {source: {}, sink: {}}
    infinite = sum(abs(w) for w in weights.values()) + 1

    def edge(a: bytes, b: bytes, cap: int) -> None:
        capacity.setdefault(a, {})[b] = capacity.setdefault(a, {}).get(b, 0) + cap
        capacity.setdefault(b, {}).setdefault(a, 0)

    for t, node in nodes.items():
        capacity.setdefault(t, {})
        w = weights[t]
        if w > 0:
            edge(source, t, w)
        elif w < 0:
            edge(t, sink, -w)
        for p in node.parents:
            if p in nodes:
                edge(t, p, infinite)
    while True:  # Edmonds-Karp
        came_from: dict[bytes, bytes] = {source: source}
        queue = deque([source])
        while queue and sink not in came_from:
            a = queue.popleft()
            for b, cap in capacity[a].items():
                if cap > 0 and b not in came_from:
                    came_from[b] = a
                    queue.append(b)
        if sink not in came_from:
            return {t for t in came_from if t in nodes}
        path, b = [], sink
        while b != source:
            path.append((came_from[b], b))
            b = came_from[b]
        flow = min(capacity[a][b] for a, b in path)
        for a, b in path:
            capacity[a][b] -= flow
            capacity[b][a] += flow


def compare_diagrams(new: Sequence[tuple[int, int]], old: Sequence[tuple[int, int]]) -> str:
    """Core's CompareChunks of two chunk lists (each sorted by decreasing feerate): "better" when
    `new`'s diagram is nowhere below `old`'s and above it somewhere, "worse" the other way round,
    "equal", or "crossing". A diagram starts at (0, 0), joins its cumulative points and goes on
    flat after the last one."""
    a, b = _points(new), _points(old)
    above = below = False
    for x in sorted({x for x, _ in a} | {x for x, _ in b}):
        # Compare fee_a(x) and fee_b(x) exactly: each is a fraction over its segment's size.
        (na, da), (nb, db) = _at(a, x), _at(b, x)
        diff = na * db - nb * da
        above |= diff > 0
        below |= diff < 0
    if above and below:
        return "crossing"
    return "better" if above else "worse" if below else "equal"


def _points(chunks: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out = [(0, 0)]
    fee = size = 0
    for f, s in chunks:
        fee, size = fee + f, size + s
        out.append((size, fee))
    return out


def _at(points: list[tuple[int, int]], x: int) -> tuple[int, int]:
    """The diagram's fee at size `x`, as (numerator, denominator)."""
    for (x0, f0), (x1, f1) in zip(points, points[1:], strict=False):
        if x0 <= x <= x1:
            if x1 == x0:
                return f1, 1
            return f0 * (x1 - x0) + (f1 - f0) * (x - x0), x1 - x0
    return points[-1][1], 1


def mining_order(nodes: Mapping[bytes, Node]) -> list[bytes]:
    """Every txid of `nodes` in Core 31's mining order (TxGraph's CompareMainTransactions, which
    getrawmempool lists by): chunk feerate, highest first; then, for equal feerates, the size of
    the equal-feerate chunks of its cluster up to and including its own, smallest first; then the
    greatest txid (internal byte order, the mempool's fallback order) of its chunk, lowest first;
    then its place in its cluster's linearization."""
    keys: dict[bytes, tuple[_FeerateKey, int, bytes, int]] = {}
    for members in components(nodes):
        prefix_rate: tuple[int, int] | None = None
        prefix_size = 0
        index = 0
        for chunk in _chunks(nodes, _linearize({t: nodes[t] for t in members})):
            rate = (sum(nodes[t].fee for t in chunk), sum(nodes[t].size for t in chunk))
            same = prefix_rate is not None and not _FeerateKey(rate) < _FeerateKey(prefix_rate)
            prefix_size = prefix_size + rate[1] if same else rate[1]
            prefix_rate = rate
            highest = max(chunk)
            for t in chunk:
                keys[t] = (_Descending(rate), prefix_size, highest, index)
                index += 1
    return sorted(keys, key=keys.__getitem__)


class _Descending(_FeerateKey):
    """A feerate key that sorts the highest feerate first."""
    __slots__ = ()

    def __lt__(self, other: _FeerateKey) -> bool:
        return self.fee * other.size > other.fee * self.size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FeerateKey) and self.fee * other.size == other.fee * self.size

    __hash__ = None  # type: ignore[assignment]


def _linearize(nodes: Mapping[bytes, Node]) -> list[bytes]:
    """An optimal linearization of one cluster: its highest-feerate closed sets one after the
    other, each in a parents-first order (lowest txid first where the order is free)."""
    if len(nodes) == 1:
        return list(nodes)
    left = dict(nodes)
    out: list[bytes] = []
    while left:
        best = _best_closed_set(left)
        placed: set[bytes] = set()
        while len(placed) < len(best):
            ready = min(t for t in best - placed if all(p not in best or p in placed for p in left[t].parents))
            placed.add(ready)
            out.append(ready)
        for t in best:
            del left[t]
    return out


def _chunks(nodes: Mapping[bytes, Node], linearization: list[bytes]) -> list[list[bytes]]:
    """Core's chunking of a linearization: a chunk absorbs the one before it while its feerate
    is strictly higher than that one's (chunks of equal feerate stay apart)."""
    stack: list[tuple[list[bytes], int, int]] = []
    for t in linearization:
        chunk, fee, size = [t], nodes[t].fee, nodes[t].size
        while stack and _FeerateKey((stack[-1][1], stack[-1][2])) < _FeerateKey((fee, size)):
            before, f, s = stack.pop()
            chunk, fee, size = before + chunk, fee + f, size + s
        stack.append((chunk, fee, size))
    return [chunk for chunk, _, _ in stack]
