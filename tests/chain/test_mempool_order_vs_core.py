"""getrawmempool's order against the real Bitcoin Core 31: the same transactions go to Core and to
quilld's built-in chain holding the same blocks (test_replacement_vs_core.Twins), and both must list
them alike, verbose or not. Core 31 lists its mempool in mining order (TxGraph's chunk order):
chunk feerate first, then equal-feerate chunk prefix size, then txid; the corpus has equal
feerates (the txid tie-break), a child paying for its parent, chains of falling feerate, a parent
and child of equal feerate, and a parent with children of different feerates."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from quill.tx.transaction import Transaction
from tests.chain.test_replacement_vs_core import Twins, build, outs
from tests.chain.test_replacement_vs_core import twins as twins  # noqa: F401  (the fixture)


def send_all(t: Twins, txs: list[Transaction]) -> None:
    for tx in txs:
        assert t.submit(tx)[0] == "ok", tx.txid_hex()


def same_order(t: Twins) -> list[str]:
    ours, theirs = t.quill.rpc("getrawmempool"), t.core.rpc("getrawmempool")
    assert ours == theirs
    assert list(t.quill.rpc("getrawmempool", True)) == list(t.core.rpc("getrawmempool", True))
    return ours


@pytest.fixture
def empty_pool(twins: Twins) -> Iterator[Twins]:  # noqa: F811
    yield twins
    twins.mine()
    assert twins.core.rpc("getrawmempool") == []


def test_equal_feerates_go_by_txid_and_fees_by_rate(empty_pool: Twins) -> None:
    t = empty_pool
    txs = [build([t.coin()], 3000) for _ in range(6)] + [build([t.coin()], fee) for fee in (500, 9000, 1200, 3001)]
    send_all(t, txs)
    order = same_order(t)
    assert len(order) == 10
    # the six of equal feerate are not in arrival order here (txid order), or the test proves nothing
    equal = [tx.txid_hex() for tx in txs[:6]]
    assert [x for x in order if x in equal] != equal


def test_packages_chains_and_equal_feerate_parents(empty_pool: Twins) -> None:
    t = empty_pool
    txs = []
    # a child paying for its parent
    parent = build([t.coin()], 200)
    txs += [parent, build(outs(parent), 20000)]
    # a chain of falling feerate
    a = build([t.coin()], 8000)
    b = build(outs(a), 4000)
    txs += [a, b, build(outs(b), 1000)]
    # parent and child of the same fee and size as each other
    p = build([t.coin()], 2500)
    txs += [p, build(outs(p), 2500)]
    # one parent, two children of different feerates
    fan = build([t.coin()], 1500, outputs=2)
    fan_outs = outs(fan)
    txs += [fan, build([fan_outs[0]], 600), build([fan_outs[1]], 7000)]
    # singletons of the same feerates as chunks above
    txs += [build([t.coin()], 2500), build([t.coin()], 4000)]
    send_all(t, txs)
    assert len(same_order(t)) == len(txs)
