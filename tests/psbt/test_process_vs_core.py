"""walletprocesspsbt and descriptorprocesspsbt against the real Core.

Core's "src" wallet holds the keys of P2WPKH, P2TR, P2SH-P2WPKH and P2PKH descriptors, a
"cosigners" wallet those of a 2-of-3 wsh(sortedmulti()) and a 2-of-2 sh(multi()). A watch-only
wallet on Core and one on Quill (following Core with -chainsource, an emulated device attached)
import the same public descriptors and receive one coin of each kind. The same PSBTs go to both:
the answers (PSBT bytes, complete, hex) and errors must be equal. PSBTs signed by Core's key
holders are finalized by both watch-only wallets. descriptorprocesspsbt with public descriptors
must give Core's bytes; with private ones Quill signs on the device, and the signatures are Core's
too (ECDSA: RFC6979 with low R; BIP340: all-zero aux randomness, as Core signs PSBTs).
psbtbumpfee's replacements are Core's, up to what Core picks at random.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.kit.bumps import normalized_bump
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair

SINGLE = {"bech32": "wpkh(", "bech32m": "tr(", "p2sh-segwit": "sh(wpkh(", "legacy": "pkh("}


def _key(desc: str) -> str:
    """The key expression of a single-key descriptor, without checksum."""
    body = desc.split("#")[0]
    return body[body.index("(") + 1:body.index(")")]


def _add_checksum(core: Any, desc: str) -> str:
    return str(core.rpc("getdescriptorinfo", desc)["descriptor"])


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # Core without -fallbackfee, its default (and Quill's): no fee estimate means none.
    with BitcoinD(tmp_path_factory.mktemp("core"), "-fallbackfee=0") as core, \
            follower(core, tmp_path_factory.mktemp("quill"), "-device=emulator", "-emuboard=rpi_pico") as quill:
        yield _build(core, quill)


def _cosigner_keys(core: Any) -> list[tuple[str, str]]:
    """(public, private) key expressions of three chains of one Core wallet."""
    core.rpc("createwallet", "cosigners")
    found = []
    for private in (False, True):
        descs = core.rpc("listdescriptors", private, wallet="cosigners")["descriptors"]
        found.append([_key(d["desc"]) for prefix in ("wpkh(", "pkh(", "tr(") for d in descs
                      if d["desc"].startswith(prefix) and not d["internal"]])
    return list(zip(found[0], found[1], strict=True))


def _send(keys: Any, address: str, amount: str) -> str:
    """sendtoaddress at 2 sat/vB (Core has no fee estimate and no -fallbackfee here)."""
    return str(keys.rpc("sendtoaddress", address, amount, "", "", False, True, None, "unset", None, 2))


def _build(core: Any, quill: Any) -> dict[str, Any]:
    core.rpc("createwallet", "keys")
    keys = Wallet(core, "keys")
    miner = keys.rpc("getnewaddress", "", "bech32")
    core.rpc("generatetoaddress", 101, miner)
    core.rpc("createwallet", "src")
    public = core.rpc("listdescriptors", wallet="src")["descriptors"]
    private = core.rpc("listdescriptors", True, wallet="src")["descriptors"]
    cosigners = _cosigner_keys(core)
    multi = {
        "wsh": ("wsh(sortedmulti(2,{},{},{}))", 3),
        "sh": ("sh(multi(2,{},{}))", 2),
    }
    out: dict[str, Any] = {"core": core, "quill": quill, "keys": keys, "miner": miner,
                           "private": {}, "public": {}}
    requests = import_requests([d for d in public if d["active"] and d["desc"].startswith(tuple(SINGLE.values()))])
    for kind, (template, n) in multi.items():
        pub = _add_checksum(core, template.format(*[c[0] for c in cosigners[:n]]))
        out["public"][kind] = pub
        out["private"][kind] = template.format(*[c[1] for c in cosigners[:n]])
        # One cosigner's share: its private key, the others public.
        out["private"][f"{kind}-one"] = template.format(cosigners[0][1], *[c[0] for c in cosigners[1:n]])
        requests.append({"desc": pub, "timestamp": 0, "range": [0, 20]})
    for kind, prefix in SINGLE.items():
        out["public"][kind] = [d["desc"] for d in public if d["desc"].startswith(prefix) and not d["internal"]][0]
        out["private"][kind] = [d["desc"] for d in private if d["desc"].startswith(prefix) and not d["internal"]][0]
    pair = watch_only_pair(core, quill, "wo", requests)
    out["c"], out["q"] = pair
    coins: dict[str, Any] = {}
    for kind in SINGLE:
        address = pair[0].rpc("getnewaddress", "", kind)
        assert pair[1].rpc("getnewaddress", "", kind) == address
        coins[kind] = (_send(keys, address, "0.5"), address)
    bump_address = pair[0].rpc("getnewaddress", "", "bech32")   # for psbtbumpfee
    assert pair[1].rpc("getnewaddress", "", "bech32") == bump_address
    coins["bump"] = (_send(keys, bump_address, "0.5"), bump_address)
    for kind in multi:
        address = core.rpc("deriveaddresses", out["public"][kind], [0, 0])[0]
        coins[kind] = (_send(keys, address, "0.25"), address)
    core.rpc("generatetoaddress", 1, miner)
    sync(core, quill)
    utxos = {u["address"]: {"txid": u["txid"], "vout": u["vout"]} for u in pair[0].rpc("listunspent")}
    out["utxo"] = {kind: utxos[address] for kind, (_, address) in coins.items()}
    out["change"] = pair[0].rpc("getrawchangeaddress", "bech32")
    assert pair[1].rpc("getrawchangeaddress", "bech32") == out["change"]
    out["external"] = keys.rpc("getnewaddress", "", "bech32m")
    return out


def _psbt(s: dict[str, Any], kinds: list[str], version: int = 0, sequence: int | None = None) -> str:
    inputs = [dict(s["utxo"][k], **({} if sequence is None else {"sequence": sequence})) for k in kinds]
    outputs = [{s["external"]: Decimal("0.1") * len(kinds)}, {s["change"]: Decimal("0.05")}]
    return str(s["core"].rpc("createpsbt", inputs, outputs, 0, True, 2, version))


def same(s: dict[str, Any], method: str, *params: Any) -> Any:
    theirs, ours = answer(s["c"], method, *params), answer(s["q"], method, *params)
    if ours != theirs and theirs[0] == ours[0] == "ok":
        decoded = [s["core"].rpc("decodepsbt", r[1]["psbt"]) for r in (ours, theirs)]
        assert decoded[0] == decoded[1], (method, params, json.dumps(decoded, default=str))
    assert ours == theirs, (method, params)
    return theirs


def test_help_is_cores_text(scenario: Any) -> None:
    core, quill = scenario["core"], scenario["quill"]
    for method in ("walletprocesspsbt", "descriptorprocesspsbt", "psbtbumpfee", "bumpfee"):
        assert quill.rpc("help", method) == core.rpc("help", method)


ALL_KINDS = ["bech32", "bech32m", "p2sh-segwit", "legacy", "wsh", "sh"]


@pytest.mark.parametrize("kinds", [ALL_KINDS, ["bech32m"], ["wsh", "bech32"], ["legacy"]], ids=repr)
@pytest.mark.parametrize("version", [0, 2])
def test_unsigned_psbt_updated_as_core(scenario: Any, kinds: list[str], version: int) -> None:
    psbt = _psbt(scenario, kinds, version)
    for params in ([], [True, None, False], [False, "ALL", True, False], [True, "DEFAULT"],
                   [True, "ALL|ANYONECANPAY"], [True, "SINGLE|ANYONECANPAY", False, True]):
        kind, result = same(scenario, "walletprocesspsbt", psbt, *params)
        assert kind == "ok" and result["complete"] is False


def test_psbt_of_strangers_and_partial_psbts(scenario: Any) -> None:
    s = scenario
    # An input the wallet does not know, beside its own: Core still checks and updates it.
    stranger = s["keys"].rpc("listunspent")[0]
    psbt = s["core"].rpc("createpsbt", [{"txid": stranger["txid"], "vout": stranger["vout"]}, s["utxo"]["bech32"]],
                         [{s["external"]: 1}])
    same(s, "walletprocesspsbt", psbt)
    # Core's utxoupdatepsbt output (UTXOs already there, from the node) processed again.
    updated = s["core"].rpc("utxoupdatepsbt", psbt)
    same(s, "walletprocesspsbt", updated)
    same(s, "walletprocesspsbt", updated, True, "NONE")


def _core_signed(s: dict[str, Any], psbt: str, kinds: list[str]) -> str:
    """The PSBT with every input signed by its key holders on Core (not finalized)."""
    descs = _ranged([s["private"][k] for k in kinds])
    return str(s["core"].rpc("descriptorprocesspsbt", psbt, descs, None, True, False)["psbt"])


@pytest.mark.parametrize("kinds", [ALL_KINDS, ["bech32m", "bech32"], ["wsh"]], ids=repr)
def test_signed_elsewhere_then_finalized_as_core(scenario: Any, kinds: list[str]) -> None:
    signed = _core_signed(scenario, _psbt(scenario, kinds), kinds)
    kind, result = same(scenario, "walletprocesspsbt", signed)
    assert kind == "ok" and result["complete"] is True and "hex" in result
    same(scenario, "walletprocesspsbt", signed, True, None, True, False)  # finalize=false
    same(scenario, "walletprocesspsbt", signed, True, "SINGLE")           # sighash mismatch


def test_multisig_with_one_signature_of_two(scenario: Any) -> None:
    kinds = ["wsh", "sh"]
    psbt = _psbt(scenario, kinds)
    descs = _ranged([scenario["private"][f"{k}-one"] for k in kinds])
    once = str(scenario["core"].rpc("descriptorprocesspsbt", psbt, descs)["psbt"])
    for params in ([], [True, None, False], [True, "ALL", True, False]):
        kind, result = same(scenario, "walletprocesspsbt", once, *params)
        assert kind == "ok" and result["complete"] is False
    decoded = scenario["core"].rpc("decodepsbt", scenario["q"].rpc("walletprocesspsbt", once)["psbt"])
    assert [len(i["partial_signatures"]) for i in decoded["inputs"]] == [1, 1]


def test_bad_input_gets_cores_errors(scenario: Any) -> None:
    s = scenario
    psbt = _psbt(s, ["bech32"])
    for params in (["not base64"], ["cHNidP8="], [psbt, True, "ALL|NONE"], [psbt, True, 7], [psbt, "yes"],
                   [psbt, True, None, "no"], [psbt, True, None, True, 1]):
        kind, *_ = same(s, "walletprocesspsbt", *params)
        assert kind == "error", params
    # An input of a wallet transaction whose output index does not exist.
    txid = s["utxo"]["bech32"]["txid"]
    missing = s["core"].rpc("createpsbt", [{"txid": txid, "vout": 7}], [{s["external"]: 1}])
    assert same(s, "walletprocesspsbt", missing)[0] == "error"
    # A sighash type stored in the PSBT and a different one asked for.
    single = s["core"].rpc("walletprocesspsbt", psbt, False, "SINGLE", wallet="wo")["psbt"]
    assert same(s, "walletprocesspsbt", single)[0] == "error"
    assert same(s, "walletprocesspsbt", single, True, "SINGLE")[0] == "ok"
    # A wallet without descriptors finalizes nothing (Core signs through its descriptors).
    for node in (s["core"], s["quill"]):
        node.rpc("createwallet", "blank", True, True)
    signed = _core_signed(s, psbt, ["bech32"])
    c, q = Wallet(s["core"], "blank"), Wallet(s["quill"], "blank")
    assert answer(q, "walletprocesspsbt", signed) == answer(c, "walletprocesspsbt", signed)
    # No such wallet.
    c, q = Wallet(s["core"], "absent"), Wallet(s["quill"], "absent")
    assert answer(q, "walletprocesspsbt", psbt) == answer(c, "walletprocesspsbt", psbt)


def both_nodes(s: dict[str, Any], method: str, *params: Any) -> Any:
    core, quill = s["core"], s["quill"]
    theirs, ours = answer(Wallet(core, "keys"), method, *params), answer(Wallet(quill, "wo"), method, *params)
    if ours != theirs and theirs[0] == ours[0] == "ok":
        decoded = [core.rpc("decodepsbt", r[1]["psbt"]) for r in (ours, theirs)]
        assert decoded[0] == decoded[1], (method, params, json.dumps(decoded, default=str))
    assert ours == theirs, (method, params)
    return theirs


def _ranged(descs: list[str]) -> list[dict[str, Any]]:
    """The descriptors' first children only (Core's default range, 0 to 1000, costs Core seconds)."""
    return [{"desc": d, "range": [0, 2]} for d in descs]


def test_descriptorprocesspsbt_public_descriptors(scenario: Any) -> None:
    s = scenario
    psbt = _psbt(s, ALL_KINDS)
    public = _ranged([s["public"][k] for k in ALL_KINDS])
    for params in ([public], [public, None, False], [public, "ALL", True, False],
                   [[{"desc": s["public"]["wsh"], "range": 3}, s["public"]["bech32"]]]):
        kind, result = both_nodes(s, "descriptorprocesspsbt", psbt, *params)
        assert kind == "ok" and result["complete"] is False
    signed = _core_signed(s, psbt, ALL_KINDS)
    kind, result = both_nodes(s, "descriptorprocesspsbt", signed, [])
    assert kind == "ok" and result["complete"] is True


@pytest.mark.parametrize("kinds", [["bech32", "p2sh-segwit", "legacy", "wsh", "sh"], ["wsh"]], ids=repr)
def test_descriptorprocesspsbt_signs_on_the_device_as_core(scenario: Any, kinds: list[str]) -> None:
    s = scenario
    psbt = _psbt(s, kinds)
    private = _ranged([s["private"][k] for k in kinds])
    for params in ([private], [private, "ALL|ANYONECANPAY", True, False]):
        kind, result = both_nodes(s, "descriptorprocesspsbt", psbt, *params)
        assert kind == "ok"


def test_descriptorprocesspsbt_taproot_signature_is_cores(scenario: Any) -> None:
    s = scenario
    psbt = _psbt(s, ["bech32m", "bech32"])
    private = _ranged([s["private"][k] for k in ("bech32m", "bech32")])
    for params in ([private], [private, None, True, False], [private, "SINGLE|ANYONECANPAY"]):
        kind, result = both_nodes(s, "descriptorprocesspsbt", psbt, *params)
        assert kind == "ok"
    ours = s["quill"].rpc("descriptorprocesspsbt", psbt, private)
    assert ours["complete"] is True
    accepted = s["core"].rpc("testmempoolaccept", [ours["hex"]], 0)[0]
    assert accepted["allowed"], accepted
    unfinalized = s["quill"].rpc("descriptorprocesspsbt", psbt, private, None, True, False)
    decoded = s["core"].rpc("decodepsbt", unfinalized["psbt"])
    assert len(decoded["inputs"][0]["taproot_key_path_sig"]) == 128
    assert s["core"].rpc("finalizepsbt", unfinalized["psbt"])["hex"] == ours["hex"]


def test_psbtbumpfee_as_core(scenario: Any) -> None:
    s = scenario
    core = s["core"]
    c, q = s["c"], s["q"]
    # The watch-only wallets' payment, signed by the key holder and broadcast.
    funded = c.rpc("walletcreatefundedpsbt", [s["utxo"]["bump"]], [{s["external"]: "0.2"}], 0,
                   {"fee_rate": 2, "add_inputs": False, "changePosition": 1})
    signed = core.rpc("descriptorprocesspsbt", funded["psbt"], _ranged([s["private"]["bech32"]]))
    txid = core.rpc("sendrawtransaction", signed["hex"])
    sync(core, s["quill"])
    tip = core.rpc("getblockcount")
    outcomes = []
    for options in ({"fee_rate": 5}, {"fee_rate": "7.5", "psbt_version": 0}, None, {"conf_target": 6},
                    {"fee_rate": 5, "original_change_index": 0}, {"fee_rate": 5, "replaceable": False},
                    {"fee_rate": 5, "outputs": [{s["external"]: "0.1"}]},
                    {"fee_rate": 6, "outputs": [{s["external"]: "0.1"}]},  # the next change address
                    {"fee_rate": 1}, {"fee_rate": 100000}, {"fee_rate": 5, "original_change_index": 2},
                    {"fee_rate": 5, "conf_target": 2}, {"fee_rate": 5, "estimate_mode": "economical"},
                    {"estimate_mode": "fast"}, {"conf_target": 0}, {"fee_rate": 5, "outputs": []},
                    {"fee_rate": 5, "outputs": [{s["external"]: 1}], "original_change_index": 0},
                    {"fee_rate": 5, "psbt_version": 1}, {"fee_rate": 5, "unknown": 1}, {"replaceable": 1}):
        params = [txid] if options is None else [txid, options]
        theirs, ours = answer(c, "psbtbumpfee", *params), answer(q, "psbtbumpfee", *params)
        assert normalized_bump(core, ours, tip) == normalized_bump(core, theirs, tip), options
        outcomes.append(theirs[0])
    assert outcomes[:8] == ["ok"] * 8 and set(outcomes[8:]) == {"error"}
    for params in (["00" * 32], ["zz"], [signed["hex"][:64]]):
        assert answer(q, "psbtbumpfee", *params) == answer(c, "psbtbumpfee", *params)
    assert answer(q, "bumpfee", txid) == answer(c, "bumpfee", txid)
    # A payment from a coin still unconfirmed: the bump also pays what its parent lacks, as Core's.
    address = c.rpc("getnewaddress", "", "bech32")
    assert q.rpc("getnewaddress", "", "bech32") == address
    parent = _send(s["keys"], address, "0.3")
    vout = [o["n"] for o in core.rpc("getrawtransaction", parent, True)["vout"]
            if o["scriptPubKey"].get("address") == address]
    core.rpc("syncwithvalidationinterfacequeue")
    funded = c.rpc("walletcreatefundedpsbt", [{"txid": parent, "vout": vout[0]}], [{s["external"]: "0.1"}], 0,
                   {"fee_rate": 2, "add_inputs": False, "include_unsafe": True})
    child = core.rpc("sendrawtransaction", core.rpc("descriptorprocesspsbt", funded["psbt"],
                                                    _ranged([s["private"]["bech32"]]))["hex"])
    sync(core, s["quill"])
    tip = core.rpc("getblockcount")
    for options in ({"fee_rate": 5}, {"fee_rate": 40}, {"fee_rate": "2.1"}, None):
        params = [child] if options is None else [child, options]
        theirs, ours = answer(c, "psbtbumpfee", *params), answer(q, "psbtbumpfee", *params)
        assert theirs[0] == "ok" and normalized_bump(core, ours, tip) == normalized_bump(core, theirs, tip), options
    # Once mined, its coin is spent: Core says so first.
    core.rpc("generatetoaddress", 1, s["miner"])
    sync(core, s["quill"])
    assert answer(q, "psbtbumpfee", txid, {"fee_rate": 5}) == answer(c, "psbtbumpfee", txid, {"fee_rate": 5})


def test_descriptorprocesspsbt_bad_input_and_no_key_in_errors_or_log(scenario: Any) -> None:
    s = scenario
    psbt = _psbt(s, ["bech32", "wsh"])
    private = s["private"]["bech32"]
    xprv = _key(private).split("]")[-1].split("/")[0]
    assert xprv.startswith("tprv")
    hardened_public = s["public"]["bech32"].split("#")[0].replace("/0/*", "/0h/*")
    few = {"desc": private, "range": 2}   # Core's default range costs it a second per call
    for params in (["junk", [few]], [psbt, "x"], [psbt, [1]], [psbt, [{"range": 2}]], [psbt, ["wpkh(junk)"]],
                   [psbt, [{"desc": private, "range": -1}]], [psbt, [few], "ALL|NONE"],
                   [psbt, [{"desc": private, "range": [5, 1]}]], [psbt, [hardened_public]]):
        theirs, ours = both_nodes_answers(s, "descriptorprocesspsbt", *params)
        assert theirs[0] == "error" and ours == theirs, params
    # A sighash stored in the PSBT and another asked for; nothing signed.
    single = s["core"].rpc("walletprocesspsbt", psbt, False, "SINGLE", wallet="wo")["psbt"]
    theirs, ours = both_nodes_answers(s, "descriptorprocesspsbt", single, [few])
    assert theirs[0] == "error" and ours == theirs
    # A private key in a descriptor that fails to derive is never quoted back (Core quotes it).
    mixed = f"wsh(multi(1,{_key(private)},{_key(hardened_public)}))"
    ours = answer(Wallet(s["quill"], "wo"), "descriptorprocesspsbt", psbt, [{"desc": mixed, "range": 2}])
    assert ours[0] == "error" and ours[1] == -5 and xprv not in ours[2] and "Cannot derive" in ours[2]
    assert xprv not in s["quill"].debug_log()


def both_nodes_answers(s: dict[str, Any], method: str, *params: Any) -> tuple[Any, Any]:
    return answer(Wallet(s["core"], "keys"), method, *params), answer(Wallet(s["quill"], "wo"), method, *params)
