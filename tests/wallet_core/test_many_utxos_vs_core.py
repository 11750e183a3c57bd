"""listunspent and getbalance of a watch-only wallet holding thousands of UTXOs, against the real Core.

The UTXO set is built on Core as the benchmark builds its (tests.kit.utxo_chain: 2,000-output
transactions given to submitblock): 3,500 coins on 1,000 addresses of one wpkh descriptor, in two
blocks. Core's watch-only wallet and Quill's (quilld following Core) import the same descriptor;
every entry of listunspent must be equal field by field (Core lists coins in hash-map order, so
both lists are put in outpoint order), and so must the balances. The timed comparison at 1k, 10k
and 100k UTXOs is tests/bench/bench_psbt_coins.py.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.kit import utxo_chain
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_core.test_wallet_coins_vs_core import sync, watch_only_pair

SIZE = 3_500


@pytest.fixture(scope="module")
def wallets(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core:
        built = utxo_chain.build_utxo_wallets(core, [SIZE], seed_prefix="many")[SIZE]
        quill = QuillDaemon(tmp_path_factory.mktemp("quill"), f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
        try:
            sync(core, quill)
            pair = watch_only_pair(core, quill, "many", built.import_request())
            yield pair
        finally:
            quill.stop()


def _by_outpoint(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: (e["txid"], e["vout"]))


def test_listunspent_equals_cores_entry_by_entry(wallets: Any) -> None:
    core, quill = wallets
    theirs, ours = _by_outpoint(core.rpc("listunspent")), _by_outpoint(quill.rpc("listunspent"))
    assert len(theirs) == SIZE
    for mine, reference in zip(ours, theirs, strict=True):
        assert list(mine.items()) == list(reference.items())  # same fields, same order, same values
    address = theirs[0]["address"]
    for params in ((1, 9_999_999, [address]), (0, 9_999_999, [], True, {"minimumAmount": "0.00015"}),
                   (1, 9_999_999, None, True, {"maximumAmount": "0.00002", "minimumAmount": 0})):
        assert _by_outpoint(quill.rpc("listunspent", *params)) == _by_outpoint(core.rpc("listunspent", *params))


def test_balances_equal_cores(wallets: Any) -> None:
    core, quill = wallets
    total = sum(utxo_chain.amount_of(k) for k in range(SIZE))
    assert core.rpc("getbalance") == quill.rpc("getbalance")
    assert round(quill.rpc("getbalance") * 10 ** 8) == total
    for params in (("*", 0), ("*", 2), ("*", 3)):   # the coins have 2 and 1 confirmations
        assert quill.rpc("getbalance", *params) == core.rpc("getbalance", *params)
    ours, theirs = quill.rpc("getbalances"), core.rpc("getbalances")
    assert list(ours["mine"].items()) == list(theirs["mine"].items())   # nonmempool included, in Core's order
    assert ours["lastprocessedblock"] == theirs["lastprocessedblock"]
