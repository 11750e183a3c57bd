"""Node-level RPCs against the real Bitcoin Core: a quilld on its built-in chain answers as a
Core node without peers or fee data yet (estimates over a fee history: tests/chain/
test_fee_estimator_vs_core.py), and a quilld following Core (-chainsource) passes Core's own
answers on for what only Core knows (connections, fee estimates)."""
from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from quill.daemon.main import build_registry
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

METHODS = ["getdifficulty", "getconnectioncount", "estimatesmartfee", "getmempoolinfo", "getnetworkinfo"]
ESTIMATE_CASES = [[6], [1], [1008], [2, "ECONOMICAL"], [3, "conservative"], [0], [1009], [6, "foo"], [-1],
                  ["x"], [6, 7], []]
RAW_ESTIMATE_CASES = [[6], [1], [12], [13], [48], [49], [1008], [6, 0.5], [6, 0], [6, 1], [6, 1.5], [6, -0.1],
                      [6, "x"], [6, 1e999], [0], [1009], [2.5], ["x"], [6, 0.5, 1], []]


def answer(node: Any, method: str, *params: Any) -> Any:
    try:
        return ("ok", node.rpc(method, *params))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core"), "-coinstatsindex=1") as core:
        builtin = QuillDaemon(tmp_path_factory.mktemp("builtin")).start()
        follower = QuillDaemon(tmp_path_factory.mktemp("follower"), f"-chainsource={core.url_for_follower}",
                               "-chainpollinterval=100").start()
        try:
            deadline = time.monotonic() + 30
            while answer(follower, "getbestblockhash") != ("ok", core.rpc("getbestblockhash")):
                assert time.monotonic() < deadline, "the follower did not reach Core's tip"
                time.sleep(0.1)
            yield core, builtin, follower
        finally:
            follower.stop()
            builtin.stop()


def test_help_is_cores_text_for_every_method_core_has(nodes: Any) -> None:
    core, builtin, _ = nodes
    quill_only = []
    for method in sorted(build_registry().methods):
        cores = core.rpc("help", method)
        if cores.startswith("help: unknown command"):
            quill_only.append(method)
            continue
        assert builtin.rpc("help", method) == cores, method
    assert set(METHODS).isdisjoint(quill_only)
    # Quill's own methods keep their own help, and the documents (README.md, docs/) tell users about each.
    root = Path(__file__).resolve().parents[2]
    documents = "".join(p.read_text() for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    assert quill_only and all(f"`{m}" in documents for m in quill_only), quill_only


def _overview_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for block in text.split("\n\n"):
        title, *lines = block.split("\n")
        sections[title] = lines
    return sections


def test_the_help_overview_is_cores_for_the_methods_quill_has(nodes: Any) -> None:
    core, builtin, _ = nodes
    ours, cores = _overview_sections(builtin.rpc("help")), _overview_sections(core.rpc("help"))
    assert ours.pop("== Device ==") == ["getdeviceinfo", 'setconfirmationpolicy "policy" ( amount )',
                                        'signercommand ["arg",...]']
    assert list(ours) == [title for title in cores if title in ours]
    for title, lines in ours.items():
        assert lines == [line for line in cores[title] if line in lines], title


def test_an_arity_error_answers_cores_help(nodes: Any) -> None:
    core, builtin, _ = nodes
    for method, params in (("getblockcount", [1]), ("decodescript", []), ("getblockhash", [1, 2])):
        assert answer(builtin, method, *params) == answer(core, method, *params), method


def test_builtin_chain_answers_as_core_without_peers_or_fee_data(nodes: Any) -> None:
    core, builtin, _ = nodes
    # Both sit at the regtest genesis block with empty mempools.
    assert core.rpc("getblockcount") == builtin.rpc("getblockcount") == 0
    for method in ("getdifficulty", "getconnectioncount", "getmempoolinfo"):
        assert answer(builtin, method) == answer(core, method), method
    for params in ESTIMATE_CASES:
        assert answer(builtin, "estimatesmartfee", *params) == answer(core, "estimatesmartfee", *params), params
    for params in RAW_ESTIMATE_CASES:
        assert answer(builtin, "estimaterawfee", *params) == answer(core, "estimaterawfee", *params), params
    assert answer(builtin, "getdifficulty", 1) == answer(core, "getdifficulty", 1)


def test_follower_passes_on_cores_connections_and_fee_estimates(nodes: Any) -> None:
    core, _, follower = nodes
    for method in ("getdifficulty", "getconnectioncount"):
        assert answer(follower, method) == answer(core, method), method
    for params in ESTIMATE_CASES:
        assert answer(follower, "estimatesmartfee", *params) == answer(core, "estimatesmartfee", *params), params
    for params in RAW_ESTIMATE_CASES:
        assert answer(follower, "estimaterawfee", *params) == answer(core, "estimaterawfee", *params), params
    # What the follower keeps no copy of comes from Core, amounts exactly as Core writes them.
    core.rpc("generatetoaddress", 3, "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080")
    deadline = time.monotonic() + 30
    while answer(follower, "getbestblockhash") != ("ok", core.rpc("getbestblockhash")):
        assert time.monotonic() < deadline, "the follower did not reach Core's tip"
        time.sleep(0.1)
    coinbase = core.rpc("getblock", core.rpc("getblockhash", 2))["tx"][0]
    for params in ([coinbase, 0], [coinbase, 0, False], [coinbase, 7], ["00" * 32, 0], ["xyz", 0]):
        assert answer(follower, "gettxout", *params) == answer(core, "gettxout", *params), params
    assert answer(follower, "getmininginfo") == answer(core, "getmininginfo")
    psbt = core.rpc("createpsbt", [{"txid": coinbase, "vout": 0}], [{"data": "00"}])
    for params in ([psbt], [psbt, []], ["junk"]):
        assert answer(follower, "utxoupdatepsbt", *params) == answer(core, "utxoupdatepsbt", *params)
    while not core.rpc("getindexinfo", "coinstatsindex")["coinstatsindex"]["synced"]:
        assert time.monotonic() < deadline, "Core's coinstatsindex did not catch up"
        time.sleep(0.1)
    block_2 = core.rpc("getblockhash", 2)
    for verbosity in (1, 2):   # a block the follower holds no transactions of: nTx from the block itself
        assert answer(follower, "getblock", block_2, verbosity) == answer(core, "getblock", block_2, verbosity)
    for params in (["muhash", 2], ["none", block_2, True], ["muhash", 1, False], ["hash_serialized_3", 2],
                   ["muhash", 99], ["muhash"]):
        assert answer(follower, "gettxoutsetinfo", *params) == answer(core, "gettxoutsetinfo", *params), params
    scan = ["start", ["addr(bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080)"]]
    assert answer(follower, "scantxoutset", *scan) == answer(core, "scantxoutset", *scan)
    assert len(core.rpc("scantxoutset", *scan)["unspents"]) == 3
    with urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{follower.port}/", method="POST",
            data=json.dumps({"method": "gettxout", "params": [coinbase, 0], "id": 1}).encode(),
            headers={"Authorization": follower.auth_header()}), timeout=30) as reply:
        assert b'"value":50.00000000' in reply.read()


def test_client_libraries_get_cores_answers(nodes: Any, tmp_path: Any) -> None:
    """python-bitcoinlib's RawProxy and python-bitcoinrpc's AuthServiceProxy against a real quilld
    and the real Core: the same calls, the same answers."""
    import bitcoin.rpc
    from bitcoinrpc.authproxy import AuthServiceProxy, JSONRPCException

    core, builtin, _ = nodes
    core_url = core.url_for_follower
    quill_url = f"http://{builtin.user}:{builtin.password}@127.0.0.1:{builtin.port}"
    address = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
    created = core.rpc("createpsbt", [{"txid": "ab" * 32, "vout": 1}], [{address: "0.5"}], 0, True, 2, 0)
    calls: list[tuple[str, list[Any]]] = [
        ("getdifficulty", []), ("getconnectioncount", []), ("estimatesmartfee", [6]), ("getmempoolinfo", []),
        ("createpsbt", [[{"txid": "ab" * 32, "vout": 1}], [{address: "0.5"}]]),
        ("createrawtransaction", [[{"txid": "ab" * 32, "vout": 1}], {address: 1, "data": "00"}]),
        ("decodepsbt", [created]), ("combinepsbt", [[created, created]]), ("decodepsbt", ["junk"]),
    ]

    def via_bitcoinlib(url: str, method: str, params: list[Any]) -> Any:
        try:
            return bitcoin.rpc.RawProxy(service_url=url)._call(method, *params)
        except bitcoin.rpc.JSONRPCError as e:
            return ("error", e.error["code"], e.error["message"])

    def via_bitcoinrpc(url: str, method: str, params: list[Any]) -> Any:
        try:
            return getattr(AuthServiceProxy(url, timeout=60), method)(*params)
        except JSONRPCException as e:
            return ("error", e.error["code"], e.error["message"])

    if builtin.user is None:  # the daemon authenticates with its cookie
        user, password = (builtin.datadir / "regtest" / ".cookie").read_text().split(":", 1)
        quill_url = f"http://{user}:{password}@127.0.0.1:{builtin.port}"
    for method, params in calls:
        expected = via_bitcoinlib(core_url, method, params)
        assert via_bitcoinlib(quill_url, method, params) == expected, method
        assert via_bitcoinrpc(quill_url, method, params) == via_bitcoinrpc(core_url, method, params), method


def test_getnetworkinfo_has_cores_shape_and_quills_identity(nodes: Any) -> None:
    core, builtin, follower = nodes
    theirs = core.rpc("getnetworkinfo")
    for ours in (builtin.rpc("getnetworkinfo"), follower.rpc("getnetworkinfo")):
        assert list(ours) == list(theirs)
        assert [list(n) for n in ours["networks"]] == [list(n) for n in theirs["networks"]]
        assert [n["name"] for n in ours["networks"]] == [n["name"] for n in theirs["networks"]]
        assert ours["subversion"] == "/Quill:0.1.0/" and ours["version"] == theirs["version"]
        for key in ("protocolversion", "relayfee", "incrementalfee", "timeoffset", "networkactive"):
            assert ours[key] == theirs[key], key
        assert ours["warnings"] == []
    assert builtin.rpc("getnetworkinfo")["connections"] == 0
    for key in ("connections", "connections_in", "connections_out"):
        assert follower.rpc("getnetworkinfo")[key] == theirs[key]
