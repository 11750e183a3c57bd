"""Bad input to the wallet RPCs through a real quilld: Core's codes and messages, and
nothing stored (wallet tx count, descriptors, chain tip unchanged)."""
import pytest

from quill.tx.descriptor import add_checksum
from tests.kit.rpc_daemon import RPCFailure
from tests.wallet_e2e.e2ekit import COIN, Net, multiset

TXID = "ff" * 32


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Net("built-in", tmp_path_factory)
    yield n
    n.close()


@pytest.fixture(scope="module")
def funded(node):
    w = node.wallet("bad")
    w.funded(COIN)
    return w


def snapshot(w):
    """What a failed call must leave alone."""
    return (multiset(w.lsb()["transactions"]), w.rpc("listdescriptors"), w.net.node.rpc("getbestblockhash"),
            w.net.node.rpc("getrawmempool"), w.net.node.rpc("listwallets"))


GETTRANSACTION = [
    pytest.param([], -1, None, id="no-txid"),
    pytest.param([1], -3, None, id="txid-number"),
    pytest.param(["ab"], -8, "txid must be of length 64 (not 2, for 'ab')", id="txid-short"),
    pytest.param(["zz" * 32], -8, f"txid must be hexadecimal string (not '{'zz' * 32}')", id="txid-not-hex"),
    pytest.param([TXID], -5, "Invalid or non-wallet transaction id", id="txid-unknown"),
    pytest.param([TXID, "yes"], -3, None, id="include_watchonly-string"),
    pytest.param([TXID, True, 1], -3, None, id="verbose-number"),
    pytest.param([TXID, True, True, 4], -1, None, id="too-many"),
]


@pytest.mark.parametrize("params,code,message", GETTRANSACTION)
def test_gettransaction_errors(funded, params, code, message):
    before = snapshot(funded)
    got = funded.error("gettransaction", *params)
    assert got[0] == code and (message is None or got[1] == message)
    assert snapshot(funded) == before


LISTSINCEBLOCK = [
    pytest.param([1], -3, None, id="blockhash-number"),
    pytest.param(["invalid-hex"], -8, "blockhash must be of length 64 (not 11, for 'invalid-hex')",
                 id="blockhash-short"),
    pytest.param(["Z" + "0" * 63], -8, "blockhash must be hexadecimal string (not 'Z" + "0" * 63 + "')",
                 id="blockhash-not-hex"),
    pytest.param([TXID], -5, "Block not found", id="blockhash-unknown"),
    pytest.param(["0" * 64, 0], -5, "Block not found", id="unknown-before-target"),
    pytest.param(["TIP", 0], -8, "Invalid parameter", id="target-zero"),
    pytest.param(["TIP", -5], -8, "Invalid parameter", id="target-negative"),
    pytest.param(["TIP", "1"], -3, None, id="target-string"),
    pytest.param([None, 1, None, "no"], -3, None, id="include_removed-string"),
    pytest.param([None, 1, None, True, 1], -3, None, id="include_change-number"),
    pytest.param([None, 1, None, True, False, "*"], -11, "Invalid label name", id="label-star"),
    pytest.param([None, 1, None, True, False, 5], -3, None, id="label-number"),
    pytest.param([None, 1, None, True, False, "", 7], -1, None, id="too-many"),
]


@pytest.mark.parametrize("params,code,message", LISTSINCEBLOCK)
def test_listsinceblock_errors(funded, params, code, message):
    tip = funded.net.node.rpc("getbestblockhash")
    params = [tip if p == "TIP" else p for p in params]
    before = snapshot(funded)
    got = funded.error("listsinceblock", *params)
    assert got[0] == code and (message is None or got[1] == message)
    assert snapshot(funded) == before


def test_wallet_routing_errors(node, funded):
    d = node.node
    with pytest.raises(RPCFailure) as e:
        d.rpc("gettransaction", TXID, path="/wallet/nosuchwallet")
    assert (e.value.code, e.value.message) == (-18, "Requested wallet does not exist or is not loaded")
    node.wallet("second")
    try:
        for method, params in (("gettransaction", [TXID]), ("listsinceblock", []), ("getbalances", [])):
            with pytest.raises(RPCFailure) as e:
                d.rpc(method, *params)
            assert (e.value.code, e.value.message) == (
                -19, "Wallet file not specified (must request wallet RPC through /wallet/<filename> uri-path).")
    finally:
        d.rpc("unloadwallet", "second")
    d.rpc("unloadwallet", "bad")
    try:
        with pytest.raises(RPCFailure) as e:
            d.rpc("listsinceblock")
        assert (e.value.code, e.value.message) == (-18, "No wallet is loaded. Load a wallet using loadwallet or "
                                                        "create a new one with createwallet. (Note: A default "
                                                        "wallet is no longer automatically created)")
    finally:
        d.rpc("loadwallet", "bad")


def test_importdescriptors_per_request_errors(funded):
    """Each malformed request gets its own error object; the good one in the same call is
    stored, the bad ones leave nothing."""
    tpub = funded.keys.tpub
    good = add_checksum(f"pkh({tpub}/7/*)")
    before = funded.rpc("listdescriptors")["descriptors"]
    txs_before = multiset(funded.lsb()["transactions"])
    requests = [
        {"desc": f"wpkh({tpub}/5/*)", "timestamp": "now"},
        {"desc": f"wpkh({tpub}/5/*)#00000000", "timestamp": "now"},
        {"desc": add_checksum(f"wpkh({tpub}/0h/*)"), "timestamp": "now"},
        {"desc": add_checksum("wpkh(notakey)"), "timestamp": "now"},
        {"desc": add_checksum(f"wpkh({tpub}/5/*)"), "timestamp": "now", "label": "x"},
        {"desc": add_checksum(f"wpkh({tpub}/5/*)"), "timestamp": "now", "range": [5, 1]},
        {"desc": add_checksum(f"wpkh({tpub}/5)"), "timestamp": "now", "active": True},
        {"timestamp": "now"},
        {"desc": good, "timestamp": "now", "range": [0, 3]},
    ]
    res = funded.rpc("importdescriptors", requests)
    assert [r["success"] for r in res] == [False] * 8 + [True]
    errors = [r["error"] for r in res[:8]]
    assert errors[0] == {"code": -5, "message": "Missing checksum"}
    assert errors[1]["code"] == -5 and errors[1]["message"].startswith(
        "Provided checksum '00000000' does not match computed checksum")
    assert errors[2] == {"code": -4, "message": "Cannot expand descriptor. Probably because of hardened "
                                                "derivations without private keys provided"}
    assert errors[3]["code"] == -5
    assert errors[4] == {"code": -8, "message": "Ranged descriptors should not have a label"}
    assert errors[5] == {"code": -8, "message": "Range specified as [begin,end] must not have begin after end"}
    assert errors[6] == {"code": -8, "message": "Active descriptors must be ranged"}
    assert errors[7] == {"code": -8, "message": "Descriptor not found."}
    after = funded.rpc("listdescriptors")["descriptors"]
    assert [d["desc"] for d in after if d not in before] == [good]
    assert multiset(funded.lsb()["transactions"]) == txs_before
    # A request list that is not an array of objects fails as a whole, storing nothing.
    assert funded.error("importdescriptors", [{"desc": good}])[0] == -3
    assert funded.error("importdescriptors", ["x"])[0] == -3
    assert funded.error("importdescriptors", "x")[0] == -3
    assert funded.rpc("listdescriptors")["descriptors"] == after


@pytest.mark.parametrize("data,code,message", [
    pytest.param("00", -22, "Block decode failed", id="one-byte"),
    pytest.param("zz", -22, "Block decode failed", id="not-hex"),
    pytest.param("00" * 80, -22, "Block decode failed", id="header-only"),
])
def test_submitblock_garbage(funded, data, code, message):
    before = snapshot(funded)
    got = funded.net.node.rpc
    with pytest.raises(RPCFailure) as e:
        got("submitblock", data)
    assert (e.value.code, e.value.message) == (code, message)
    assert snapshot(funded) == before


def test_submitblock_invalid_block_stores_nothing(funded):
    """A well-formed block that breaks a rule: Core's reason as the result, tip and wallet unchanged."""
    d = funded.net.node
    template = d.rpc("generateblock", funded.new_address()[0], [], False)["hex"]
    before = snapshot(funded)
    header_changed = bytearray.fromhex(template)
    header_changed[72:76] = (0x1d00ffff).to_bytes(4, "little")  # mainnet's target: far above this PoW
    assert d.rpc("submitblock", header_changed.hex()) == "high-hash"
    tx_changed = bytearray.fromhex(template)
    tx_changed[-1] ^= 1                                # the coinbase's locktime: merkle root mismatch
    assert d.rpc("submitblock", tx_changed.hex()) == "bad-txnmrklroot"
    assert snapshot(funded) == before
