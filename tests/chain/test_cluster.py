"""quill.chain.cluster: chunks of an optimal linearization and Core's diagram comparison, checked
against brute force (every topological order of small random clusters, chunked as Core chunks)."""
from __future__ import annotations

import itertools
import random

import pytest

from quill.chain import cluster


def _random_cluster(rng: random.Random, n: int) -> dict[bytes, cluster.Node]:
    ids = [bytes([i]) for i in range(n)]
    nodes = {}
    for i, t in enumerate(ids):
        parents = frozenset(p for p in ids[:i] if rng.random() < 0.4)
        nodes[t] = cluster.Node(rng.randrange(0, 5_000), rng.randrange(400, 4_000), parents)
    return nodes


def _chunked(order: list[bytes], nodes: dict[bytes, cluster.Node]) -> list[tuple[int, int]]:
    """Core's ChunkLinearization: a transaction joins the chunks before it while it raises their feerate."""
    chunks: list[tuple[int, int]] = []
    for t in order:
        fee, size = nodes[t].fee, nodes[t].size
        while chunks and fee * chunks[-1][1] > chunks[-1][0] * size:
            f, s = chunks.pop()
            fee, size = fee + f, size + s
        chunks.append((fee, size))
    return chunks


def _topological_orders(nodes: dict[bytes, cluster.Node]) -> list[list[bytes]]:
    return [list(order) for order in itertools.permutations(nodes)
            if all(set(nodes[t].parents) <= set(order[:i]) for i, t in enumerate(order))]


@pytest.mark.parametrize("seed", range(40))
def test_chunks_are_those_of_an_optimal_linearization(seed: int) -> None:
    rng = random.Random(seed)
    nodes = _random_cluster(rng, rng.randrange(1, 7))
    ours = cluster.chunk_feerates(nodes)
    assert sum(f for f, _ in ours) == sum(n.fee for n in nodes.values())
    assert all(a[0] * b[1] >= b[0] * a[1] for a, b in zip(ours, ours[1:], strict=False))   # decreasing feerates
    outcomes = {cluster.compare_diagrams(ours, _chunked(order, nodes)) for order in _topological_orders(nodes)}
    assert outcomes <= {"better", "equal"} and "equal" in outcomes


def test_diagram_comparison() -> None:
    assert cluster.compare_diagrams([(200, 100)], [(100, 100)]) == "better"
    assert cluster.compare_diagrams([(100, 100)], [(200, 100)]) == "worse"
    assert cluster.compare_diagrams([(100, 100), (100, 100)], [(200, 200)]) == "equal"
    # more fee at a lower feerate: worse at first, better later
    assert cluster.compare_diagrams([(400, 1000)], [(300, 100)]) == "crossing"
    # a longer diagram at the same height is no better: it goes on flat
    assert cluster.compare_diagrams([(100, 100), (0, 50)], [(100, 100)]) == "equal"
    assert cluster.compare_diagrams([], []) == "equal"
