"""walletcreatefundedpsbt and fundrawtransaction with a fixed set of inputs, against the real Core.

Core's "keys" wallet pays to its own P2WPKH, P2TR and P2SH-P2WPKH addresses; for each type a
watch-only wallet on Core and one on Quill (following Core with -chainsource) hold the public
descriptors of that type. The same calls go to both: the PSBT bytes (base64), fee and changepos
must be equal, and so must errors.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair

TYPES = {"bech32": "wpkh(", "bech32m": "tr(", "p2sh-segwit": "sh(wpkh("}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core, \
            follower(core, tmp_path_factory.mktemp("quill")) as quill:
        yield core, quill, _build(core, quill)


def _build(core: Any, quill: Any) -> dict[str, Any]:
    core.rpc("createwallet", "keys")
    keys = Wallet(core, "keys")
    miner = keys.rpc("getnewaddress", "", "bech32")
    core.rpc("generatetoaddress", 101, miner)
    core.rpc("createwallet", "src")  # its public descriptors are the watch-only wallets'; it never spends
    public = core.rpc("listdescriptors", wallet="src")["descriptors"]
    sync(core, quill)
    out: dict[str, Any] = {"keys": keys}
    for kind, prefix in TYPES.items():
        requests = import_requests([d for d in public if d["desc"].startswith(prefix) and d["active"]])
        pair = watch_only_pair(core, quill, f"wo-{kind}", requests)
        coins = []
        for amount in ("0.5", "0.25", "0.00011"):
            address = pair[0].rpc("getnewaddress", "", kind)
            assert pair[1].rpc("getnewaddress", "", kind) == address
            coins.append((keys.rpc("sendtoaddress", address, amount), address))
        out[kind] = {"c": pair[0], "q": pair[1], "coins": coins}
    core.rpc("generatetoaddress", 1, miner)
    sync(core, quill)
    for kind in TYPES:
        c = out[kind]["c"]
        out[kind]["utxos"] = [({"txid": u["txid"], "vout": u["vout"]}, u["amount"])
                              for u in sorted(c.rpc("listunspent"), key=lambda u: u["amount"])]
    return out


def same(s: dict[str, Any], method: str, *params: Any) -> Any:
    theirs, ours = answer(s["c"], method, *params), answer(s["q"], method, *params)
    if ours != theirs and theirs[0] == ours[0] == "ok" and "psbt" in theirs[1]:
        # Name the differing fields first (Core decodes both), then the bytes.
        decoded = [s["c"].node.rpc("decodepsbt", r[1]["psbt"]) for r in (ours, theirs)]
        assert decoded[0] == decoded[1], (method, params, json.dumps(decoded, default=str))
    assert ours == theirs, (method, params)
    return theirs


def test_help_is_cores_text(scenario: Any) -> None:
    core, quill, _ = scenario
    for method in ("walletcreatefundedpsbt", "fundrawtransaction"):
        assert quill.rpc("help", method) == core.rpc("help", method)


def test_fixed_inputs_psbt_equals_cores(scenario: Any) -> None:
    core, _, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    dest_tr = sc["keys"].rpc("getnewaddress", "", "bech32m")
    for kind in TYPES:
        s = sc[kind]
        (small, _), (mid, _), (big, _) = s["utxos"]
        own = s["c"].rpc("getnewaddress", "", kind)
        assert s["q"].rpc("getnewaddress", "", kind) == own
        cases = [
            ([big], [{dest: "0.1"}], 0, {"add_inputs": False, "fee_rate": 1, "changePosition": 0}),
            ([big, mid], [{dest: "0.3"}, {dest_tr: "0.2"}], 0,
             {"add_inputs": False, "fee_rate": "12.345", "changePosition": 2, "change_type": kind}),
            ([mid], [{dest: "0.2499"}], 0, {"fee_rate": 3, "changePosition": 1}),
            ([mid], [{dest: "0.24999"}], 0, {"fee_rate": 3, "changePosition": 1}),  # change not worth it: none
            ([mid], [{dest: "0.25"}], 0, {"fee_rate": 5, "changePosition": 1, "subtractFeeFromOutputs": [0]}),
            ([big, small], [{dest: "0.2"}, {own: "0.1"}, {dest_tr: "0.05"}], 500,
             {"fee_rate": 7, "changePosition": 1, "subtractFeeFromOutputs": [0, 2], "replaceable": False}),
            ([mid], [{own: "0.1"}], 0, {"fee_rate": 2, "changePosition": 0, "replaceable": True,
                                        "includeWatching": True, "locktime": 7}),
            ([big], [{dest: "0.1"}], 0, {"feeRate": "0.0002", "changePosition": 1, "lockUnspents": False}),
        ]
        for inputs, outputs, locktime, options in cases:
            if kind == "p2sh-segwit":
                # Without change_type Core wants bech32 change (unless a recipient is P2SH), which
                # this wallet cannot give.
                same(s, "walletcreatefundedpsbt", inputs, outputs, locktime, options)
                options = {"change_type": kind, **options}
            for extra in ([], [True], [False], [True, 2, 0], [True, 2, 2]):
                result = same(s, "walletcreatefundedpsbt", inputs, outputs, locktime, options, *extra)
                assert result[0] == "ok", result
            decoded = core.rpc("decodepsbt", result[1]["psbt"])
            assert decoded["fee"] == result[1]["fee"]
        # The change address was only reserved: both hand out the same next one.
        assert s["q"].rpc("getrawchangeaddress", kind) == s["c"].rpc("getrawchangeaddress", kind)


def test_fee_at_the_rate_and_change_dust_rules(scenario: Any) -> None:
    _, _, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    for kind in TYPES:
        s = sc[kind]
        _, (mid, amount), _ = s["utxos"]
        # Walk the recipient amount across the point where the change stops being worth keeping.
        for sats in range(0, 4000, 97):
            value = (amount - Decimal("0.00002000") - Decimal(sats) / 10 ** 8).quantize(Decimal("1e-8"))
            result = same(s, "walletcreatefundedpsbt", [mid], [{dest: str(value)}], 0,
                          {"fee_rate": "1.5", "changePosition": 0, "change_type": kind})
            assert result[0] == "ok"


def test_fundrawtransaction_equals_cores(scenario: Any) -> None:
    core, _, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    for kind in TYPES:
        s = sc[kind]
        (_, _), (mid, _), (big, _) = s["utxos"]
        raw = core.rpc("createrawtransaction", [mid, big], [{dest: "0.6"}])
        for options in ({"add_inputs": False, "fee_rate": 4, "changePosition": 0, "change_type": kind},
                        {"add_inputs": False, "fee_rate": 4, "changePosition": 1, "subtractFeeFromOutputs": [0],
                         "change_type": kind}):
            assert same(s, "fundrawtransaction", raw, options)[0] == "ok"


def test_bad_options_and_insufficient_funds_get_cores_errors(scenario: Any) -> None:
    _, _, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    s = sc["bech32"]
    (small, _), (mid, _), _ = s["utxos"]
    cases = [
        ([mid], [{dest: "0.3"}], 0, {"fee_rate": 1, "changePosition": 0}),                  # not enough
        ([small], [{dest: "0.00011"}], 0, {"fee_rate": 1}),                                 # fee not covered
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "changePosition": 2}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "changePosition": -2}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "feeRate": "0.0001"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "conf_target": 3}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "subtractFeeFromOutputs": [1]}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "subtractFeeFromOutputs": [0, 0]}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "subtractFeeFromOutputs": [-1]}),
        ([mid], [{dest: "0.00000100"}], 0, {"fee_rate": 1}),                                # dust
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "change_type": "bech33"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "changeAddress": "nope"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "changeAddress": dest, "change_type": "bech32"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": "0.0001"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "colour": "blue"}),
        ([{"txid": "11" * 32, "vout": 0}], [{dest: "0.1"}], 0, {"fee_rate": 1}),           # not the wallet's
        ([{**mid, "vout": 7}], [{dest: "0.1"}], 0, {"fee_rate": 1}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "changePosition": "0"}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "change_position": 5}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": 1, "replaceable": 1}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": True}),
        ([mid], [{dest: "0.1"}], 0, {"fee_rate": "x"}),
    ]
    for inputs, outputs, locktime, options in cases:
        result = same(s, "walletcreatefundedpsbt", inputs, outputs, locktime, options)
        assert result[0] == "error", (options, result)
    # Nothing was locked or stored by the failures.
    assert s["q"].rpc("listlockunspent") == [] == s["c"].rpc("listlockunspent")

