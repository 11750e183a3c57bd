"""Wallet coin, balance, receipt and label RPCs against the real Bitcoin Core.

Core's "keys" wallet spends and receives; Core's watch-only wallet "wo" and Quill's "wo"
(in a quilld following Core with -chainsource) hold the same public descriptors, labels and
locks. The same calls go to both watch-only wallets and the answers must be equal (lists
whose order Core leaves to a hash map are compared sorted).
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, CoreRPCError, follower, import_requests
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

METHODS = ["getwalletinfo", "listwalletdir", "listlabels", "getaddressesbylabel", "listunspent", "lockunspent",
           "listlockunspent", "keypoolrefill", "getbalance", "getreceivedbyaddress", "getreceivedbylabel",
           "listreceivedbyaddress", "listreceivedbylabel"]


class Wallet:
    """One wallet on one node: rpc(method, *params) on /wallet/<name>."""

    def __init__(self, node: Any, name: str) -> None:
        self.node, self.name = node, name

    def rpc(self, method: str, *params: Any) -> Any:
        if isinstance(self.node, QuillDaemon):
            return self.node.rpc(method, *params, path=f"/wallet/{self.name}")
        return self.node.rpc(method, *params, wallet=self.name)


def watch_only_pair(core: Any, quill: Any, name: str, requests: list[dict[str, Any]]) -> list[Wallet]:
    """The same watch-only descriptor wallet on Core and on Quill: [Core's, Quill's]."""
    pair = []
    for node in (core, quill):
        node.rpc("createwallet", name, True, True)
        w = Wallet(node, name)
        assert all(r["success"] for r in w.rpc("importdescriptors", requests))
        pair.append(w)
    return pair

def answer(wallet: Wallet, method: str, *params: Any) -> Any:
    try:
        return ("ok", wallet.rpc(method, *params))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)


def _sorted(value: Any) -> Any:
    """Lists of objects in a canonical order (Core lists coins and txids in hash-map order)."""
    if isinstance(value, list):
        items = [_sorted(v) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_sorted(v) for v in value)
    return value


def same(core: Wallet, quill: Wallet, method: str, *params: Any, unordered: bool = False) -> Any:
    theirs, ours = answer(core, method, *params), answer(quill, method, *params)
    if unordered:
        theirs, ours = _sorted(theirs), _sorted(ours)
    assert ours == theirs, (method, params)
    return theirs


def sync(core: Any, quill: Any) -> None:
    """Quill has Core's tip and mempool, and Core's wallets have seen them (they learn of blocks and
    mempool transactions after the call that made them)."""
    core.rpc("syncwithvalidationinterfacequeue")
    deadline = time.monotonic() + 30
    while True:
        try:
            if (quill.rpc("getbestblockhash") == core.rpc("getbestblockhash")
                    and sorted(quill.rpc("getrawmempool")) == sorted(core.rpc("getrawmempool"))):
                return
        except RPCFailure:
            pass
        assert time.monotonic() < deadline, "the follower did not catch up with Core"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def wallets(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core, \
            follower(core, tmp_path_factory.mktemp("quill")) as quill:
        yield core, quill, build_scenario(core, quill)


def build_scenario(core: Any, quill: Any) -> dict[str, Any]:
    core.rpc("createwallet", "keys")
    keys = Wallet(core, "keys")
    miner = keys.rpc("getnewaddress", "", "bech32")
    core.rpc("generatetoaddress", 101, miner)
    public = core.rpc("listdescriptors", wallet="keys")["descriptors"]
    requests = import_requests(public)
    single = keys.rpc("getaddressinfo", keys.rpc("getnewaddress", "", "bech32"))
    other = keys.rpc("getaddressinfo", keys.rpc("getnewaddress", "", "legacy"))
    # Non-ranged descriptors: one without a label (Core gives it ""), one with a label.
    requests.append({"desc": single["desc"], "timestamp": 0})
    requests.append({"desc": other["desc"], "timestamp": 0, "label": "legacy one"})
    sync(core, quill)
    wo = {}
    for node in (core, quill):
        node.rpc("createwallet", "wo", True, True)
        wo[node] = Wallet(node, "wo")
        results = wo[node].rpc("importdescriptors", requests)
        assert all(r["success"] for r in results), results
    c, q = wo[core], wo[quill]
    addresses = {kind: keys.rpc("getnewaddress", "", kind) for kind in ("legacy", "p2sh-segwit", "bech32", "bech32m")}
    for w in (c, q):
        w.rpc("setlabel", addresses["bech32"], "savings")
        w.rpc("setlabel", addresses["bech32m"], "savings")
    for address in addresses.values():
        keys.rpc("sendtoaddress", address, "1.25")
    keys.rpc("sendtoaddress", single["address"], "0.5")
    keys.rpc("sendtoaddress", other["address"], "0.75")
    core.rpc("generatetoaddress", 2, miner)
    # A payment between the two imported non-ranged addresses: no longer "change" with the default label.
    coin = keys.rpc("listunspent", 1, 9999, [other["address"]])[0]
    keys.rpc("send", [{single["address"]: "0.3"}], None, "unset", 10,
             {"inputs": [{"txid": coin["txid"], "vout": coin["vout"]}], "add_inputs": False,
              "change_address": other["address"]})
    core.rpc("generatetoaddress", 1, addresses["bech32"])            # an immature coinbase to a watched address
    keys.rpc("sendtoaddress", addresses["bech32"], "0.1")            # confirmed once
    core.rpc("generatetoaddress", 1, miner)
    keys.rpc("sendtoaddress", addresses["legacy"], "0.2")             # unconfirmed, from the keys wallet
    sync(core, quill)
    return {"addresses": addresses, "single": single["address"], "other": other["address"], "c": c, "q": q}


def test_help_is_cores_text(wallets: Any) -> None:
    core, quill, _ = wallets
    for method in METHODS:
        assert quill.rpc("help", method) == core.rpc("help", method), method


def test_balances_and_receipts(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    for params in ([], ["*"], ["*", 0], ["*", 1], ["*", 3], ["*", 200], ["x"], ["*", 0, True], ["*", 0, False, True],
                   ["*", "1"]):
        same(c, q, "getbalance", *params)
    for address in [*s["addresses"].values(), s["single"], s["other"]]:
        for params in ([address], [address, 0], [address, 2], [address, 1, True]):
            same(c, q, "getreceivedbyaddress", *params)
    for params in (["bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"], ["nonsense"]):
        same(c, q, "getreceivedbyaddress", *params)
    for params in (["savings"], ["savings", 0], ["savings", 1, True], [""], ["", 0], ["legacy one"], ["nobody"]):
        same(c, q, "getreceivedbylabel", *params)
    for params in ([], [0], [0, True], [1, False, True], [0, False, False, s["addresses"]["bech32"]],
                   [0, True, False, s["single"]], [0, False, False, "junk"], [0, False, False, "", True],
                   [1, True, False, None, True]):
        same(c, q, "listreceivedbyaddress", *params, unordered=True)
    for params in ([], [0], [0, True], [1, True, False, True], ["x"]):
        same(c, q, "listreceivedbylabel", *params)


def test_listtransactions_label_filter(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    for params in (["*", 100], ["savings", 100], ["legacy one", 100], ["nobody"], [""], ["", -1], [None, 100],
                   ["savings", -1], ["savings", 1, -1]):
        theirs, ours = answer(c, "listtransactions", *params), answer(q, "listtransactions", *params)
        if theirs[0] == "ok":   # one poll may bring Quill several transactions Core saw one by one
            theirs, ours = ("ok", _sorted(_untimed(theirs[1]))), ("ok", _sorted(_untimed(ours[1])))
        assert ours == theirs, params


def _untimed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("time", "timereceived")} for e in entries]


def test_labels(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    for params in ([], ["receive"], ["send"], [""], ["bogus"]):
        same(c, q, "listlabels", *params)
    for params in (["savings"], [""], ["legacy one"], ["nobody"]):
        same(c, q, "getaddressesbylabel", *params)


def test_default_label_makes_imported_receives_visible(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    txid = [t for t in c.rpc("listtransactions", "*", 100) if t["address"] == s["single"]
            and t["amount"] == Decimal("0.3")][0]["txid"]
    theirs, ours = c.rpc("gettransaction", txid), q.rpc("gettransaction", txid)
    assert ours["details"] == theirs["details"] and len(ours["details"]) >= 1
    assert q.rpc("getaddressinfo", s["single"])["labels"] == [""]


def test_listunspent_and_filters(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    a = s["addresses"]
    cases = [[], [0], [0, 0], [1, 1], [2], [0, 9999999, [a["bech32"], a["legacy"]]], [0, 10, [], False],
             [0, 10, [a["bech32"], a["bech32"]]], [0, 10, ["junk"]], [0, 10, None, True, {"minimumAmount": "0.3"}],
             [0, 10, None, True, {"maximumAmount": 1}], [0, 10, None, True, {"include_immature_coinbase": True}],
             [0, 10, None, True, {"minimumSumAmount": 100}], [0, 10, None, True, {"maximumCount": 100}],
             [0, 10, None, True, {"bogus": 1}], [0, 10, None, True, {"maximumCount": "1"}], ["x"]]
    for params in cases:
        same(c, q, "listunspent", *params, unordered=True)


def test_locks(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    coins = sorted(c.rpc("listunspent"), key=lambda u: (u["txid"], u["vout"]))
    first, second = ({"txid": u["txid"], "vout": u["vout"]} for u in coins[:2])
    spent_or_unknown = [{"txid": "ab" * 32, "vout": 0}, {"txid": first["txid"], "vout": 99},
                        {"txid": first["txid"], "vout": -1}, {"txid": first["txid"]}, {"vout": 1}]
    steps = [[False, [first]], [False, [first]], [False, [first], True], [False, [second], True], [True, [first]],
             [True, [first]], [False]] + [[False, [bad]] for bad in spent_or_unknown] + [[True], ["no"], [False, "x"]]
    for params in steps:
        same(c, q, "lockunspent", *params)
        same(c, q, "listlockunspent")
        same(c, q, "listunspent", unordered=True)
        same(c, q, "getbalance")
    same(c, q, "lockunspent", True)
    assert c.rpc("listlockunspent") == q.rpc("listlockunspent") == []


def test_keypoolrefill_tops_up_as_core(wallets: Any) -> None:
    _, _, s = wallets
    c, q = s["c"], s["q"]
    for w in (c, q):
        w.rpc("getrawchangeaddress", "legacy")
        w.rpc("getnewaddress", "", "bech32m")

    def pools(w: Wallet) -> Any:
        info = w.rpc("getwalletinfo")
        listed = w.rpc("listdescriptors")["descriptors"]
        ranges = sorted((d["desc"], d.get("range"), d.get("next_index")) for d in listed)
        return info["keypoolsize"], info["keypoolsize_hd_internal"], ranges

    assert pools(q) == pools(c)
    for params in ([], [0], [3], [1200], [-1], ["x"], [2 ** 31], [1000]):
        same(c, q, "keypoolrefill", *params)
        assert pools(q) == pools(c), params


def test_wallet_info_and_directory(wallets: Any) -> None:
    core, quill, s = wallets
    c, q = s["c"], s["q"]
    theirs, ours = c.rpc("getwalletinfo"), q.rpc("getwalletinfo")
    assert list(ours) == list(theirs)
    for key in ("walletname", "walletversion", "format", "txcount", "keypoolsize", "keypoolsize_hd_internal",
                "private_keys_enabled", "avoid_reuse", "scanning", "descriptors", "external_signer", "blank",
                "birthtime", "flags", "lastprocessedblock"):
        assert ours[key] == theirs[key], key
    assert quill.rpc("listwalletdir") == {"wallets": [{"name": "wo", "warnings": []}]}
    assert {"name": "wo", "warnings": []} in core.rpc("listwalletdir")["wallets"]


def test_wallet_lifecycle_answers(wallets: Any) -> None:
    """Last: it makes wallets (listwalletdir above lists only "wo")."""
    core, quill, s = wallets
    c, q = s["c"], s["q"]
    same(c, q, "listdescriptors", True)
    same(c, q, "unloadwallet", "another")
    for params in (["plain", True, False, ""], ["other", True], ["startup", True, True, "", False, True, True]):
        theirs, ours = node_answer(core, "createwallet", *params), node_answer(quill, "createwallet", *params)
        assert ours == theirs, params


def node_answer(node: Any, method: str, *params: Any) -> Any:
    try:
        return ("ok", node.rpc(method, *params))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)
