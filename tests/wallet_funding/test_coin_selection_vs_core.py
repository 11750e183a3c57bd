"""Automatic coin selection (walletcreatefundedpsbt / fundrawtransaction without fixed inputs)
against the real Core.

Watch-only wallets on Core and on Quill (following Core with -chainsource) hold the same public
descriptors and the same coins. Where Core's choice is determined (a unique Branch and Bound
match, CoinGrinder's lightest set, a single eligible coin, a fixed change position) the answers
must be equal: the PSBT bytes, or with several auto-selected inputs (Core shuffles them) the
decoded PSBT with its inputs sorted. Where Core draws at random (Knapsack, SRD), Quill's answers
must be valid, pay exactly the fee rate on Core's size estimate, conserve funds, and typically
waste no more than Core's answers do.
"""
from __future__ import annotations

import random
import urllib.request
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair

COIN = 100_000_000
LONG_TERM_RATE = 10        # sat/vB: Core's -consolidatefeerate
DISCARD_RATE = 10          # sat/vB: Core's -discardfee
# Input and output weights of each address type with Core's largest signatures (no R grinding).
INPUT_WEIGHT = {"witness_v0_keyhash": 272, "witness_v1_taproot": 231, "scripthash": 364}
OUTPUT_SIZE = {"witness_v0_keyhash": 31, "witness_v1_taproot": 43, "scripthash": 32}
POWERS = [Decimal("0.01") * 2 ** k for k in range(8)]   # 0.01 ... 1.28: every sum is one subset


def btc(sats: int) -> str:
    return str((Decimal(sats) / COIN).quantize(Decimal("1e-8")))


def sats(amount: Any) -> int:
    return int(Decimal(str(amount)) * COIN)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # A small keypool: Core's wallets here only lend their account keys.
    with BitcoinD(tmp_path_factory.mktemp("core"), "-keypool=10") as core, \
            follower(core, tmp_path_factory.mktemp("quill")) as quill:
        yield core, quill, _build(core, quill)


def _import(core: Any, quill: Any, name: str, bodies: list[tuple[str, bool]]) -> Any:
    """The same watch-only wallet on both: these descriptors (body, internal), active."""
    requests = [{"desc": core.rpc("getdescriptorinfo", body)["descriptor"], "timestamp": 0, "active": True,
                 "internal": internal, "range": [0, 40]} for body, internal in bodies]
    pair = watch_only_pair(core, quill, name, requests)
    return {"c": pair[0], "q": pair[1]}


def _key(core: Any, wallet: str, prefix: str) -> str:
    """A Core wallet's account key with its origin, from its receive descriptor of this kind."""
    desc = next(d["desc"] for d in core.rpc("listdescriptors", wallet=wallet)["descriptors"]
                if d["desc"].startswith(prefix) and not d["internal"])
    return desc[len(prefix):desc.index("/0/*)")]  # e.g. [fingerprint/84h/1h/0h]tpub...


def _build(core: Any, quill: Any) -> dict[str, Any]:
    core.rpc("createwallet", "keys")
    keys = Wallet(core, "keys")
    miner = keys.rpc("getnewaddress", "", "bech32")
    core.rpc("generatetoaddress", 101, miner)
    sc: dict[str, Any] = {"keys": keys, "miner": miner}
    # Every wallet its own branches of one account's keys (no two wallets share a script).
    core.rpc("createwallet", "src")
    wpkh, tr = _key(core, "src", "wpkh("), _key(core, "src", "tr(")
    for i, (name, kinds) in enumerate((("bnb", ("wpkh",)), ("conf", ("wpkh",)), ("mix", ("wpkh", "tr")),
                                       ("many", ("wpkh", "tr")))):
        bodies = [(f"{kind}({wpkh if kind == 'wpkh' else tr}/{2 * i + 2 + internal}/*)", bool(internal))
                  for kind in kinds for internal in (0, 1)]
        sc[name] = _import(core, quill, name, bodies)
    signers = [wpkh, _key(core, "src", "pkh("), _key(core, "src", "sh(wpkh(")]  # three accounts' keys
    for name, template in (("wsh", "wsh(sortedmulti(2,{}))"), ("shwsh", "sh(wsh(multi(2,{})))"),
                           ("sh", "sh(sortedmulti(2,{}))")):
        sc[name] = _import(core, quill, name, [(template.format(",".join(f"{k}/{branch}/*" for k in signers)),
                                                bool(branch)) for branch in (0, 1)])
    sync(core, quill)

    def address(s: dict[str, Any], kind: str) -> str:
        address = s["c"].rpc("getnewaddress", "", kind)
        assert s["q"].rpc("getnewaddress", "", kind) == address
        return address

    def pay(s: dict[str, Any], kind: str, amount: Any) -> dict[str, Any]:
        to = address(s, kind)
        # 25 sat/vB: the unconfirmed coin's parent pays less than the highest rate used below.
        txid = keys.rpc("sendtoaddress", to, str(amount), "", "", False, True, None, "unset", None, 25)
        tx = core.rpc("getrawtransaction", txid, True)
        vout = next(o["n"] for o in tx["vout"] if o["scriptPubKey"].get("address") == to)
        return {"txid": txid, "vout": vout}

    batch: dict[str, str] = {}
    for amount in POWERS:
        batch[address(sc["bnb"], "bech32")] = str(amount)
    batch[address(sc["mix"], "bech32")] = "1.0"
    batch[address(sc["mix"], "bech32m")] = "1.0"
    for name, kind in (("wsh", "bech32"), ("shwsh", "p2sh-segwit"), ("sh", "legacy")):
        for amount in ("1.0", "3.0"):
            batch[address(sc[name], kind)] = amount
    rng = random.Random(12)
    for i in range(40):
        batch[address(sc["many"], ("bech32", "bech32m")[i % 2])] = btc(rng.randrange(20_000, 30_000_000))
    keys.rpc("sendmany", "", batch, 0, "", [], True, None, "unset", 25)
    sc["X"] = pay(sc["conf"], "bech32", "1.0")
    core.rpc("generatetoaddress", 4, miner)
    sc["Y"] = pay(sc["conf"], "bech32", "2.0")
    core.rpc("generatetoaddress", 2, miner)
    sc["Z"] = pay(sc["conf"], "bech32", "4.0")            # unconfirmed, from another wallet: unsafe
    sync(core, quill)
    return sc


def canonical(core: Any, result: Any) -> Any:
    """An answer with the inputs in outpoint order (Core shuffles auto-selected inputs)."""
    if result[0] != "ok" or "psbt" not in result[1]:
        return result
    decoded = core.rpc("decodepsbt", result[1]["psbt"])
    decoded["inputs"].sort(key=lambda i: (i["previous_txid"], i["previous_vout"]))
    return decoded, result[1].get("fee"), result[1].get("changepos"), result[1].get("complete")


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two decoded answers first differ (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} != {b!r}"


def same(core: Any, s: dict[str, Any], method: str, *params: Any, exact: bool = True) -> Any:
    theirs, ours = answer(s["c"], method, *params), answer(s["q"], method, *params)
    # The decoded answers first (a readable difference), then for exact cases the bytes.
    ours_c, theirs_c = canonical(core, ours), canonical(core, theirs)
    assert ours_c == theirs_c, (method, params, first_difference(ours_c, theirs_c))
    if exact:
        assert ours == theirs, (method, params)
    return theirs


def transaction_of(core: Any, result: Any) -> Any:
    """The funded transaction (inputs in outpoint order), its fee and change position: what coin
    selection decides, without the PSBT's per-input signing data."""
    if result[0] != "ok":
        return result
    decoded = core.rpc("decodepsbt", result[1]["psbt"])
    inputs = sorted((i["previous_txid"], i["previous_vout"], i["sequence"]) for i in decoded["inputs"])
    outputs = [(o["amount"], o["script"]["hex"]) for o in decoded["outputs"]]
    return inputs, outputs, result[1]["fee"], result[1]["changepos"]


def _kind(script_hex: str) -> str:
    script = bytes.fromhex(script_hex)
    if script[:2] == b"\x00\x14":
        return "witness_v0_keyhash"
    if script[:2] == b"\x51\x20":
        return "witness_v1_taproot"
    return "scripthash"


def _cs(n: int) -> int:
    return 1 if n < 253 else 3


def check_invariants(core: Any, result: Any, rate: int, recipients: int) -> int:
    """Funds conserved, the fee exactly the rate on Core's signed-size estimate; returns the waste
    (Core's metric) of the answer."""
    assert result[0] == "ok", result
    decoded = core.rpc("decodepsbt", result[1]["psbt"])
    values_in = [sats(i["witness_utxo"]["amount"]) for i in decoded["inputs"]]
    kinds_in = [_kind(i["witness_utxo"]["scriptPubKey"]["hex"]) for i in decoded["inputs"]]
    outs = [{"value": o["amount"], "scriptPubKey": o["script"]} for o in decoded["outputs"]]
    fee = sats(result[1]["fee"])
    assert sum(values_in) == sum(sats(o["value"]) for o in outs) + fee
    assert len({(i["previous_txid"], i["previous_vout"]) for i in decoded["inputs"]}) == len(values_in)
    weight = (8 + _cs(len(values_in)) + _cs(len(outs))) * 4 + 2
    weight += sum(8 + 1 + len(o["scriptPubKey"]["hex"]) // 2 for o in outs) * 4
    weight += sum(INPUT_WEIGHT[k] for k in kinds_in)
    vsize = -(-weight // 4)
    changepos = result[1]["changepos"]
    # Whole sat/vB rates: no rounding. Without change the excess goes to the fee too.
    assert fee == rate * vsize if changepos != -1 else fee >= rate * vsize, (fee, rate, vsize)
    input_waste = sum(rate * -(-INPUT_WEIGHT[k] // 4) - LONG_TERM_RATE * -(-INPUT_WEIGHT[k] // 4) for k in kinds_in)
    if changepos == -1:
        # No change: the excess over the recipients and the fee without inputs is waste too.
        no_input_fee = rate * (10 + _cs(recipients) + sum(8 + 1 + len(o["scriptPubKey"]["hex"]) // 2 for o in outs))
        input_fees = sum(rate * -(-INPUT_WEIGHT[k] // 4) for k in kinds_in)
        excess = sum(values_in) - input_fees - sum(sats(o["value"]) for o in outs) - no_input_fee
        return input_waste + excess
    change_kind = _kind(outs[changepos]["scriptPubKey"]["hex"])
    cost_of_change = DISCARD_RATE * -(-INPUT_WEIGHT[change_kind] // 4) + rate * OUTPUT_SIZE[change_kind]
    return input_waste + cost_of_change


def test_branch_and_bound_match_equals_cores(scenario: Any) -> None:
    """At 20 sat/vB a changeless match of one or two coins wastes least: both find the one subset."""
    core, _, sc = scenario
    s = sc["bnb"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    rate = 20
    for subset in ([2], [0, 5], [4, 6], [7], [1, 3]):
        value = sum(sats(POWERS[i]) for i in subset)
        # Effective value of the subset, less the fee of the outputs and overhead, less a little.
        amount = value - len(subset) * rate * 68 - rate * (10 + 1 + 31) - 37
        result = same(core, s, "walletcreatefundedpsbt", [], [{dest: btc(amount)}], 0, {"fee_rate": rate},
                      exact=len(subset) == 1)
        assert result[0] == "ok" and result[1]["changepos"] == -1, result
        assert len(core.rpc("decodepsbt", result[1]["psbt"])["inputs"]) == len(subset)


def test_coin_grinder_lightest_set_equals_cores(scenario: Any) -> None:
    """At 50 sat/vB (above 3x the long-term rate) the lightest input set with change wins; on
    equal weight CoinGrinder keeps the smaller amount: the same coin, change and fee as Core."""
    core, _, sc = scenario
    s = sc["bnb"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    for amount, position in (("0.1", 0), ("0.3", 1), ("0.5", 0)):
        result = same(core, s, "walletcreatefundedpsbt", [], [{dest: amount}], 0,
                      {"fee_rate": 50, "changePosition": position})
        assert result[0] == "ok" and result[1]["changepos"] == position


def test_eligibility_filters_and_coin_control_equal_cores(scenario: Any) -> None:
    """Foreign coins need six confirmations first, then one; unconfirmed foreign coins only with
    include_unsafe; minconf, maxconf and locked coins narrow the choice as in Core."""
    core, _, sc = scenario
    s = sc["conf"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    base = {"fee_rate": 20, "changePosition": 0}
    cases: list[tuple[Any, ...]] = [
        ("0.5", base, True),                                  # X: the only coin with six confirmations
        ("1.5", base, True),                                  # Y: needs the one-confirmation filter
        ("2.5", base, False),                                 # X and Y
        ("5", base, True),                                    # Z is unsafe: insufficient funds
        ("5", {**base, "include_unsafe": True}, False),
        ("1.5", {**base, "minconf": 3}, True),                # Y too young: insufficient
        ("0.5", {**base, "maxconf": 5}, True),                # only Y
        ("0.5", {**base, "minconf": 0, "maxconf": 0, "include_unsafe": True}, True),   # only Z
        # Z's parent paid 25 sat/vB: at 40 the new transaction also pays the parent's shortfall.
        ("0.5", {**base, "fee_rate": 40, "minconf": 0, "maxconf": 0, "include_unsafe": True}, True),
        ("3.99", {**base, "fee_rate": 40, "minconf": 0, "maxconf": 0, "include_unsafe": True}, True),
        ("1.0", {"fee_rate": 20, "subtractFeeFromOutputs": [0]}, True),  # X exactly, fee from the amount
        ("0.5", {**base, "minconf": -1}, True),
        ("0.5", {**base, "minconf": 4, "maxconf": 3}, True),
        ("0.5", {**base, "max_tx_weight": 100}, True),
        ("0.5", {**base, "max_tx_weight": 400}, True),
        ("0.00000200", base, True),                           # dust
        ("21", base, True),                                   # more than the wallet has
    ]
    for amount, options, exact in cases:
        same(core, s, "walletcreatefundedpsbt", [], [{dest: amount}], 0, options, exact=exact)
    # A locked coin is not chosen: with X locked, Y pays.
    for w in (s["c"], s["q"]):
        assert w.rpc("lockunspent", False, [sc["X"]]) is True
    try:
        result = same(core, s, "walletcreatefundedpsbt", [], [{dest: "0.5"}], 0, base)
        assert core.rpc("decodepsbt", result[1]["psbt"])["inputs"][0]["previous_txid"] == sc["Y"]["txid"]
    finally:
        for w in (s["c"], s["q"]):
            w.rpc("lockunspent", True, [sc["X"]])
    # Pre-selected inputs come first; more are added when allowed, never when not.
    same(core, s, "walletcreatefundedpsbt", [sc["X"]], [{dest: "1.5"}], 0, {**base, "add_inputs": True})
    same(core, s, "walletcreatefundedpsbt", [sc["X"]], [{dest: "1.5"}], 0, base)
    raw = core.rpc("createrawtransaction", [], [{dest: "0.5"}])
    same(core, s, "fundrawtransaction", raw, base)
    raw = core.rpc("createrawtransaction", [sc["X"]], [{dest: "1.5"}])
    same(core, s, "fundrawtransaction", raw, {**base, "replaceable": False})
    same(core, s, "fundrawtransaction", raw, {**base, "add_inputs": False})
    # Nothing was locked, and the change addresses handed out stay in step.
    assert s["q"].rpc("listlockunspent") == [] == s["c"].rpc("listlockunspent")
    assert s["q"].rpc("getrawchangeaddress", "bech32") == s["c"].rpc("getrawchangeaddress", "bech32")


def test_output_types_are_not_mixed_unless_needed(scenario: Any) -> None:
    core, _, sc = scenario
    s = sc["mix"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    # One type alone suffices: the taproot coin, cheaper to spend at 20 sat/vB, wastes less.
    result = same(core, s, "walletcreatefundedpsbt", [], [{dest: "0.5"}], 0, {"fee_rate": 20, "changePosition": 1})
    assert core.rpc("decodepsbt", result[1]["psbt"])["inputs"][0]["witness_utxo"]["scriptPubKey"]["type"] \
        == "witness_v1_taproot"
    same(core, s, "walletcreatefundedpsbt", [], [{dest: "1.5"}], 0, {"fee_rate": 20, "changePosition": 1},
         exact=False)


def test_multisig_wallets_fund_as_cores(scenario: Any) -> None:
    """2-of-3 multisig watch-only wallets (what Specter builds): the same coin, change, fee and PSBT."""
    core, _, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    for name, change_type in (("wsh", "bech32"), ("shwsh", "p2sh-segwit"), ("sh", "legacy")):
        s = sc[name]
        for amount, options in (("0.5", {"fee_rate": 20, "changePosition": 0}),
                                ("3.5", {"fee_rate": 7, "changePosition": 1}),
                                ("1.0", {"fee_rate": 20, "subtractFeeFromOutputs": [0]})):
            options = {**options, "change_type": change_type}
            theirs = answer(s["c"], "walletcreatefundedpsbt", [], [{dest: amount}], 0, options)
            ours = answer(s["q"], "walletcreatefundedpsbt", [], [{dest: amount}], 0, options)
            assert theirs[0] == "ok", theirs
            assert transaction_of(core, ours) == transaction_of(core, theirs), (name, amount, options)
            assert canonical(core, ours) == canonical(core, theirs), (name, amount, options)
        raw = core.rpc("createrawtransaction", [], [{dest: "0.5"}])
        assert same(core, s, "fundrawtransaction", raw,
                    {"fee_rate": 20, "changePosition": 0, "change_type": change_type})[0] == "ok"


def test_random_choices_are_valid_and_waste_no_more_than_cores(scenario: Any) -> None:
    """Knapsack and SRD draw at random: compare what does not depend on the draw."""
    core, _, sc = scenario
    s = sc["many"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    for rate, amount in ((2, "0.3"), (5, "1.1"), (12, "0.05"), (40, "2.5"), (3, "4.0")):
        options = {"fee_rate": rate}
        wastes = {}
        for side in ("c", "q"):
            wastes[side] = sorted(
                check_invariants(core, ("ok", s[side].rpc("walletcreatefundedpsbt", [], [{dest: amount}], 0, options)),
                                 rate, 1) for _ in range(5))
        # The same algorithms drawing from the same distribution: the typical (median) answer wastes
        # no more than Core's, within twice the cost of a change output (the metric's granularity).
        slack = 2 * (DISCARD_RATE * 68 + rate * 43)
        assert wastes["q"][2] <= wastes["c"][2] + slack, (rate, amount, wastes)


def test_send_hands_back_the_psbt_to_sign(scenario: Any) -> None:
    """send from a wallet without private keys: Core's PSBT with complete false. Without a locktime
    both pick one near the tip against fee sniping (at random one time in ten)."""
    core, _, sc = scenario
    s = sc["conf"]
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    tip = core.rpc("getblockcount")
    for params in (([{dest: "0.5"}], None, None, 20, {"change_position": 0}),
                   ([{dest: "1.5"}], None, None, None, {"fee_rate": 20, "change_position": 1, "replaceable": False})):
        theirs, ours = answer(s["c"], "send", *params), answer(s["q"], "send", *params)
        assert theirs[0] == ours[0] == "ok" and ours[1]["complete"] is False and list(ours[1]) == list(theirs[1])
        decoded = [canonical(core, ("ok", {"psbt": r[1]["psbt"], "fee": 0, "changepos": 0}))[0] for r in (ours, theirs)]
        locktimes = [d.pop("fallback_locktime") for d in decoded]
        assert decoded[0] == decoded[1] and all(tip - 99 <= t <= tip for t in locktimes), (params, locktimes)
    cases: list[tuple[Any, ...]] = [
        ([{dest: "0.5"}], None, None, 20, {"change_position": 0, "locktime": 7}),
        ([{dest: "0.5"}], 6, None, None, {}),
        ([{dest: "0.5"}], 6, "economical", None, {"conf_target": 3}),
        ([{dest: "0.5"}], None, None, 20, {"fee_rate": 20}),
        ([{dest: "0.5"}], None, None, 20, {"feeRate": "0.0002"}),
        ([{dest: "0.5"}], None, None, 20, {"changePosition": 0}),
        ([{dest: "0.5"}], None, None, 20, {"subtractFeeFromOutputs": [0]}),
        ([{dest: "0.5"}], None, None, 20, {"colour": "blue"}),
        ([{dest: "50"}], None, None, 20, {}),
    ]
    for params in cases:
        same(core, s, "send", *params)
    assert s["q"].rpc("help", "send") == core.rpc("help", "send")
    assert s["q"].rpc("getrawchangeaddress", "bech32") == s["c"].rpc("getrawchangeaddress", "bech32")


def test_sendall_sweeps_the_wallet_as_cores(scenario: Any) -> None:
    """sendall from a wallet without private keys: every coin (one per type, in Core's type order)
    or the given ones, the remainder to the recipients without an amount, the PSBT to sign."""
    core, _, sc = scenario
    s = sc["mix"]
    dest, other = (sc["keys"].rpc("getnewaddress", "", "bech32") for _ in range(2))
    tip = core.rpc("getblockcount")
    theirs, ours = (answer(w, "sendall", [dest], None, None, 20) for w in (s["c"], s["q"]))
    decoded = [canonical(core, ("ok", {"psbt": r[1]["psbt"]}))[0] for r in (ours, theirs)]
    locktimes = [d.pop("fallback_locktime") for d in decoded]
    assert decoded[0] == decoded[1] and all(tip - 99 <= t <= tip for t in locktimes), locktimes
    coin = s["c"].rpc("listunspent")[0]
    outpoint = {"txid": coin["txid"], "vout": coin["vout"]}
    cases: list[tuple[Any, ...]] = [
        ([dest], None, None, 20, {"locktime": 0}),
        ([{dest: "0.5"}, other], None, None, 7, {"locktime": 5}),
        ([dest, other], None, None, None, {"fee_rate": 3, "replaceable": False, "locktime": 0}),
        ([dest], None, None, 4, {"inputs": [outpoint], "locktime": 0}),
        ([dest], None, None, 4, {"send_max": True, "locktime": 0}),
        ([{dest: "0.5"}], None, None, 7, {}),
        ([{dest: "5"}, other], None, None, 7, {}),
        ([{dest: "1.99999"}, other], None, None, 7, {}),
        ([{dest: "0.000001"}, other], None, None, 7, {}),
        ([dest], None, None, 100_000, {}),
        ([dest], None, None, 4, {"inputs": [outpoint], "send_max": True}),
        ([dest], None, None, 4, {"inputs": [outpoint], "minconf": 1}),
        ([dest], None, None, 4, {"inputs": [{"txid": "11" * 32, "vout": 0}]}),
        ([dest], None, None, 4, {"minconf": -1}),
        ([dest], None, None, 4, {"minconf": 3, "maxconf": 2}),
        ([dest], None, None, 4, {"fee_rate": 3}),
        ([dest], 2, "economical", None, {"conf_target": 2}),
        ("x", None, None, 4, {}),
    ]
    for params in cases:
        same(core, s, "sendall", *params)
    assert s["q"].rpc("help", "sendall") == core.rpc("help", "sendall")
    assert s["q"].rpc("listlockunspent") == [] == s["c"].rpc("listlockunspent")


def test_a_client_library_funds_through_quill(scenario: Any) -> None:
    """python-bitcoinlib's RawProxy calling walletcreatefundedpsbt, and a malformed request over
    plain HTTP, get Core's answers."""
    import bitcoin.rpc

    core, quill, sc = scenario
    dest = sc["keys"].rpc("getnewaddress", "", "bech32")
    user, password = quill.user, quill.password
    if user is None:
        user, password = (quill.datadir / "regtest" / ".cookie").read_text().split(":", 1)
    proxy = bitcoin.rpc.RawProxy(service_url=f"http://{user}:{password}@127.0.0.1:{quill.port}/wallet/conf")
    ours = proxy._call("walletcreatefundedpsbt", [], [{dest: "0.5"}], 0, {"fee_rate": 20, "changePosition": 0})
    theirs = sc["conf"]["c"].rpc("walletcreatefundedpsbt", [], [{dest: "0.5"}], 0,
                                 {"fee_rate": 20, "changePosition": 0})
    assert ours["psbt"] == theirs["psbt"] and Decimal(str(ours["fee"])) == theirs["fee"]
    with pytest.raises(bitcoin.rpc.JSONRPCError) as failure:
        proxy._call("walletcreatefundedpsbt", [], [{dest: "0.5"}], 0, {"fee_rate": 20, "minconf": "x"})
    expected = answer(sc["conf"]["c"], "walletcreatefundedpsbt", [], [{dest: "0.5"}], 0,
                      {"fee_rate": 20, "minconf": "x"})
    assert ("error", failure.value.error["code"], failure.value.error["message"]) == expected
    body = b'{"jsonrpc":"1.0","id":1,"method":"fundrawtransaction","params":["00zz"]}'
    request = urllib.request.Request(f"http://127.0.0.1:{quill.port}/wallet/conf", data=body, method="POST")
    request.add_header("Authorization", "Basic " + __import__("base64").b64encode(
        f"{user}:{password}".encode()).decode())
    try:
        urllib.request.urlopen(request, timeout=30)
        reply = None
    except urllib.error.HTTPError as e:
        reply = e.read()
    assert reply is not None and b"TX decode failed" in reply
