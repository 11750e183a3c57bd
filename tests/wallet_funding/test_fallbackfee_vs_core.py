"""-fallbackfee: the fee rate a wallet pays when estimation has no data, beside the real Core.

Core and a Quill following it both run with -fallbackfee=0.0001 (10 sat/vB) and hold the same
watch-only wallet; funding calls that name no fee rate must give the same PSBTs and fees as
Core's, where without the option both refuse (`Fee estimation failed. Fallbackfee is disabled`).
Creating or loading a wallet reads the option as Core does: an amount that is not one fails the
call, a high one is a warning.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair

FALLBACK = "-fallbackfee=0.0001"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core"), FALLBACK) as core, \
            follower(core, tmp_path_factory.mktemp("quill"), FALLBACK) as quill:
        core.rpc("createwallet", "keys")
        keys = Wallet(core, "keys")
        miner = keys.rpc("getnewaddress", "", "bech32")
        core.rpc("generatetoaddress", 101, miner)
        core.rpc("createwallet", "src")
        public = core.rpc("listdescriptors", wallet="src")["descriptors"]
        sync(core, quill)
        requests = import_requests([d for d in public if d["desc"].startswith("wpkh(") and d["active"]])
        c, q = watch_only_pair(core, quill, "wo", requests)
        address = c.rpc("getnewaddress", "", "bech32")
        assert q.rpc("getnewaddress", "", "bech32") == address
        txid = keys.rpc("sendtoaddress", address, "0.5")
        core.rpc("generatetoaddress", 1, miner)
        sync(core, quill)
        vout = next(u["vout"] for u in c.rpc("listunspent") if u["txid"] == txid)
        yield {"c": c, "q": q, "coin": {"txid": txid, "vout": vout}, "dest": miner}


def _same(p: dict[str, Any], method: str, *params: Any) -> Any:
    theirs, ours = answer(p["c"], method, *params), answer(p["q"], method, *params)
    assert ours == theirs, (method, params)
    assert theirs[0] == "ok", theirs
    return theirs[1]


def test_funding_without_a_fee_rate_pays_the_fallback_rate(pair: dict[str, Any]) -> None:
    coin, dest = pair["coin"], pair["dest"]
    for options in ({"changePosition": 1}, {"changePosition": 0, "conf_target": 6},
                    {"changePosition": 1, "add_inputs": False, "replaceable": False}):
        result = _same(pair, "walletcreatefundedpsbt", [coin], [{dest: "0.1"}], 0, options)
        analysis = pair["c"].node.rpc("analyzepsbt", result["psbt"])
        assert analysis["fee"] == result["fee"]
        # 10 sat/vB, not the required 0.1 sat/vB (and not an error)
        assert abs(int(result["fee"] * 10**8) - 10 * analysis["estimated_vsize"]) <= 10


def test_sendall_uses_it_too(pair: dict[str, Any]) -> None:
    result = _same(pair, "sendall", [pair["dest"]], None, None, None,
                   {"inputs": [pair["coin"]], "locktime": 0, "add_to_wallet": False})
    assert result["complete"] is False and result["psbt"]


def test_an_invalid_or_high_fallback_fee_as_cores_createwallet_and_loadwallet(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    for value in ("abc", "0.02", "1.123456789", " 0.5 "):
        option = f"-fallbackfee={value}"
        with BitcoinD(tmp_path_factory.mktemp("core"), option) as core, \
                QuillDaemon(tmp_path_factory.mktemp("quill"), option) as quill:
            answers = []
            for node in (core, quill):
                made = answer(Wallet(node, ""), "createwallet", "w", True)
                if made[0] == "ok":
                    node.rpc("unloadwallet", "w")
                    loaded = answer(Wallet(node, ""), "loadwallet", "w")
                else:
                    loaded = None
                answers.append((made, loaded))
            assert answers[1] == answers[0], value
            if value == "abc":
                assert answers[0][0][0] == "error" and "Invalid amount for -fallbackfee" in answers[0][0][2]
            if value == "0.02":
                assert "-fallbackfee is set very high!" in answers[0][0][1]["warnings"][0]


def test_without_it_funding_refuses_as_core(tmp_path_factory: pytest.TempPathFactory) -> None:
    with QuillDaemon(tmp_path_factory.mktemp("quill")) as quill:
        quill.rpc("createwallet", "w", True)
        w = Wallet(quill, "w")
        got = answer(w, "walletcreatefundedpsbt", [], [{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080": 1}])
        assert got == ("error", -4, "Fee estimation failed. Fallbackfee is disabled. Wait a few blocks or enable "
                                    "-fallbackfee.")


def test_psbtbumpfee_without_a_fee_rate_pays_at_least_the_fallback_rate(pair: dict[str, Any]) -> None:
    """Core's EstimateFeeRate: the original rate plus the incremental fee, but never below
    GetMinimumFeeRate, which is the fallback rate when estimation has no data."""
    c, q, core = pair["c"], pair["q"], pair["c"].node
    funded = c.rpc("walletcreatefundedpsbt", [pair["coin"]], [{pair["dest"]: "0.2"}], 0,
                   {"fee_rate": 1, "changePosition": 1, "replaceable": True})
    signed = core.rpc("walletprocesspsbt", funded["psbt"], wallet="src")
    txid = core.rpc("sendrawtransaction", core.rpc("finalizepsbt", signed["psbt"])["hex"])
    sync(core, q.node)
    # Core places the change and sets the locktime at random here (Quill: its likeliest choice), so
    # the fees are compared, not the bytes
    bumped, ours = c.rpc("psbtbumpfee", txid), q.rpc("psbtbumpfee", txid)
    assert (ours["origfee"], ours["fee"], ours["errors"]) == (bumped["origfee"], bumped["fee"], bumped["errors"])
    analysis = core.rpc("analyzepsbt", bumped["psbt"])
    assert abs(int(bumped["fee"] * 10**8) - 10 * analysis["estimated_vsize"]) <= 10, bumped
