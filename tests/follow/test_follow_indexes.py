"""quilld following a real Bitcoin Core that keeps txindex, txospenderindex and the basic block
filter index: what a follower answers through the node is the node's answer (testmempoolaccept,
gettxspendingprevout) and getindexinfo reports the node's indexes, as e-x and other Electrum
servers check at start-up (issue 27)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.follow.corekit import wait_for
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

INDEXES = ("-txindex=1", "-txospenderindex=1", "-blockfilterindex=1")


class Pair:
    def __init__(self, core: BitcoinD, quill: QuillDaemon) -> None:
        self.core, self.quill = core, quill

    def wallet(self, method: str, *params: Any) -> Any:
        return self.core.rpc(method, *params, wallet="m")

    def both(self, method: str, *params: Any) -> Any:
        answers = []
        for node in (self.quill, self.core):
            try:
                answers.append(("ok", node.rpc(method, *params)))
            except (CoreRPCError, RPCFailure) as e:
                answers.append(("error", e.code, e.message))
        assert answers[0] == answers[1], (method, params, answers)
        return answers[0]

    def synced(self) -> None:
        best = self.core.rpc("getbestblockhash")
        wait_for(lambda: self.quill.rpc("getbestblockhash") == best, what="the follower")

    def signed(self, amount: float) -> str:
        """A transaction of the core's wallet paying itself, signed and not sent."""
        raw = self.wallet("createrawtransaction", [], {self.wallet("getnewaddress"): amount})
        return str(self.wallet("signrawtransactionwithwallet", self.wallet("fundrawtransaction", raw)["hex"])["hex"])


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with BitcoinD(tmp_path_factory.mktemp("core"), *INDEXES) as core:
        core.rpc("createwallet", "m")
        core.rpc("generatetoaddress", 110, core.rpc("getnewaddress", wallet="m"))
        for name in ("txindex", "txospenderindex", "basic block filter index"):
            wait_for(lambda n=name: core.rpc("getindexinfo")[n]["synced"], what=f"Core's {name}")
        quill = QuillDaemon(tmp_path_factory.mktemp("quill"), f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
        try:
            p = Pair(core, quill)
            p.synced()
            yield p
        finally:
            quill.stop()


def test_testmempoolaccept_is_the_nodes_answer(pair: Pair) -> None:
    tx = pair.signed(1)
    assert pair.both("testmempoolaccept", [tx])[1][0]["allowed"] is True
    assert pair.both("testmempoolaccept", [tx], 0.00000001)[1][0]["reject-reason"] == "max-fee-exceeded"
    # a package (the follower's node validates it; the built-in chain does not)
    parent = pair.signed(2)
    pair.both("testmempoolaccept", [parent, tx])
    assert pair.both("testmempoolaccept", ["00"])[0] == "error"
    assert "unexpected" not in pair.quill.debug_log()


def test_getindexinfo_reports_the_nodes_indexes(pair: Pair) -> None:
    pair.synced()
    ours = pair.both("getindexinfo")[1]
    assert list(ours) == ["txindex", "txospenderindex", "basic block filter index"]
    for name in ("txindex", "txospenderindex", "basic block filter index", "nosuchindex"):
        pair.both("getindexinfo", name)
    # the node's coinstatsindex is not one whose calls Quill passes through: it is not listed
    assert "coinstatsindex" not in ours


def test_spends_raw_transactions_and_filters_are_the_nodes(pair: Pair) -> None:
    """gettxspendingprevout (confirmed spends need the node's txospenderindex), getrawtransaction
    without a block (its txindex) and getblockfilter (its filter index)."""
    sent = pair.wallet("sendtoaddress", pair.wallet("getnewaddress"), 1)
    pair.core.rpc("generatetoaddress", 1, pair.wallet("getnewaddress"))
    pending = pair.wallet("sendtoaddress", pair.wallet("getnewaddress"), 2)
    pair.synced()
    wait_for(lambda: pending in pair.quill.rpc("getrawmempool"), what="the follower's mempool")
    confirmed = pair.core.rpc("getrawtransaction", sent, True)
    unconfirmed = pair.core.rpc("getrawtransaction", pending, True)
    asked = [{"txid": i["txid"], "vout": i["vout"]} for i in confirmed["vin"] + unconfirmed["vin"]] + \
        [{"txid": pending, "vout": n} for n in range(len(unconfirmed["vout"]))]
    for options in ({}, {"mempool_only": True}, {"mempool_only": False}, {"return_spending_tx": True}):
        answer = pair.both("gettxspendingprevout", asked, options)[1]
        if options.get("mempool_only") is not True:
            assert any("blockhash" in a for a in answer)      # a confirmed spend, from the node's index
    pair.both("gettxspendingprevout", asked)
    pair.both("gettxspendingprevout", [{"txid": a["txid"].upper(), "vout": a["vout"]} for a in asked])
    pair.both("gettxspendingprevout", [{"txid": sent, "vout": -1}])
    pair.both("getrawtransaction", sent, 1)
    pair.both("getrawtransaction", pending)
    pair.both("getblockfilter", confirmed["blockhash"])


def test_the_followers_mempool_is_listed_in_cores_order(pair: Pair) -> None:
    for amount in (0.1, 0.2, 0.3, 0.4, 0.5):
        pair.wallet("send", {pair.wallet("getnewaddress"): amount}, None, "unset", 2 + amount * 10)
    theirs = pair.core.rpc("getrawmempool")
    wait_for(lambda: set(pair.quill.rpc("getrawmempool")) == set(theirs), what="the follower's mempool")
    assert len(theirs) >= 5
    pair.both("getrawmempool")
    assert list(pair.quill.rpc("getrawmempool", True)) == list(pair.core.rpc("getrawmempool", True))
