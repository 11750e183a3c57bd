"""Legacy and segwit v0 spends with real ECDSA signatures: what the signing RPCs'
`errors` entries are made of (core-rpc.md §4.9 typical outcomes)."""
from quill.tx.hashes import hash160, sha256
from quill.tx.interpreter import parse_der_lax
from quill.tx.script_error import ScriptError as E
from quill.tx.script_flags import (
    MANDATORY_SCRIPT_VERIFY_FLAGS,
    SCRIPT_VERIFY_DERSIG,
    SCRIPT_VERIFY_LOW_S,
    SCRIPT_VERIFY_STRICTENC,
    STANDARD_SCRIPT_VERIFY_FLAGS,
)
from quill.tx.transaction import TxOut
from quill.tx.verify import PrecomputedTransactionData, verify_input
from tests.interpreter.spend import bip143_digest, ecdsa_sig, legacy_digest, pubkey, secret, spending_tx, verify

STD = STANDARD_SCRIPT_VERIFY_FLAGS
K1, K2, K3 = secret(21), secret(22), secret(23)
AMOUNT = 123_456
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def push(b):
    return bytes((len(b),)) + b


def p2pkh(key):
    return b"\x76\xa9\x14" + hash160(key) + b"\x88\xac"


def multisig(m, keys):
    return bytes((0x50 + m,)) + b"".join(push(k) for k in keys) + bytes((0x50 + len(keys),)) + b"\xae"


def p2wsh(script):
    return b"\x00\x20" + sha256(script)


def test_p2pkh():
    key = pubkey(K1)
    tx = spending_tx()
    tx.vin[0].script_sig = push(ecdsa_sig(K1, legacy_digest(tx, p2pkh(key)))) + push(key)
    assert verify(tx, TxOut(AMOUNT, p2pkh(key)), STD) == (True, E.OK)
    tx.vin[0].script_sig = b""          # nothing signed: "missing key"
    assert verify(tx, TxOut(AMOUNT, p2pkh(key)), STD) == (False, E.INVALID_STACK_OPERATION)
    tx.vin[0].script_sig = push(ecdsa_sig(K2, legacy_digest(tx, p2pkh(key)))) + push(key)
    assert verify(tx, TxOut(AMOUNT, p2pkh(key)), STD) == (False, E.SIG_NULLFAIL)
    assert verify(tx, TxOut(AMOUNT, p2pkh(key)), MANDATORY_SCRIPT_VERIFY_FLAGS) == (False, E.EVAL_FALSE)


def test_p2wpkh():
    key = pubkey(K1)
    spk = b"\x00\x14" + hash160(key)
    tx = spending_tx()
    tx.vin[0].witness = [ecdsa_sig(K1, bip143_digest(tx, p2pkh(key), AMOUNT)), key]
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (True, E.OK)
    # BIP143 signs the amount.
    assert verify(tx, TxOut(AMOUNT + 1, spk), STD) == (False, E.SIG_NULLFAIL)
    # Core's P2WPKH rule is "exactly two items", so even an empty witness is a
    # mismatch here (only P2WSH and taproot report WITNESS_PROGRAM_WITNESS_EMPTY).
    tx.vin[0].witness = []
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.WITNESS_PROGRAM_MISMATCH)
    tx.vin[0].witness = [key]
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.WITNESS_PROGRAM_MISMATCH)


def test_p2wpkh_with_uncompressed_key_is_policy_invalid():
    key = pubkey(K1, compressed=False)
    spk = b"\x00\x14" + hash160(key)
    tx = spending_tx()
    tx.vin[0].witness = [ecdsa_sig(K1, bip143_digest(tx, p2pkh(key), AMOUNT)), key]
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.WITNESS_PUBKEYTYPE)
    assert verify(tx, TxOut(AMOUNT, spk), MANDATORY_SCRIPT_VERIFY_FLAGS) == (True, E.OK)


def test_p2sh_p2wpkh():
    key = pubkey(K1)
    redeem = b"\x00\x14" + hash160(key)
    spk = b"\xa9\x14" + hash160(redeem) + b"\x87"
    tx = spending_tx(script_sig=push(redeem))
    tx.vin[0].witness = [ecdsa_sig(K1, bip143_digest(tx, p2pkh(key), AMOUNT)), key]
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (True, E.OK)
    tx.vin[0].script_sig = b"\x00" + push(redeem)
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.WITNESS_MALLEATED_P2SH)


def test_p2wsh_multisig_outcomes():
    keys = [pubkey(K1), pubkey(K2), pubkey(K3)]
    script = multisig(2, keys)
    spent = TxOut(AMOUNT, p2wsh(script))
    tx = spending_tx()

    def sig(k):
        return ecdsa_sig(k, bip143_digest(tx, script, AMOUNT))

    tx.vin[0].witness = [b"", sig(K1), sig(K3), script]
    assert verify(tx, spent, STD) == (True, E.OK)
    # Signatures must follow key order.
    tx.vin[0].witness = [b"", sig(K3), sig(K1), script]
    assert verify(tx, spent, STD) == (False, E.SIG_NULLFAIL)
    # 2-of-3 with one real signature and a placeholder: NULLFAIL.
    tx.vin[0].witness = [b"", sig(K1), b"", script]
    assert verify(tx, spent, STD) == (False, E.SIG_NULLFAIL)
    # 2-of-3 with nothing: the padded stack is too short.
    tx.vin[0].witness = [b"", b"", script]
    assert verify(tx, spent, STD) == (False, E.INVALID_STACK_OPERATION)
    # Non-empty dummy (BIP147).
    tx.vin[0].witness = [b"\x01", sig(K1), sig(K3), script]
    assert verify(tx, spent, STD) == (False, E.SIG_NULLDUMMY)
    # No witness script at all.
    tx.vin[0].witness = []
    assert verify(tx, spent, STD) == (False, E.WITNESS_PROGRAM_WITNESS_EMPTY)
    tx.vin[0].witness = [b"", sig(K1), sig(K3), multisig(2, keys[:2])]
    assert verify(tx, spent, STD) == (False, E.WITNESS_PROGRAM_MISMATCH)


def test_one_of_two_multisig_without_signature_is_eval_false():
    script = multisig(1, [pubkey(K1), pubkey(K2)])
    tx = spending_tx(witness=[b"", b"", script])
    assert verify(tx, TxOut(AMOUNT, p2wsh(script)), STD) == (False, E.EVAL_FALSE)


def _high_s(sig):
    r, s = parse_der_lax(sig[:-1])
    s = N - s
    rb = r.to_bytes(33, "big").lstrip(b"\x00")
    rb = b"\x00" + rb if rb[0] & 0x80 else rb
    sb = s.to_bytes(33, "big").lstrip(b"\x00")
    sb = b"\x00" + sb if sb[0] & 0x80 else sb
    body = b"\x02" + push(rb) + b"\x02" + push(sb)
    return b"\x30" + push(body) + sig[-1:]


def _ber_padded(sig):
    """Same (r, s) with a needlessly long R: valid before BIP66, lax-parsed by Core."""
    r, s = parse_der_lax(sig[:-1])
    rb = b"\x00\x00" + r.to_bytes(32, "big")
    sb = s.to_bytes(32, "big").lstrip(b"\x00")
    sb = b"\x00" + sb if sb[0] & 0x80 else sb
    body = b"\x02" + push(rb) + b"\x02" + push(sb)
    return b"\x30" + push(body) + sig[-1:]


def test_signatures_are_normalized_and_lax_parsed_as_core_does():
    key = pubkey(K1)
    spent = TxOut(AMOUNT, p2pkh(key))
    tx = spending_tx()
    good = ecdsa_sig(K1, legacy_digest(tx, p2pkh(key)))
    high = _high_s(good)
    tx.vin[0].script_sig = push(high) + push(key)
    assert verify(tx, spent, STD) == (False, E.SIG_HIGH_S)
    assert verify(tx, spent, STD & ~SCRIPT_VERIFY_LOW_S) == (True, E.OK)
    ber = _ber_padded(good)
    tx.vin[0].script_sig = push(ber) + push(key)
    assert verify(tx, spent, SCRIPT_VERIFY_DERSIG) == (False, E.SIG_DER)
    assert verify(tx, spent, 0) == (True, E.OK)
    # An undefined hash type is only refused under STRICTENC (the digest still covers it).
    odd = ecdsa_sig(K1, legacy_digest(tx, p2pkh(key), 0x04), 0x04)
    tx.vin[0].script_sig = push(odd) + push(key)
    assert verify(tx, spent, SCRIPT_VERIFY_STRICTENC) == (False, E.SIG_HASHTYPE)
    assert verify(tx, spent, SCRIPT_VERIFY_DERSIG) == (True, E.OK)


def test_legacy_sighash_single_without_output_signs_one():
    # Core's SIGHASH_SINGLE bug: with no output at the index the digest is 1.
    key = pubkey(K1)
    tx = spending_tx(n_outputs=0)
    one = b"\x01" + bytes(31)
    tx.vin[0].script_sig = push(ecdsa_sig(K1, one, 0x03)) + push(key)
    assert verify(tx, TxOut(AMOUNT, p2pkh(key)), STD) == (True, E.OK)


def test_precomputed_data_is_shared_between_inputs():
    key = pubkey(K1)
    tx = spending_tx()
    tx.vin[0].witness = [ecdsa_sig(K1, bip143_digest(tx, p2pkh(key), AMOUNT)), key]
    spent = [TxOut(AMOUNT, b"\x00\x14" + hash160(key))]
    data = PrecomputedTransactionData(tx, spent)
    assert verify_input(tx, 0, spent, STD, data) == (True, E.OK)
    assert verify_input(tx, 0, spent, STD) == (True, E.OK)


def test_unknown_opcode_in_script_pubkey():
    tx = spending_tx()
    assert verify(tx, TxOut(AMOUNT, bytes.fromhex("badbadbadbad")), STD) == (False, E.BAD_OPCODE)
