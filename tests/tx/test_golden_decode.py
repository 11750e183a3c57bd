"""Core-produced decodes: the bitcoin-tx golden files, the golden RPC cases and rpc_decodescript.json."""
import glob
import os

import pytest

from quill.handlers import rawtransactions
from quill.rpc import univalue
from quill.rpc.errors import RPCError
from quill.tx.decode import decode_hex_tx, decode_script_univ, tx_to_univ
from tests.kit.txcases import assert_matches_golden, chain_of, golden_case, golden_case_ids, make_ctx
from tests.kit.vectors import load_json, vector_path, vectors_dir

UTIL_JSON = ["blanktxv1", "blanktxv2", "tt-delin1-out", "tt-delout1-out", "tt-locktime317000-out",
             "txcreate1", "txcreate2", "txcreatedata1", "txcreatedata2", "txcreatedata_seq0",
             "txcreatedata_seq1", "txcreatemultisig1", "txcreatemultisig2", "txcreatemultisig3",
             "txcreatemultisig4", "txcreatemultisig5", "txcreateoutpubkey1", "txcreateoutpubkey2",
             "txcreateoutpubkey3", "txcreatescript1", "txcreatescript2", "txcreatescript3",
             "txcreatescript4", "txcreatesignv1"]


def test_every_util_golden_json_is_listed():
    names = {os.path.basename(p)[:-5] for p in glob.glob(str(vectors_dir() / "core-util" / "*.json"))}
    names.discard("bitcoin-util-test")
    assert names == set(UTIL_JSON)


@pytest.mark.parametrize("name", UTIL_JSON)
def test_util_golden_file_byte_for_byte(name):
    path = vector_path(f"core-util/{name}.json")
    text = path.read_text(encoding="utf-8")
    golden = univalue.loads(text)
    result = tx_to_univ(decode_hex_tx(golden["hex"]), "main")
    expected = {k: v for k, v in golden.items() if k != "hex"}
    # Same keys in the same order, same values, same amount text.
    assert univalue.dumps(result) == univalue.dumps(expected)
    assert list(result) == list(expected)
    # bitcoin-tx prints TxToUniv(include_hex=true) with write(4): reproduce the file exactly.
    assert univalue.dumps(dict(result, hex=golden["hex"]), indent=4) + "\n" == text
    assert univalue.dumps(tx_to_univ(decode_hex_tx(golden["hex"]), "main", include_hex=True),
                          indent=4) + "\n" == text


_HANDLERS = {m.name: m for m in rawtransactions.METHODS}


@pytest.mark.parametrize("case_id", golden_case_ids())
def test_golden_rpc_case(case_id):
    case = golden_case(case_id)
    method = _HANDLERS[case["method"]]
    params = list(case["params"])
    args = params + [None] * (len(method.params) - len(params))
    try:
        result, error = method.handler(make_ctx(chain_of(case)), args), None
    except RPCError as e:
        result, error = None, e
    assert_matches_golden(case, result, error)


def test_ambiguous_coinbase_default_equals_witness_reading():
    case = golden_case("decoderawtransaction/ambiguous-coinbase-default")
    handler = _HANDLERS["decoderawtransaction"].handler
    hexstring = case["params"][0]
    default = handler(make_ctx(), [hexstring, None])
    assert univalue.dumps(default) == univalue.dumps(handler(make_ctx(), [hexstring, True]))
    assert default["vin"][0]["txinwitness"] == ["00" * 32]


def test_decodescript_functional_vectors():
    cases = load_json("core-functional/rpc_decodescript.json")
    assert len(cases) == 10
    for script_hex, expected in cases:
        result = decode_script_univ(bytes.fromhex(script_hex), "regtest")
        assert result == expected, script_hex
        # Core's ScriptToUniv pushes asm, desc, address, type; then p2sh, segwit.
        order = [k for k in ("asm", "desc", "address", "type", "p2sh", "segwit") if k in expected]
        assert list(result) == order
        if "segwit" in expected:
            assert list(result["segwit"]) == list(expected["segwit"])
