"""quillfw.crypto.ecdsa: Core-exact signing (RFC6979, low S, low-R grinding), strict
DER and verification, under CPython and MicroPython.

Vectors: Core's bitcoin-tx golden signatures (core-util), the BIP143 examples,
and Wycheproof's ECDSA-secp256k1-SHA256 "bitcoin" variant (strict DER, low S).
"""
from quillfw.crypto import ecdsa
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import sha256, sha256d
from tests.firmware import fwtest

SECRET_ONE = (1).to_bytes(32, "big")


def _legacy_p2pkh_sighash_no_outputs(signed_tx, script_pubkey):
    """Core's SignatureHash(SIGHASH_ALL) for a 1-input tx signed before it had
    outputs (bitcoin-tx applies `sign` before `outaddr`): version, the input
    with scriptCode = scriptPubKey, zero outputs, locktime, hash type."""
    version = signed_tx[:4]
    prevout = signed_tx[5:41]
    preimage = (version + b"\x01" + prevout + bytes((len(script_pubkey),)) + script_pubkey
                + b"\xff\xff\xff\xff" + b"\x00" + signed_tx[-4:] + b"\x01\x00\x00\x00")
    return sha256d(preimage)


def _first_push(signed_tx):
    script_sig_start = 42  # version 4, input count 1, prevout 36, script length 1
    n = signed_tx[script_sig_start]
    return signed_tx[script_sig_start + 1:script_sig_start + 1 + n]


def _core_golden(name):
    with open(fwtest.vector_path("core-util/" + name)) as f:
        return bytes.fromhex(f.read().strip())


def test_core_bitcoin_tx_signatures_including_five_grinding_rounds():
    spk = bytes.fromhex("76a91491b24bf9f5288532960ac687abb035127b1d28a588ac")
    pubkey = ec.pubkey_from_secret(SECRET_ONE, compressed=False)  # WIF 5HpHag... is uncompressed
    for name in ("txcreatesignv1.hex", "txcreatesignv2.hex"):
        tx = _core_golden(name)
        sighash = _legacy_p2pkh_sighash_no_outputs(tx, spk)
        sig = _first_push(tx)
        assert sig[-1] == 1  # SIGHASH_ALL
        assert ecdsa.sign(SECRET_ONE, sighash) == sig[:-1], name
        assert ecdsa.verify(pubkey, sighash, sig[:-1])
    # v1 needed counter = 5: without grinding the first signature has a high R.
    tx = _core_golden("txcreatesignv1.hex")
    plain = ecdsa.sign(SECRET_ONE, _legacy_p2pkh_sighash_no_outputs(tx, spk), grind=False)
    assert plain[3] == 33 and plain != _first_push(tx)[:-1]


def test_bip143_example_signatures():
    examples = fwtest.load_json("bips/bip143_examples.json")["examples"]
    seen = high_r = 0
    for example in examples:
        for txin in example["inputs"]:
            for s in txin.get("signatures", []):
                secret = s.get("private_key") or txin.get("private_key")
                pub = s.get("public_key") or txin.get("public_key")
                if not secret or "signature" not in s:
                    continue
                secret = bytes.fromhex(secret)
                msg = bytes.fromhex(s["sighash"])
                der = bytes.fromhex(s["signature"])[:-1]
                seen += 1
                # 2016 signatures: plain RFC6979 + low S, no grinding.
                assert ecdsa.sign(secret, msg, grind=False) == der
                assert ecdsa.verify(bytes.fromhex(pub), msg, der)
                ground = ecdsa.sign(secret, msg)
                if der[3] == 32:
                    assert ground == der  # low R already: Core signs the same
                else:
                    high_r += 1
                    assert ground != der and ground[3] <= 32
                    assert ecdsa.verify(bytes.fromhex(pub), msg, ground)
    assert seen >= 10 and high_r >= 3


def test_wycheproof_bitcoin_variant():
    data = fwtest.load_json("wycheproof/ecdsa_secp256k1_sha256_bitcoin_test.json")
    assert data["schema"] == "ecdsa_bitcoin_verify_schema.json"
    count = 0
    for group in data["testGroups"]:
        pub = bytes.fromhex(group["publicKey"]["uncompressed"])
        for case in group["tests"]:
            msg32 = sha256(bytes.fromhex(case["msg"]))
            got = ecdsa.verify(pub, msg32, bytes.fromhex(case["sig"]))
            assert got == (case["result"] == "valid"), case["tcId"]
            count += 1
    assert count == data["numberOfTests"] == 463


def test_der_roundtrip_minimal_integers():
    for r, s in ((1, 1), (0x7F, 0x80), (0xFF, 0x100), (ec.N - 1, ec.N >> 1),
                 ((1 << 255) - 1, 1 << 255), (1 << 7, (1 << 248) + 5)):
        der = ecdsa.der_encode(r, s)
        assert ecdsa.der_decode(der) == (r, s)
    assert ecdsa.der_encode(1, 0x80).hex() == "3007020101020200" + "80"
    for bad in ((0, 1), (1, 0), (ec.N, 1)):
        with fwtest.raises(ValueError):
            ecdsa.der_encode(*bad)


def test_der_decode_rejects_non_strict_encodings():
    good = ecdsa.der_encode(0x1234, 0x5678)  # 30 08 02 02 1234 02 02 5678
    assert good.hex() == "30080202123402025678"
    bad = [
        b"",
        good[:-1],                                        # truncated
        good + b"\x00",                                   # trailing byte
        b"\x31" + good[1:],                               # not a SEQUENCE
        good[:1] + b"\x09" + good[2:],                    # wrong total length
        bytes.fromhex("30080302123402025678"),            # R not an INTEGER
        bytes.fromhex("30080202123403025678"),            # S not an INTEGER
        bytes.fromhex("3006020002025678"),                # empty R
        bytes.fromhex("3006020212340200"),                # empty S
        bytes.fromhex("30080202923402025678"),            # negative R
        bytes.fromhex("30080202123402029678"),            # negative S
        bytes.fromhex("3009020300123402025678"),          # R with a needless 00
        bytes.fromhex("3009020212340203005678"),          # S with a needless 00
        bytes.fromhex("30080203123402025678"),            # R length overruns
        bytes.fromhex("3081080202123402025678"),          # BER long-form length
        b"\x30\x47\x02\x21\x00" + b"\x80" * 32 + b"\x02\x22\x00" + b"\x80" * 33,  # 73 bytes
    ]
    for sig in bad:
        with fwtest.raises(ValueError):
            ecdsa.der_decode(sig)
        assert not ecdsa.verify(ec.pubkey_from_secret(SECRET_ONE), bytes(32), sig)


def test_sign_is_low_s_low_r_and_verifies():
    pub = ec.pubkey_from_secret(SECRET_ONE)
    for i in range(8):
        msg = sha256(bytes((i,)))
        der = ecdsa.sign(SECRET_ONE, msg)
        r, s = ecdsa.der_decode(der)
        assert r < (1 << 255) and s <= ec.N >> 1 and len(der) <= 70
        assert ecdsa.verify(pub, msg, der)
        assert not ecdsa.verify(pub, sha256(msg), der)
        # The same signature with high S is valid ECDSA but not under Bitcoin's rule.
        assert not ecdsa.verify(pub, msg, ecdsa.der_encode(r, ec.N - s))


def test_bad_inputs_raise_clear_errors_without_the_secret():
    for value in (0, ec.N):
        secret = value.to_bytes(32, "big")
        with fwtest.raises(ValueError, match="secret key out of range") as r:
            ecdsa.sign(secret, bytes(32))
        assert secret.hex() not in str(r.value)
    with fwtest.raises(ValueError, match="32 bytes"):
        ecdsa.sign(SECRET_ONE, bytes(31))
    assert not ecdsa.verify(b"\x02" + bytes(32), bytes(32), ecdsa.sign(SECRET_ONE, bytes(32)))
    assert not ecdsa.verify(ec.pubkey_from_secret(SECRET_ONE), bytes(31), ecdsa.sign(SECRET_ONE, bytes(32)))
