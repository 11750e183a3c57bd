"""The streaming signing session: Core-made signatures reproduced through it,
the BIP341 key-path vectors streamed, and bad sessions refused and wiped."""
import io

from quillfw.crypto import ecdsa
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import hash160
from quillfw.sighash.legacy import ONE
from quillfw.sighash.legacy import sighash_tx as legacy_sighash_tx
from quillfw.sighash.txstream import TxReader, parse_tx
from quillfw.signing.session import Session, SessionError
from tests.firmware import fwtest

SECRET_1 = bytes(31) + b"\x01"


def _p2pkh(h):
    return b"\x76\xa9\x14" + h + b"\x88\xac"


def _read_hex(rel):
    with open(fwtest.vector_path(rel)) as f:
        return bytes.fromhex(f.read().strip())


def _first_push(script):
    return script[1:1 + script[0]]


def _zero_output_tx(rel):
    """bitcoin-tx signed before outaddr=: the tx as signed has no outputs."""
    r = TxReader(io.BytesIO(_read_hex(rel)))
    version, n_in = r.read_header()
    txid, vout, script_sig, seq = r.read_input()
    for _ in range(r.read_output_count()):
        r.read_output()
    witness = r.read_witness() if r.has_witness else None
    return version, (txid, vout, seq), script_sig, witness, r.read_locktime()


def _stream(s, inputs, outputs):
    tokens_in = [s.add_input(*i) for i in inputs]
    tokens_out = [s.add_output(*o) for o in outputs]
    return tokens_in, tokens_out


def _legacy_core_case(rel):
    version, (txid, vout, seq), script_sig, _, locktime = _zero_output_tx(rel)
    spk = _p2pkh(bytes.fromhex("91b24bf9f5288532960ac687abb035127b1d28a5"))
    s = Session()
    s.begin(version, locktime, 1, 0, ["legacy"])
    k = s.add_key(SECRET_1, compressed=False)
    inputs = [(txid, vout, seq, 0, spk)]
    _stream(s, inputs, [])
    s.begin_legacy_pass(0, spk, 1, k)
    _stream(s, inputs, [])
    sig = s.finish_legacy_pass()
    s.end()
    return sig, _first_push(script_sig)


def test_core_txcreatesignv1_legacy_p2pkh_uncompressed_needs_grinding():
    sig, expected = _legacy_core_case("core-util/txcreatesignv1.hex")
    assert sig == expected


def test_core_txcreatesignv2_legacy_p2pkh_version_2():
    sig, expected = _legacy_core_case("core-util/txcreatesignv2.hex")
    assert sig == expected


def test_core_txcreatesignsegwit1_p2wpkh():
    version, (txid, vout, seq), _, witness, locktime = _zero_output_tx(
        "core-util/txcreatesignsegwit1.hex")
    h = bytes.fromhex("751e76e8199196d454941c45d1b3a323f1433bd6")
    s = Session()
    s.begin(version, locktime, 1, 0, ["segwit_v0"])
    k = s.add_key(SECRET_1)
    txin = (txid, vout, seq, 0, b"\x00\x14" + h)
    (token,), _ = _stream(s, [txin], [])
    assert s.sign_segwit_v0(0, txin, token, _p2pkh(h), 1, k) == witness[0]


def _bip341():
    case = fwtest.load_json("core/bip341_wallet_vectors.json")["keyPathSpending"][0]
    version, inputs, outputs, locktime = parse_tx(bytes.fromhex(case["given"]["rawUnsignedTx"]))
    txins = [inputs[i] + (u["amountSats"], bytes.fromhex(u["scriptPubKey"]))
             for i, u in enumerate(case["given"]["utxosSpent"])]
    return case, version, txins, outputs, locktime


def test_bip341_key_path_vectors_through_a_streamed_session():
    case, version, txins, outputs, locktime = _bip341()
    s = Session()
    s.begin(version, locktime, len(txins), len(outputs), ["taproot"])
    tokens_in, tokens_out = _stream(s, txins, outputs)
    for item in case["inputSpending"]:
        g = item["given"]
        i, hash_type = g["txinIndex"], g["hashType"]
        k = s.add_key(bytes.fromhex(g["internalPrivkey"]))
        root = None if g["merkleRoot"] is None else bytes.fromhex(g["merkleRoot"])
        single = i < len(outputs)
        sig = s.sign_taproot(i, hash_type, k, merkle_root=root,
                             txin=txins[i], txin_token=tokens_in[i],
                             txout=outputs[i] if single else None,
                             txout_token=tokens_out[i] if single else None)
        assert [sig.hex()] == item["expected"]["witness"], i
    s.end()


def test_bip143_native_p2wpkh_example_through_a_session():
    ex = fwtest.load_json("bips/bip143_examples.json")["examples"][0]
    version, inputs, outputs, locktime = parse_tx(bytes.fromhex(ex["unsigned_tx"]))
    txins = [inputs[n] + (inp["amount_sat"], bytes.fromhex(inp["scriptPubKey"]))
             for n, inp in enumerate(ex["inputs"])]
    inp = ex["inputs"][1]
    s = Session()
    s.begin(version, locktime, 2, 2, ["legacy", "segwit_v0"])
    k = s.add_key(bytes.fromhex(inp["private_key"]))
    tokens, _ = _stream(s, txins, outputs)
    sig = s.sign_segwit_v0(1, txins[1], tokens[1], _p2pkh(txins[1][4][2:]), 1, k)
    assert sig.hex() == inp["signatures"][0]["signature"]


# --- bad sessions: a clear error, and everything wiped ----------------------

def _tx(n_in=2, n_out=2):
    spk = _p2pkh(hash160(ec.pubkey_from_secret(SECRET_1)))
    txins = [(bytes([i + 1]) * 32, i, 0xFFFFFFFD, 10000 + i, spk) for i in range(n_in)]
    outputs = [(500 + j, b"\x00\x14" + bytes([j]) * 20) for j in range(n_out)]
    return txins, outputs, spk


def _ready(algorithms=("legacy", "segwit_v0", "taproot"), n_in=2, n_out=2):
    txins, outputs, spk = _tx(n_in, n_out)
    s = Session()
    s.begin(2, 0, n_in, n_out, list(algorithms))
    s.add_key(SECRET_1)
    tokens, out_tokens = _stream(s, txins, outputs)
    return s, txins, outputs, spk, tokens, out_tokens


def _fails(s, code, fn, *args, **kwargs):
    keys = s._keys
    with fwtest.raises(SessionError) as r:
        fn(*args, **kwargs)
    assert r.value.code == code, (r.value.code, r.value.message)
    assert keys == bytearray(len(keys)), "key buffer not wiped"
    assert s.state == "idle"
    return r.value.message


def test_out_of_order_messages():
    s = Session()
    _fails(s, "out_of_order", s.add_input, bytes(32), 0, 0, 0, b"")
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "out_of_order", s.finish_legacy_pass)
    s = Session()
    s.begin(2, 0, 2, 1, ["segwit_v0"])
    s.add_key(SECRET_1)
    s.add_input(*txins[0])
    msg = _fails(s, "out_of_order", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 1, 0)
    assert "inputs" in msg
    s = Session()
    s.begin(2, 0, 2, 1, ["segwit_v0"])
    s.add_key(SECRET_1)
    s.add_input(*txins[0])
    _fails(s, "count_mismatch", s.add_output, *outputs[0])


def test_a_changed_input_on_the_second_pass_is_refused():
    s, txins, outputs, spk, _, _ = _ready()
    s.begin_legacy_pass(0, spk, 1, 0)
    s.add_input(*txins[0])
    changed = txins[1][:3] + (txins[1][3] + 1, txins[1][4])
    s.add_input(*changed)
    s.add_output(*outputs[0])
    msg = _fails(s, "tx_changed", s.add_output, *outputs[1])
    assert msg == "transaction changed during signing"


def test_a_changed_amount_in_a_sign_request_is_refused():
    s, txins, _, spk, tokens, _ = _ready()
    lying = txins[1][:3] + (txins[1][3] * 2, txins[1][4])
    msg = _fails(s, "tx_changed", s.sign_segwit_v0, 1, lying, tokens[1], spk, 1, 0)
    assert msg == "transaction changed during signing"
    s, txins, _, spk, tokens, _ = _ready()
    _fails(s, "tx_changed", s.sign_segwit_v0, 0, txins[0], tokens[1], spk, 1, 0)


def test_more_inputs_than_declared():
    txins, outputs, _ = _tx(3, 1)
    s = Session()
    s.begin(2, 0, 2, 1, ["legacy"])
    s.add_key(SECRET_1)
    s.add_input(*txins[0])
    s.add_input(*txins[1])
    msg = _fails(s, "count_mismatch", s.add_input, *txins[2])
    assert "2 declared" in msg
    s, txins, outputs, spk, _, _ = _ready()
    _fails(s, "count_mismatch", s.add_output, *outputs[0])


def test_limits_are_errors_not_crashes():
    from quillfw.limits import MAX_INPUTS, MAX_KEYS, MAX_OUTPUTS, MAX_SCRIPT_SIZE
    s = Session()
    s.begin(2, 0, 1, 1, ["legacy"])
    s.add_key(SECRET_1)
    msg = _fails(s, "limit_exceeded", s.add_input, bytes(32), 0, 0, 0,
                 b"\x6a" * (MAX_SCRIPT_SIZE + 1))
    assert str(MAX_SCRIPT_SIZE) in msg
    _fails(s, "limit_exceeded", s.begin, 2, 0, MAX_INPUTS + 1, 1, ["legacy"])
    _fails(s, "limit_exceeded", s.begin, 2, 0, 1, MAX_OUTPUTS + 1, ["legacy"])
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "limit_exceeded", s.begin_legacy_pass, 0, b"\x51" * (MAX_SCRIPT_SIZE + 1), 1, 0)
    s, txins, outputs, spk, tokens, _ = _ready()
    for n in range(MAX_KEYS - 1):
        s.add_key(bytes(31) + bytes((n + 2,)))
    _fails(s, "limit_exceeded", s.add_key, SECRET_1)


def test_single_without_matching_output_is_refused_unless_allowed():
    s, txins, outputs, spk, tokens, _ = _ready(n_in=2, n_out=1)
    msg = _fails(s, "single_without_output", s.sign_segwit_v0, 1, txins[1], tokens[1], spk, 3, 0)
    assert "SIGHASH_SINGLE" in msg
    s, txins, outputs, spk, tokens, _ = _ready(n_in=2, n_out=1)
    _fails(s, "single_without_output", s.begin_legacy_pass, 1, spk, 0x83, 0)
    s, txins, outputs, spk, tokens, _ = _ready(n_in=2, n_out=1)
    _fails(s, "single_without_output", s.sign_taproot, 1, 3, 0)
    # explicitly allowed: legacy signs Core's uint256 ONE, v0 a zero hashOutputs
    s, txins, outputs, spk, tokens, _ = _ready(n_in=2, n_out=1)
    s.begin_legacy_pass(1, spk, 3, 0, allow_single_without_output=True)
    _stream(s, txins, outputs)
    sig = s.finish_legacy_pass()
    pub = ec.pubkey_from_secret(SECRET_1)
    assert sig[-1] == 3 and ecdsa.verify(pub, ONE, sig[:-1])
    sig = s.sign_segwit_v0(1, txins[1], tokens[1], spk, 3, 0, allow_single_without_output=True)
    assert sig[-1] == 3


def test_wrong_key_for_the_script_code():
    s, txins, outputs, spk, tokens, _ = _ready()
    other = _p2pkh(hash160(ec.pubkey_from_secret(SECRET_1, compressed=False)))
    msg = _fails(s, "wrong_key", s.sign_segwit_v0, 0, txins[0], tokens[0], other, 1, 0)
    assert "key 0" in msg
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "wrong_key", s.begin_legacy_pass, 0, _p2pkh(bytes(20)), 1, 0)


def test_segwit_v0_refuses_an_uncompressed_key():
    s, txins, outputs, _, tokens, _ = _ready()
    k = s.add_key(bytes(31) + b"\x02", compressed=False)
    spk = _p2pkh(hash160(ec.pubkey_from_secret(bytes(31) + b"\x02", compressed=False)))
    _fails(s, "bad_key", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 1, k)


def test_undeclared_algorithm_bad_hash_type_and_bad_key():
    s, txins, outputs, spk, tokens, _ = _ready(algorithms=("segwit_v0",))
    _fails(s, "not_declared", s.sign_taproot, 0, 0, 0)
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "bad_value", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 0x04, 0)
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "bad_value", s.sign_taproot, 0, 0x84, 0)
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "bad_key", s.add_key, bytes(32))
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "bad_key", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 1, 5)
    s, txins, outputs, spk, tokens, _ = _ready()
    _fails(s, "bad_value", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 1, 0, 7, 8, 9, 10)


def test_ending_wipes_and_nothing_secret_is_shown():
    s, txins, outputs, spk, tokens, _ = _ready()
    secret_hex = SECRET_1.hex()
    text = repr(s)
    assert secret_hex not in text and "ready" in text
    sig = s.sign_segwit_v0(0, txins[0], tokens[0], spk, 1, 0)
    assert SECRET_1 not in sig
    keys = s._keys
    s.end()
    assert keys == bytearray(len(keys)) and s.state == "idle"
    # the next session starts clean: old tokens do not carry over
    s.begin(2, 0, 2, 2, ["segwit_v0"])
    s.add_key(SECRET_1)
    _stream(s, txins, outputs)
    _fails(s, "tx_changed", s.sign_segwit_v0, 0, txins[0], tokens[0], spk, 1, 0)


def test_legacy_pass_signature_matches_the_independent_sighash():
    s, txins, outputs, spk, _, _ = _ready()
    pub = ec.pubkey_from_secret(SECRET_1)
    for i in range(2):
        for hash_type in (1, 2, 3, 0x81, 0x82, 0x83):
            s.begin_legacy_pass(i, spk, hash_type, 0)
            _stream(s, txins, outputs)
            sig = s.finish_legacy_pass()
            digest = legacy_sighash_tx(2, [t[:3] for t in txins], outputs, 0, i, spk, hash_type)
            assert sig[-1] == hash_type and ecdsa.verify(pub, digest, sig[:-1])


def test_taproot_script_path_untweaked_and_aux_signatures_verify():
    from quillfw.crypto import schnorr
    from quillfw.sighash.taproot import sighash_tx as taproot_sighash_tx
    s, txins, outputs, _, _, _ = _ready()
    inputs = [t[:3] for t in txins]
    spent = [t[3:] for t in txins]
    xonly = ec.xonly_from_secret(SECRET_1)[0]
    leaf = bytes(range(32))
    annex = b"\x50\xaa"
    sig = s.sign_taproot(1, 0, 0, leaf_hash=leaf, codesep_pos=3, annex=annex)
    digest = taproot_sighash_tx(2, inputs, outputs, 0, spent, 1, 0, annex=annex,
                                leaf_hash=leaf, codesep_pos=3)
    assert len(sig) == 64 and schnorr.verify(xonly, digest, sig)
    sig = s.sign_taproot(0, 1, 0, tweak=False, aux=b"\x07" * 32)
    digest = taproot_sighash_tx(2, inputs, outputs, 0, spent, 0, 1)
    assert sig[-1] == 1 and schnorr.verify(xonly, digest, sig[:-1])
    assert sig[:-1] != schnorr.sign(SECRET_1, digest, bytes(32))
    sig = s.sign_taproot(0, 0, 0)   # BIP86: tweaked with no script tree
    _, tweaked = schnorr.taproot_tweak_pubkey(xonly)
    assert schnorr.verify(tweaked, taproot_sighash_tx(2, inputs, outputs, 0, spent, 0, 0), sig)
