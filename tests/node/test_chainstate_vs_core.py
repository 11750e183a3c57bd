"""Chain-state RPCs against the real Bitcoin Core holding the same blocks: Quill's built-in
chain mines them, Core receives each through submitblock, and both see the same forks,
mempool and coins; the answers must be equal."""
from __future__ import annotations

import time
from typing import Any

import pytest

from tests.chain.chain_testkit import OTHER_ADDRESS, spend
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

METHODS = ["getchaintips", "getmininginfo", "getindexinfo", "gettxout", "gettxspendingprevout", "testmempoolaccept",
           "utxoupdatepsbt", "scantxoutset", "getblockfilter", "gettxoutsetinfo",
           "getblockstats"]


def answer(node: Any, method: str, *params: Any) -> Any:
    try:
        return ("ok", node.rpc(method, *params))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)


def copy_blocks(quill: Any, core: Any, hashes: list[str]) -> None:
    for block_hash in hashes:
        assert core.rpc("submitblock", quill.rpc("getblock", block_hash, 0)) is None


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core"), "-blockfilterindex=1") as core:
        quill = QuillDaemon(tmp_path_factory.mktemp("quill")).start()
        try:
            copy_blocks(quill, core, quill.rpc("generatetoaddress", 110, ANYONE_ADDRESS))
            assert core.rpc("getbestblockhash") == quill.rpc("getbestblockhash")
            yield core, quill
        finally:
            quill.stop()


def same(core: Any, quill: Any, method: str, *params: Any) -> None:
    assert answer(quill, method, *params) == answer(core, method, *params), (method, params)


def test_help_is_cores_text(twins: Any) -> None:
    core, quill = twins
    for method in METHODS:
        assert quill.rpc("help", method) == core.rpc("help", method), method


def test_chain_tips_through_a_fork(twins: Any) -> None:
    core, quill = twins
    same(core, quill, "getchaintips")
    old = quill.rpc("getblockhash", 108)
    for node in (core, quill):
        node.rpc("invalidateblock", old)
    fork = quill.rpc("generatetoaddress", 4, OTHER_ADDRESS)  # higher than the old tip: no equal heights
    copy_blocks(quill, core, fork)
    assert core.rpc("getbestblockhash") == quill.rpc("getbestblockhash") == fork[-1]
    tips = answer(quill, "getchaintips")
    assert [t["status"] for t in tips[1]] == ["active", "invalid"]
    same(core, quill, "getchaintips")
    for node in (core, quill):
        node.rpc("reconsiderblock", old)
    same(core, quill, "getchaintips")


def test_mining_info_and_index_info(twins: Any) -> None:
    core, quill = twins
    ours, theirs = answer(quill, "getmininginfo"), answer(core, "getmininginfo")
    assert ours[0] == theirs[0] == "ok"
    # Core's pre-release build warns about itself; Quill is no pre-release of Core.
    theirs[1]["warnings"] = []
    assert ours == theirs
    for params in ([], ["txindex"], ["basic block filter index"], [7]):
        same(core, quill, "getindexinfo", *params)


def test_coins_and_spenders_in_chain_and_mempool(twins: Any) -> None:
    core, quill = twins
    coinbase = quill.rpc("getblock", quill.rpc("getblockhash", 5))["tx"][0]
    value = int(quill.rpc("gettxout", coinbase, 0)["value"] * 100_000_000)
    tx = spend(bytes.fromhex(coinbase)[::-1], 0, value, outputs=2)
    for node in (core, quill):
        assert node.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
    child = spend(tx.txid(), 1, (value - 1000) // 2)
    for node in (core, quill):
        node.rpc("sendrawtransaction", child.hex())
    unknown = "ee" * 32
    for params in ([coinbase, 0], [coinbase, 0, False], [coinbase, 0, True], [tx.txid_hex(), 0],
                   [tx.txid_hex(), 1], [tx.txid_hex(), 0, False], [child.txid_hex(), 0], [unknown, 0],
                   [coinbase, 1], [coinbase, -1], [coinbase, 4294967296], ["xyz", 0], [coinbase, "0"],
                   [quill.rpc("getblock", quill.rpc("getblockhash", 100))["tx"][0], 0]):
        same(core, quill, "gettxout", *params)
    outs = [{"txid": coinbase, "vout": 0}, {"txid": tx.txid_hex(), "vout": 1}, {"txid": unknown, "vout": 3}]
    for params in ([outs], [outs, {"return_spending_tx": True}], [outs[:1], {"mempool_only": True}],
                   [outs, {"mempool_only": False}], [[]], [[{"txid": coinbase}]], [[{"txid": coinbase, "vout": -1}]],
                   [[{"txid": coinbase, "vout": "0"}]], [[{"txid": coinbase, "vout": 0, "x": 1}]],
                   [outs, {"other": True}], [outs, {"mempool_only": 1}], [["x"]]):
        same(core, quill, "gettxspendingprevout", *params)
    ours, theirs = answer(quill, "getmininginfo"), answer(core, "getmininginfo")
    theirs[1]["warnings"] = []
    assert ours == theirs and ours[1]["pooledtx"] == 2


def test_testmempoolaccept(twins: Any) -> None:
    core, quill = twins
    coinbase = quill.rpc("getblock", quill.rpc("getblockhash", 7))["tx"][0]
    value = int(quill.rpc("gettxout", coinbase, 0)["value"] * 100_000_000)
    prev = bytes.fromhex(coinbase)[::-1]
    good = spend(prev, 0, value, fee=2000)
    rich = spend(prev, 0, value, fee=value // 2)                       # a fee above maxfeerate
    dust = spend(prev, 0, value, fee=value - 100)                      # an output below the dust limit
    orphan = spend(b"\x42" * 32, 0, 10_000)
    in_pool = quill.rpc("getrawmempool")[0]
    pooled = quill.rpc("getrawtransaction", in_pool)
    cases = [[[good.hex()]], [[good.hex()], 0], [[good.hex()], "0.00000001"], [[rich.hex()]], [[dust.hex()]],
             [[orphan.hex()]], [[pooled]], [[]], [["zz"]], [[good.hex()], 1], [[good.hex()], "x"],
             [[good.hex()] * 26], [["00"]]]
    for params in cases:
        same(core, quill, "testmempoolaccept", *params)
    assert answer(quill, "testmempoolaccept", [good.hex()])[1][0]["allowed"] is True
    # Quill does not validate packages: it says so rather than answer differently from Core.
    assert answer(quill, "testmempoolaccept", [good.hex(), orphan.hex()]) == \
        ("error", -8, "Quill tests one transaction at a time (no package validation)")


def test_utxoupdatepsbt(twins: Any) -> None:
    core, quill = twins
    mined = quill.rpc("getblock", quill.rpc("getblockhash", 9))["tx"][0]
    pooled = quill.rpc("getrawmempool")[0]
    inputs = [{"txid": mined, "vout": 0}, {"txid": pooled, "vout": 0}, {"txid": "cd" * 32, "vout": 1}]
    for version in (0, 2):
        psbt = core.rpc("createpsbt", inputs, [{ANYONE_ADDRESS: 1}], 0, True, 2, version)
        same(core, quill, "utxoupdatepsbt", psbt)
        same(core, quill, "utxoupdatepsbt", psbt, [])
        updated = core.rpc("decodepsbt", core.rpc("utxoupdatepsbt", psbt))["inputs"]
        assert "non_witness_utxo" in updated[0] and "non_witness_utxo" in updated[1] and updated[2] == \
            ({} if version == 0 else {"previous_txid": "cd" * 32, "previous_vout": 1, "sequence": 4294967293})
    same(core, quill, "utxoupdatepsbt", "junk")


TPUB = ("tpubD6NzVbkrYhZ4XgiXtGrdW5XDAPFCL9h7we1vwNCpn8tGbBcgfVYjXyhWo4E1xkh56hjod1RhGjxbaTLV3X4FyWuejif"
        "B9jusQ46QzG87VKp")


def test_scantxoutset(twins: Any) -> None:
    core, quill = twins
    cases = [["status"], ["abort"], ["start"], ["bogus"], ["start", [f"addr({ANYONE_ADDRESS})"]],
             ["start", [f"addr({OTHER_ADDRESS})", {"desc": f"wpkh({TPUB}/0/*)", "range": 5}]],
             ["start", [{"desc": f"pkh({TPUB}/1/*)", "range": [2, 4]}, f"raw(0014{'00' * 20})"]],
             ["start", [{"desc": f"wpkh({TPUB}/0h/*)", "range": 2}]], ["start", ["junk(00)"]],
             ["start", [{"range": 2}]], ["start", [7]], ["start", []]]
    for params in cases:
        same(core, quill, "scantxoutset", *params)
    found = quill.rpc("scantxoutset", "start", [f"addr({ANYONE_ADDRESS})"])
    assert found["success"] and len(found["unspents"]) > 50


def test_getblockfilter_after_a_block_with_spends(twins: Any) -> None:
    """Last: it mines the mempool's spends into a block both nodes hold."""
    core, quill = twins
    assert quill.rpc("getrawmempool")
    copy_blocks(quill, core, quill.rpc("generatetoaddress", 1, OTHER_ADDRESS))
    assert core.rpc("getrawmempool") == quill.rpc("getrawmempool") == []
    deadline = time.monotonic() + 30
    while not core.rpc("getindexinfo", "basic block filter index")["basic block filter index"]["synced"]:
        assert time.monotonic() < deadline, "Core's filter index did not catch up"
        time.sleep(0.1)
    tip = quill.rpc("getblockcount")
    for height in (0, 1, 50, tip - 1, tip):
        same(core, quill, "getblockfilter", quill.rpc("getblockhash", height))
    same(core, quill, "getblockfilter", quill.rpc("getblockhash", tip), "basic")
    for params in (["00" * 32], ["zz"], [quill.rpc("getblockhash", 1), "extended"]):
        same(core, quill, "getblockfilter", *params)
    same(core, quill, "getindexinfo")


def test_gettxoutsetinfo(twins: Any) -> None:
    core, quill = twins
    for params in ([], ["hash_serialized_3"], ["muhash"], ["none"], ["none", None, False]):
        ours, theirs = answer(quill, "gettxoutsetinfo", *params), answer(core, "gettxoutsetinfo", *params)
        assert ours[0] == theirs[0] == "ok", params
        # disk_size is each node's own storage: Core's coins database, Quill's chain file.
        assert list(ours[1]) == list(theirs[1])
        assert {k: v for k, v in ours[1].items() if k != "disk_size"} == \
            {k: v for k, v in theirs[1].items() if k != "disk_size"}, params
    for params in (["bogus"], ["none", 5], ["muhash", None, "x"]):
        same(core, quill, "gettxoutsetinfo", *params)


def test_getblockstats(twins: Any) -> None:
    core, quill = twins
    tip = quill.rpc("getblockcount")
    assert quill.rpc("getblockstats", tip)["txs"] > 2      # the block with the mempool's spends
    for params in ([0], [1], [tip], [tip - 1], [quill.rpc("getblockhash", tip)],
                   [tip, ["avgfee", "txs", "utxo_size_inc"]], [tip, ["feerate_percentiles", "mediantxsize"]],
                   [tip, []], [tip, ["bogus"]], [tip, [1]],
                   [-1], [tip + 1], ["00" * 32], ["zz"], [1.5], [True]):
        same(core, quill, "getblockstats", *params)


def test_getblock_and_getblockheader(twins: Any) -> None:
    """After the block with the mempool's spends: Core 31's coinbase_tx, nTx, every verbosity."""
    core, quill = twins
    tip = quill.rpc("getblockcount")
    for height in (0, 1, tip):
        block_hash = quill.rpc("getblockhash", height)
        for params in ([], [0], [1], [2], [3]):
            same(core, quill, "getblock", block_hash, *params)
        for params in ([], [False]):
            same(core, quill, "getblockheader", block_hash, *params)
    assert "witness" in core.rpc("getblock", quill.rpc("getblockhash", tip))["coinbase_tx"]
