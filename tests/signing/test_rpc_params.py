"""signrawtransactionwithkey through a real quilld with an emulated device: Core's
golden cases (core-rpc-golden.json) and every parameter error of core-rpc.md §4.2-§4.5."""
import json

import pytest

from tests.kit.rpc_daemon import RPCFailure
from tests.kit.toolchains import reference_location, reference_path
from tests.signing.signkit import KeyPair, p2pkh, p2sh, p2wpkh, p2wsh, prevtx, unsigned_tx

GOLDEN = "core-rpc-golden.json"


def _golden_cases():
    path = reference_location() / GOLDEN
    if not path.exists():
        return []  # test_golden_cases_present then skips, or fails in CI
    cases = json.loads(path.read_text())["cases"]
    return [c for c in cases if c["method"] == "signrawtransactionwithkey"]


def _path(value, path):
    for part in path.replace("]", "").replace("[", ".").split("."):
        if part == "length":
            value = len(value)
        elif part.isdigit():
            value = value[int(part)]
        else:
            value = value[part]
    return value


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda c: c["id"])
def test_golden_case_through_rpc(case, node, main_node):
    daemon = main_node if case["network"] == "main" else node
    assert daemon.chain == case["network"]
    expected = case.get("expected", {})
    if "error" in expected:
        with pytest.raises(RPCFailure) as e:
            daemon.rpc("signrawtransactionwithkey", *case["params"])
        assert e.value.error == expected["error"]
        return
    result = daemon.rpc("signrawtransactionwithkey", *case["params"])
    if case["match"] == "exact":
        assert result == expected["result"]
        # key order too: hex, complete (Core's UniValue insertion order)
        assert list(result) == list(expected["result"])
    for check in case.get("checks", []) + case.get("derived_checks", []):
        assert _path(result, check["path"]) == check["equals"], check


def test_golden_cases_present():
    reference_path(GOLDEN)
    assert len(_golden_cases()) >= 10


K = KeyPair(0x5EC12E7)
TX = unsigned_tx(1, 1, seed=7)
TX_HEX = TX.hex()
SPK = p2pkh(K.pubkey)


def _error(node, *params):
    with pytest.raises(RPCFailure) as e:
        node.rpc("signrawtransactionwithkey", *params)
    return e.value.code, e.value.message


def _entry(**fields):
    base = prevtx(TX, 0, SPK)
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


PARAM_ERRORS = [
    # (params after hexstring, code, message)
    (([1],), -3, "JSON value of type number is not of expected type string"),
    (([K.wif, "notakey"],), -5, "Invalid private key"),
    (([KeyPair(0x5EC12E7, chain="main").wif],), -5, "Invalid private key"),
    (([K.wif], [5]), -22, 'expected object with {"txid\'","vout","scriptPubKey"}'),
    (([K.wif], [_entry(txid=...)]), -3, "Missing txid"),
    (([K.wif], [_entry(scriptPubKey=None, txid=None)]), -3, "Missing scriptPubKey"),
    (([K.wif], [_entry(vout="0", txid=5)]), -3,
     "JSON value of type number for field txid is not of expected type string"),
    (([K.wif], [_entry(vout="0")]), -3,
     "JSON value of type string for field vout is not of expected type number"),
    (([K.wif], [_entry(txid="ab")]), -8, "txid must be of length 64 (not 2, for 'ab')"),
    (([K.wif], [_entry(txid="zz" * 32)]), -8, f"txid must be hexadecimal string (not '{'zz' * 32}')"),
    (([K.wif], [_entry(vout=1.5)]), -1, "JSON integer out of range"),
    (([K.wif], [_entry(vout=2147483648)]), -1, "JSON integer out of range"),
    (([K.wif], [_entry(vout=-1)]), -22, "vout cannot be negative"),
    (([K.wif], [_entry(scriptPubKey="")]), -8, "scriptPubKey must be hexadecimal string (not '')"),
    (([K.wif], [_entry(scriptPubKey="0g")]), -8, "scriptPubKey must be hexadecimal string (not '0g')"),
    (([K.wif], [_entry(amount=None)]), -3, "Amount is not a number or string"),
    (([K.wif], [_entry(amount="1.000000001")]), -3, "Invalid amount"),
    (([K.wif], [_entry(amount=-1)]), -3, "Amount out of range"),
    (([K.wif], [_entry(scriptPubKey=p2sh(b"\x51").hex())]), -8, "Missing redeemScript/witnessScript"),
    (([K.wif], [_entry(scriptPubKey=p2sh(b"\x51").hex(), redeemScript=5)]), -3,
     "JSON value of type number for field redeemScript is not of expected type string"),
    (([K.wif], [_entry(scriptPubKey=p2sh(b"\x51").hex(), redeemScript="zz")]), -8,
     "redeemScript must be hexadecimal string (not 'zz')"),
    (([K.wif], [_entry(scriptPubKey=p2wsh(b"\x51").hex(), witnessScript="5")]), -8,
     "witnessScript must be hexadecimal string (not '5')"),
    (([K.wif], [_entry(scriptPubKey=p2sh(b"\x52").hex(), redeemScript="51")]), -8,
     "redeemScript/witnessScript does not match scriptPubKey"),
    (([K.wif], [_entry(scriptPubKey=p2wsh(b"\x52").hex(), witnessScript="51")]), -8,
     "redeemScript/witnessScript does not match scriptPubKey"),
    (([K.wif], [_entry(scriptPubKey=p2sh(p2wsh(b"\x51")).hex(), witnessScript="51", redeemScript="52")]),
     -8, "redeemScript does not correspond to witnessScript"),
    (([K.wif], [prevtx(TX, 0, SPK), prevtx(TX, 0, p2wpkh(K.pubkey))]), -22,
     "Previous output scriptPubKey mismatch:\n"
     f"OP_DUP OP_HASH160 {SPK[3:23].hex()} OP_EQUALVERIFY OP_CHECKSIG\nvs:\n0 {SPK[3:23].hex()}"),
    (([K.wif], None, ""), -8, "'' is not a valid sighash parameter."),
    (([K.wif], None, "ALL|anyonecanpay"), -8, "'ALL|anyonecanpay' is not a valid sighash parameter."),
]


@pytest.mark.parametrize("params,code,message", PARAM_ERRORS, ids=[m for _, _, m in PARAM_ERRORS])
def test_parameter_errors_as_core(node, params, code, message):
    assert _error(node, TX_HEX, *params) == (code, message)


def test_errors_come_in_core_order(node):
    # decode before keys, keys before prevtxs, prevtxs before the sighash type
    assert _error(node, "00", ["bad"], [5], "bad") == \
        (-22, "TX decode failed. Make sure the tx has at least one input.")
    assert _error(node, TX_HEX, ["bad"], [5], "bad") == (-5, "Invalid private key")
    assert _error(node, TX_HEX, [K.wif], [5], "bad")[0] == -22
    assert _error(node, TX_HEX, [K.wif], [], "bad") == (-8, "'bad' is not a valid sighash parameter.")


def test_hex_is_decoded_witness_only(node):
    # a 0-input legacy-only reading is refused: Core decodes with try_no_witness=false
    legacy_only = "01000000000100000000000000000000000000"
    assert _error(node, legacy_only, [])[0] == -22
    assert _error(node, "zz", [])[0] == -22
    assert _error(node, "", [])[0] == -22


def test_argument_types_checked_before_the_handler(node):
    code, message = _error(node, 5, "x")
    assert code == -3 and message.startswith("Wrong type passed:\n")
    assert '"Position 1 (hexstring)": "JSON value of type number is not of expected type string"' in message
    assert '"Position 2 (privkeys)": "JSON value of type string is not of expected type array"' in message


def test_keys_for_the_wrong_network(node, main_node):
    mainnet = KeyPair(0x5EC12E7, chain="main")
    assert _error(node, TX_HEX, [mainnet.wif], [prevtx(TX, 0, SPK)]) == (-5, "Invalid private key")
    assert _error(main_node, TX_HEX, [K.wif], [prevtx(TX, 0, SPK)]) == (-5, "Invalid private key")
    # the same secret with the node's prefix signs
    assert main_node.rpc("signrawtransactionwithkey", TX_HEX, [mainnet.wif],
                         [prevtx(TX, 0, SPK)])["complete"] is True


def test_duplicate_prevtxs_entry_with_the_same_script_overwrites_the_amount(node):
    tx = unsigned_tx(1, 1, seed=8)
    spk = p2wpkh(K.pubkey)
    first = node.rpc("signrawtransactionwithkey", tx.hex(), [K.wif],
                     [prevtx(tx, 0, spk, amount=1000), prevtx(tx, 0, spk, amount=5000)])
    only = node.rpc("signrawtransactionwithkey", tx.hex(), [K.wif], [prevtx(tx, 0, spk, amount=5000)])
    assert first == only and first["complete"] is True


def test_prevtxs_for_outpoints_that_are_not_inputs_are_accepted(node):
    other = unsigned_tx(1, 1, seed=99)
    result = node.rpc("signrawtransactionwithkey", TX_HEX, [K.wif],
                      [prevtx(TX, 0, SPK), prevtx(other, 0, p2wpkh(K.pubkey))])
    assert result["complete"] is True
