"""decoderawtransaction / decodescript through the real HTTP JSON-RPC server and real clients."""
import json
from decimal import Decimal

import pytest
from bitcoinrpc.authproxy import JSONRPCException

from quill.rpc import univalue
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.kit.txcases import assert_matches_golden, chain_of, golden_case, golden_case_ids
from tests.kit.vectors import vector_path

MULTISIG_TX = "txcreatemultisig1"


def _server_for(servers, case):
    return servers["regtest" if chain_of(case) == "regtest" else "main"]


def _call(server, method, params):
    """-> (result or None, error object or None, raw reply text), over a keep-alive connection."""
    client = server.connection()
    try:
        status, text = client.call_raw(method, params)
    finally:
        client.close()
    reply = univalue.loads(text)
    assert list(reply) == ["result", "error", "id"]
    assert (status == 200) == (reply["error"] is None)
    return reply["result"], reply["error"], text


class _Err:
    def __init__(self, obj):
        self.code, self.message = obj["code"], obj["message"]


@pytest.mark.parametrize("case_id", golden_case_ids())
def test_golden_case_over_http(servers, case_id):
    case = golden_case(case_id)
    result, error, text = _call(_server_for(servers, case), case["method"], list(case["params"]))
    assert_matches_golden(case, result, _Err(error) if error else None)
    if case.get("expected_compact"):
        # The reply carries Core's compact result text verbatim.
        assert text == '{"result":' + case["expected_compact"] + ',"error":null,"id":1}\n'


def test_authserviceproxy_client(servers):
    hexstring = vector_path(f"core-util/{MULTISIG_TX}.hex").read_text().strip()
    expected = json.loads(vector_path(f"core-util/{MULTISIG_TX}.json").read_text(), parse_float=Decimal)
    result = servers["main"].proxy().decoderawtransaction(hexstring)
    expected.pop("hex")
    assert result == expected
    assert result["vout"][0]["value"] == Decimal("1.00000000")


def test_type_errors_come_from_declared_params(servers):
    _, error, _ = _call(servers["main"], "decoderawtransaction", [123, "x"])
    assert error == {"code": -3, "message": (
        "Wrong type passed:\n{\n"
        '    "Position 1 (hexstring)": "JSON value of type number is not of expected type string",\n'
        '    "Position 2 (iswitness)": "JSON value of type string is not of expected type bool"\n}')}
    _, error, _ = _call(servers["main"], "decoderawtransaction", [])
    assert error["code"] == -1 and error["message"].startswith('decoderawtransaction "hexstring" ( iswitness )')
    _, error, _ = _call(servers["main"], "decodescript", ["zz"])
    assert error == {"code": -8, "message": "argument must be hexadecimal string (not 'zz')"}


def test_decodescript_empty_and_null_iswitness(servers):
    result, error, _ = _call(servers["regtest"], "decodescript", [""])
    assert error is None and result["asm"] == "" and result["type"] == "nonstandard"
    result, error, _ = _call(servers["main"], "decoderawtransaction", ["01000000000000000000", None])
    assert error is None and result["version"] == 1
    for bad in ("", "0", "zz", "01000000000000000000 ", "0100000000000000000000"):
        _, error, _ = _call(servers["main"], "decoderawtransaction", [bad])
        assert error == {"code": -22, "message": "TX decode failed"}, bad


def test_deprecatedrpc_addresses_adds_v22_fields(servers):
    hexstring = vector_path(f"core-util/{MULTISIG_TX}.hex").read_text().strip()
    plain, _, _ = _call(servers["main"], "decoderawtransaction", [hexstring])
    dep, _, _ = _call(servers["deprecated"], "decoderawtransaction", [hexstring])
    spk = dep["vout"][0]["scriptPubKey"]
    assert list(spk) == ["asm", "desc", "hex", "type", "addresses", "reqSigs"]
    assert spk["reqSigs"] == 2 and len(spk["addresses"]) == 3
    assert "addresses" not in plain["vout"][0]["scriptPubKey"]


def test_keep_alive_connection_serves_many_requests(servers):
    client = servers["main"].connection()
    try:
        for _ in range(50):
            status, text = client.call_raw("decoderawtransaction", ["01000000000000000000"])
            assert status == 200 and '"txid":"d21633ba23f70118185227be58a63527675641ad37967e2aa461559f577aec43"' in text
    finally:
        client.close()


def test_real_daemon_with_deprecatedrpc(tmp_path):
    """A quilld subprocess started with -deprecatedrpc=addresses (skips until main.py registers the handlers)."""
    hexstring = vector_path(f"core-util/{MULTISIG_TX}.hex").read_text().strip()
    with QuillDaemon(tmp_path, "-deprecatedrpc=addresses", chain="main") as d:
        try:
            result = d.rpc("decoderawtransaction", hexstring)
        except RPCFailure as e:
            if e.code == -32601:
                pytest.skip("quilld does not register quill.handlers.rawtransactions yet "
                            "(quill.handlers.MODULES)")
            raise
        spk = result["vout"][0]["scriptPubKey"]
        assert list(spk) == ["asm", "desc", "hex", "type", "addresses", "reqSigs"]
        with pytest.raises(JSONRPCException) as exc:
            d.proxy().decoderawtransaction("00")
        assert exc.value.error["code"] == -22
