"""The spender index (-txospenderindex) of quilld's built-in chain against the real Bitcoin Core 31
with -txospenderindex: the same blocks (mined by quilld, submitted to Core) and the same mempool,
then gettxspendingprevout (every option, confirmed, unconfirmed, unspent and unknown outputs) and
getindexinfo must answer alike, field by field, before and after a reorg that sends a block's spends
back to the mempool and confirms others instead."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from quill.tx.transaction import Transaction
from tests.chain.test_replacement_vs_core import Coin, Twins, build, outs
from tests.follow.corekit import wait_for
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

OPTIONS: list[Any] = [None, {}, {"mempool_only": True}, {"mempool_only": False},
                      {"return_spending_tx": True}, {"mempool_only": False, "return_spending_tx": True},
                      {"mempool_only": True, "return_spending_tx": True}]


class IndexedTwins(Twins):
    def mine(self) -> None:
        super().mine()
        self.indexes_alike()

    def indexes_alike(self) -> None:
        self.core.rpc("syncwithvalidationinterfacequeue")
        theirs = lambda: self.core.rpc("getindexinfo")  # noqa: E731
        wait_for(lambda: all(i["synced"] for i in theirs().values()), what="Core's indexes")
        wait_for(lambda: self.quill.rpc("getindexinfo")["txospenderindex"]["synced"], what="quilld's index")
        assert self.quill.rpc("getindexinfo") == theirs()
        for name in ("txospenderindex", "txindex", "basic block filter index", "coinstatsindex"):
            self.both("getindexinfo", name)

    def spends_alike(self, outpoints: list[dict[str, Any]]) -> list[Any]:
        """gettxspendingprevout with each option, all outpoints at once and one by one."""
        answers = []
        for options in OPTIONS:
            params = [outpoints] if options is None else [outpoints, options]
            answers.append(self.both("gettxspendingprevout", *params))
            for one in outpoints:
                self.both("gettxspendingprevout", [one], *([] if options is None else [options]))
        return answers


def outpoint(coin: Coin) -> dict[str, Any]:
    return {"txid": coin[0][::-1].hex(), "vout": coin[1]}


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexedTwins]:
    with BitcoinD(tmp_path_factory.mktemp("core"), "-fallbackfee=0", "-txospenderindex=1",
                  "-blockfilterindex=1") as core:
        quill = QuillDaemon(tmp_path_factory.mktemp("quill"), "-txospenderindex").start()
        try:
            pair = IndexedTwins(core, quill)
            for block_hash in quill.rpc("generatetoaddress", 130, ANYONE_ADDRESS):
                assert core.rpc("submitblock", quill.rpc("getblock", block_hash, 0)) is None
            pair.indexes_alike()
            yield pair
        finally:
            quill.stop()


def send(t: Twins, txs: list[Transaction]) -> None:
    for tx in txs:
        assert t.submit(tx)[0] == "ok", tx.txid_hex()


def test_confirmed_unconfirmed_unspent_and_unknown_spends_answer_as_core(twins: IndexedTwins) -> None:
    t = twins
    coins = [t.coin() for _ in range(4)]
    first = [build([c], 2000, outputs=2) for c in coins[:3]]
    send(t, first)
    t.mine()
    # a spend of a confirmed output confirmed too, one in the mempool, one output left unspent
    second = build([outs(first[0])[0], outs(first[1])[0]], 3000)
    send(t, [second])
    t.mine()
    pending = build([outs(first[2])[1]], 1500)
    send(t, [pending])
    asked = [outpoint(c) for c in coins] + [outpoint(o) for tx in first for o in outs(tx)] + \
        [outpoint(o) for o in outs(second) + outs(pending)] + [{"txid": "ab" * 32, "vout": 3}]
    answers = t.spends_alike(asked)
    confirmed = answers[OPTIONS.index({"mempool_only": False})][1]
    assert sum("blockhash" in a for a in confirmed) == 5      # coins 0-2, first[0]:0, first[1]:0
    assert sum("spendingtxid" in a and "blockhash" not in a for a in confirmed) == 1   # pending
    t.mine()


def test_a_reorg_moves_spends_back_to_the_mempool_and_out_of_the_index(twins: IndexedTwins) -> None:
    t = twins
    coins = [t.coin() for _ in range(3)]
    txs = [build([c], 1000 + 100 * i, outputs=2) for i, c in enumerate(coins)]
    send(t, txs)
    t.mine()
    child = build([outs(txs[0])[0]], 5000)
    send(t, [child])
    t.mine()
    asked = [outpoint(c) for c in coins] + [outpoint(o) for tx in txs + [child] for o in outs(tx)]
    t.spends_alike(asked)
    # disconnect the last two blocks on both: every spend is back in the mempool
    tip_height = t.quill.rpc("getblockcount")
    t.both("invalidateblock", t.quill.rpc("getblockhash", tip_height - 1))
    before = t.spends_alike(asked)[OPTIONS.index({"mempool_only": False})][1]
    assert not any("blockhash" in a for a in before) and sum("spendingtxid" in a for a in before) == 4
    # Quill's index follows the disconnect at once; Core's keeps its height until the next
    # block connects (BaseIndex rewinds in BlockConnected), the one difference documented
    assert t.quill.rpc("getindexinfo", "txospenderindex") == {
        "txospenderindex": {"synced": True, "best_block_height": tip_height - 2}}
    # a new branch: one block confirming the spends again, then another
    t.mine()
    t.spends_alike(asked)
    t.mine()
    after = t.spends_alike(asked)[OPTIONS.index({"mempool_only": False})][1]
    assert sum("blockhash" in a for a in after) == 4
