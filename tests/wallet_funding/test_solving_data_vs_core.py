"""External inputs and `solving_data` in walletcreatefundedpsbt, fundrawtransaction and send,
against the real Core.

A watch-only wallet "wo" on Core and on Quill (following Core with -chainsource) holds the public
descriptors of Core's "src" wallet. Core's "ext" wallet, which "wo" knows nothing of, owns coins of
every kind (P2PKH, P2SH-P2WPKH, P2WPKH, P2TR, 2-of-2 multisig under wsh, sh(wsh) and sh). Each
coin is spent as a pre-selected input, without solving data (Core cannot size it unless it is
P2TR: "Not solvable pre-selected input"), then with the public key, the script or the
descriptor that solves it: the answers (PSBT bytes, fee, changepos, or the error) must be equal.
Last, a fee bump (psbtbumpfee) that needs one more of the wallet's coins, as Core adds it.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.kit.bumps import normalized_bump
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair

SINGLE = ("legacy", "p2sh-segwit", "bech32", "bech32m")
MULTI = {"wsh": "bech32", "sh-wsh": "p2sh-segwit", "sh": "legacy"}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core, \
            follower(core, tmp_path_factory.mktemp("quill")) as quill:
        yield core, quill, _build(core, quill)


def _build(core: Any, quill: Any) -> dict[str, Any]:
    for name in ("miner", "ext", "src"):
        core.rpc("createwallet", name)
    miner, ext, src = Wallet(core, "miner"), Wallet(core, "ext"), Wallet(core, "src")
    core.rpc("generatetoaddress", 101, miner.rpc("getnewaddress"))
    requests = import_requests(src.rpc("listdescriptors")["descriptors"])
    pair = watch_only_pair(core, quill, "wo", requests)
    coins: dict[str, dict[str, Any]] = {}
    for kind in SINGLE:
        address = ext.rpc("getnewaddress", "", kind)
        info = ext.rpc("getaddressinfo", address)
        coins[kind] = {"address": address, "pubkeys": [info["pubkey"]] if "pubkey" in info else [],
                       "descriptors": [info["desc"]]}
    keys = [ext.rpc("getaddressinfo", ext.rpc("getnewaddress", "", "bech32"))["pubkey"] for _ in range(2)]
    for kind, address_type in MULTI.items():
        made = core.rpc("createmultisig", 2, keys, address_type)
        script = made.get("witnessScript", made["redeemScript"])
        coins[kind] = {"address": made["address"], "scripts": [script], "descriptors": [made["descriptor"]],
                       "pubkeys": keys}
    # ext pays itself, so that "wo" never saw the coins' transactions
    ext_funds = ext.rpc("getnewaddress")
    miner.rpc("sendtoaddress", ext_funds, 20)
    core.rpc("generatetoaddress", 1, miner.rpc("getnewaddress"))
    paid = ext.rpc("sendmany", "", {coin["address"]: 1 for coin in coins.values()})  # one transaction: none spent
    for coin in coins.values():
        coin["txid"] = paid
    # and "wo" has a coin of its own, for a mix of wallet and external inputs
    own_address = pair[0].rpc("getnewaddress", "", "bech32")
    assert pair[1].rpc("getnewaddress", "", "bech32") == own_address
    own_txid = miner.rpc("sendtoaddress", own_address, 2)
    spare_address = pair[0].rpc("getnewaddress", "", "bech32")   # what a fee bump may add
    assert pair[1].rpc("getnewaddress", "", "bech32") == spare_address
    miner.rpc("sendtoaddress", spare_address, "0.3")
    core.rpc("generatetoaddress", 1, miner.rpc("getnewaddress"))
    sync(core, quill)
    own = {"txid": own_txid, "address": own_address}
    for coin in list(coins.values()) + [own]:
        tx = core.rpc("getrawtransaction", coin["txid"], True)
        coin["input"] = {"txid": coin["txid"], "vout": next(
            o["n"] for o in tx["vout"] if o["scriptPubKey"].get("address") == coin["address"])}
    return {"c": pair[0], "q": pair[1], "coins": coins, "own": own, "dest": miner.rpc("getnewaddress"),
            "change": miner.rpc("getnewaddress", "", "bech32m"), "src": src, "core": core, "quill": quill}


def same(s: dict[str, Any], method: str, *params: Any) -> Any:
    theirs, ours = answer(s["c"], method, *params), answer(s["q"], method, *params)
    assert ours == theirs, (method, params)
    return theirs


def _options(s: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"fee_rate": 5, "changeAddress": s["change"], "changePosition": 1, **extra}


def test_external_inputs_need_solving_data_as_in_core(scenario: Any) -> None:
    _, _, s = scenario
    for kind, coin in s["coins"].items():
        result = same(s, "walletcreatefundedpsbt", [coin["input"]], [{s["dest"]: "0.5"}], 0, _options(s))
        # Core sizes a taproot output's key path spend without help (InferDescriptor: rawtr())
        assert result[0] == ("ok" if kind == "bech32m" else "error"), (kind, result)
        if kind != "bech32m":
            assert result[1:] == (-4, "Not solvable pre-selected input COutPoint("
                                  f"{coin['txid'][:10]}, {coin['input']['vout']})")


def test_solving_data_makes_external_inputs_solvable(scenario: Any) -> None:
    _, _, s = scenario
    solved = 0
    for coin in s["coins"].values():
        for field in ("pubkeys", "scripts", "descriptors"):
            if not coin.get(field):
                continue
            options = _options(s, solving_data={field: coin[field]})
            result = same(s, "walletcreatefundedpsbt", [coin["input"]], [{s["dest"]: "0.5"}], 0, options)
            solved += result[0] == "ok"
    # pubkeys solve pkh, sh(wpkh) and wpkh; scripts sh(multi) and wsh(multi) but not sh(wsh(multi))
    # (Core keeps no P2WSH script for a script given); descriptors all seven
    assert solved == 3 + 2 + 7


def test_external_and_wallet_inputs_together(scenario: Any) -> None:
    _, _, s = scenario
    coins = s["coins"]
    inputs = [s["own"]["input"], coins["wsh"]["input"], coins["legacy"]["input"]]
    data = {"pubkeys": coins["legacy"]["pubkeys"], "scripts": coins["wsh"]["scripts"]}
    for add_inputs in (False, True):
        result = same(s, "walletcreatefundedpsbt", inputs, [{s["dest"]: "3.5"}], 0,
                      _options(s, solving_data=data, add_inputs=add_inputs, fee_rate=11))
        assert result[0] == "ok", result
    raw = s["c"].node.rpc("createrawtransaction", inputs, [{s["dest"]: "3.5"}])
    result = same(s, "fundrawtransaction", raw, _options(s, solving_data=data, fee_rate=3))
    assert result[0] == "ok", result
    # send hands back the PSBT to sign (its locktime is drawn, so only its fee is compared)
    send = {"inputs": inputs, "solving_data": data, "change_address": s["change"], "change_position": 0,
            "locktime": 0, "add_inputs": False}
    theirs = answer(s["c"], "send", [{s["dest"]: "3.5"}], None, None, 4, send)
    ours = answer(s["q"], "send", [{s["dest"]: "3.5"}], None, None, 4, send)
    assert ours == theirs and ours[0] == "ok", (ours, theirs)


def test_missing_coins_and_bad_solving_data_get_cores_errors(scenario: Any) -> None:
    _, _, s = scenario
    coin = s["coins"]["bech32"]
    nowhere = {"txid": "ab" * 32, "vout": 0}
    answers = [same(s, "walletcreatefundedpsbt", [nowhere], [{s["dest"]: "0.5"}], 0, _options(s))]
    own = s["own"]["input"]
    for data in ({"pubkeys": ["zz"]}, {"pubkeys": ["0011"]}, {"pubkeys": ["02" + "00" * 32]},
                 {"pubkeys": ["04" + "11" * 64]}, {"scripts": ["zz"]}, {"scripts": "51"},
                 {"descriptors": ["foo"]}, {"descriptors": [coin["descriptors"][0].split("#")[0]]},
                 {"descriptors": [1]}, {"pubkeys": "x"}, {"other": 1}, {"pubkeys": [], "scripts": ["51"]}):
        answers.append(same(s, "walletcreatefundedpsbt", [coin["input"], own], [{s["dest"]: "0.5"}], 0,
                            _options(s, solving_data=data)))
    assert [a[0] for a in answers] == ["error"] * len(answers), answers


def test_psbtbumpfee_adds_a_confirmed_coin_as_core(scenario: Any) -> None:
    """A payment whose input cannot pay the higher fee: Core's bump adds the wallet's other confirmed
    coin (the only one, so the choice is not random) and a change output."""
    core, _, s = scenario
    c, q = s["c"], s["q"]
    # (on both: each reserves the same change addresses)
    result = same(s, "walletcreatefundedpsbt", [s["own"]["input"]], [{s["dest"]: "1.99999"}], 0,
                  {"fee_rate": 2, "add_inputs": False})
    funded = result[1]
    assert funded["changepos"] == -1
    signed = s["src"].rpc("walletprocesspsbt", funded["psbt"])
    txid = core.rpc("sendrawtransaction", signed["hex"])
    sync(core, s["quill"])
    tip = core.rpc("getblockcount")
    outcomes = []
    for options in ({"fee_rate": 20}, {"fee_rate": 25, "replaceable": False}, None,
                    {"fee_rate": 20, "outputs": [{s["dest"]: "2.5"}]}):
        params = [txid] if options is None else [txid, options]
        theirs, ours = answer(c, "psbtbumpfee", *params), answer(q, "psbtbumpfee", *params)
        assert normalized_bump(core, ours, tip) == normalized_bump(core, theirs, tip), options
        outcomes.append(theirs)
    assert [len(core.rpc("decodepsbt", o[1]["psbt"])["inputs"]) for o in outcomes[:2]] == [2, 2]
    assert outcomes[2][0] == "ok"
    assert outcomes[3] == ("error", -4, "Unable to create transaction. Insufficient funds")


def test_input_weights_size_inputs_as_core(scenario: Any) -> None:
    """Core's input weights (`weight` in inputs, `input_weights` in fundrawtransaction's options): an
    input with a weight needs no solving data; the weight replaces its estimate."""
    _, _, s = scenario
    coins = s["coins"]
    legacy, bech32 = coins["legacy"]["input"], coins["bech32"]["input"]
    results = []
    for inputs in ([dict(legacy, weight=700)], [dict(legacy, weight=165), dict(bech32, weight=400_000 // 4)],
                   [dict(bech32, weight=272), legacy]):
        options = _options(s, solving_data={"pubkeys": coins["legacy"]["pubkeys"]})
        results.append(same(s, "walletcreatefundedpsbt", inputs, [{s["dest"]: "0.5"}], 0, options))
    raw = s["c"].node.rpc("createrawtransaction", [legacy, bech32], [{s["dest"]: "1.5"}])
    results.append(same(s, "fundrawtransaction", raw, _options(s, input_weights=[dict(legacy, weight=600),
                                                                                   dict(bech32, weight=300)])))
    send = {"inputs": [dict(legacy, weight=600)], "change_address": s["change"], "change_position": 0,
            "locktime": 0, "add_inputs": False}
    results.append(same(s, "send", [{s["dest"]: "0.5"}], None, None, 4, send))
    assert [r[0] for r in results] == ["ok"] * 5, results
    bad = [dict(legacy, weight=164), dict(legacy, weight=400_001), dict(legacy, weight="600"),
           {"txid": legacy["txid"], "weight": 600}, dict(legacy, vout=-1, weight=600),
           {"txid": "zz", "vout": 0, "weight": 600}, dict(legacy, weight=600.5)]
    errors = [same(s, "fundrawtransaction", raw, _options(s, input_weights=[item])) for item in bad]
    errors.append(same(s, "walletcreatefundedpsbt", [legacy], [{s["dest"]: "0.5"}], 0,
                       _options(s, input_weights=[dict(legacy, weight=600)])))
    errors.append(same(s, "walletcreatefundedpsbt", [dict(legacy, weight=100)], [{s["dest"]: "0.5"}], 0,
                       _options(s)))
    assert [e[0] for e in errors] == ["error"] * len(errors), errors
