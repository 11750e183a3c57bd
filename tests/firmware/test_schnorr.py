"""quillfw.crypto.schnorr: BIP340 signing/verification and BIP341 tweaking, under
CPython and MicroPython, against bips/bip340_test_vectors.csv and
core/bip341_wallet_vectors.json."""
from quillfw.crypto import schnorr
from quillfw.crypto import secp256k1 as ec
from tests.firmware import fwtest


def _bip340_rows():
    with open(fwtest.vector_path("bips/bip340_test_vectors.csv")) as f:
        lines = f.read().split("\n")
    assert lines[0].strip().startswith("index,secret key,public key,aux_rand,message,signature")
    rows = []
    for line in lines[1:]:
        line = line.strip()
        if not line:
            continue
        index, secret, pubkey, aux, msg, sig, result, _comment = line.split(",", 7)
        rows.append((int(index), secret, bytes.fromhex(pubkey), aux,
                     bytes.fromhex(msg), bytes.fromhex(sig), result == "TRUE"))
    assert len(rows) == 19
    return rows


def test_bip340_signing_rows():
    signed = 0
    for index, secret, pubkey, aux, msg, sig, _ in _bip340_rows():
        if not secret:
            continue
        secret = bytes.fromhex(secret)
        assert ec.xonly_from_secret(secret)[0] == pubkey, index
        assert schnorr.sign(secret, msg, bytes.fromhex(aux)) == sig, index
        signed += 1
    assert signed == 8


def test_bip340_verification_rows():
    results = []
    for index, _, pubkey, _, msg, sig, expected in _bip340_rows():
        assert schnorr.verify(pubkey, msg, sig) == expected, index
        results.append(expected)
    assert True in results and False in results


def _merkle_root(hex_or_none):
    return None if hex_or_none is None else bytes.fromhex(hex_or_none)


def test_bip341_output_keys_for_every_script_tree():
    cases = fwtest.load_json("core/bip341_wallet_vectors.json")["scriptPubKey"]
    assert len(cases) == 7
    for case in cases:
        internal = bytes.fromhex(case["given"]["internalPubkey"])
        inter = case["intermediary"]
        root = _merkle_root(inter["merkleRoot"])
        assert schnorr.taproot_tweak(internal, root).hex() == inter["tweak"]
        odd, tweaked = schnorr.taproot_tweak_pubkey(internal, root)
        assert tweaked.hex() == inter["tweakedPubkey"]
        assert (b"\x51\x20" + tweaked).hex() == case["expected"]["scriptPubKey"]
        # Control blocks start with leaf version | parity of the output key.
        for control_block in case["expected"].get("scriptPathControlBlocks") or []:
            assert int(control_block[:2], 16) & 1 == (1 if odd else 0)


def test_bip341_key_path_signatures():
    spend = fwtest.load_json("core/bip341_wallet_vectors.json")["keyPathSpending"][0]
    inputs = spend["inputSpending"]
    assert len(inputs) == 7
    for case in inputs:
        given, inter = case["given"], case["intermediary"]
        secret = bytes.fromhex(given["internalPrivkey"])
        root = _merkle_root(given["merkleRoot"])
        internal, _ = ec.xonly_from_secret(secret)
        assert internal.hex() == inter["internalPubkey"]
        assert schnorr.taproot_tweak(internal, root).hex() == inter["tweak"]
        tweaked_secret = schnorr.taproot_tweak_secret(secret, root)
        assert tweaked_secret.hex() == inter["tweakedPrivkey"]
        sighash = bytes.fromhex(inter["sigHash"])
        witness = bytes.fromhex(case["expected"]["witness"][0])
        sig = schnorr.sign(tweaked_secret, sighash, bytes(32))
        hash_type = given["hashType"]
        assert witness == sig + (bytes((hash_type,)) if hash_type else b"")
        # The tweaked secret signs for the tweaked output key.
        _, output_key = schnorr.taproot_tweak_pubkey(internal, root)
        assert ec.xonly_from_secret(tweaked_secret)[0] == output_key
        assert schnorr.verify(output_key, sighash, sig)
        assert not schnorr.verify(internal, sighash, sig)


def test_sign_verify_various_message_lengths():
    secret = bytes(31) + b"\x07"
    xonly, _ = ec.xonly_from_secret(secret)
    for msg in (b"", b"\x00", bytes(32), b"x" * 100):
        sig = schnorr.sign(secret, msg, b"\x11" * 32)
        assert schnorr.verify(xonly, msg, sig)
        assert not schnorr.verify(xonly, msg + b"\x01", sig)
        flipped = sig[:63] + bytes((sig[63] ^ 1,))
        assert not schnorr.verify(xonly, msg, flipped)


def test_malformed_inputs():
    secret = bytes(31) + b"\x07"
    xonly, _ = ec.xonly_from_secret(secret)
    sig = schnorr.sign(secret, bytes(32))
    assert not schnorr.verify(xonly[:31], bytes(32), sig)
    assert not schnorr.verify(xonly, bytes(32), sig[:63])
    assert not schnorr.verify(xonly, bytes(32), sig + b"\x00")
    with fwtest.raises(ValueError, match="aux_rand"):
        schnorr.sign(secret, bytes(32), bytes(31))
    for value in (0, ec.N):
        bad = value.to_bytes(32, "big")
        with fwtest.raises(ValueError, match="secret key out of range") as r:
            schnorr.sign(bad, bytes(32))
        assert bad.hex() not in str(r.value)
        with fwtest.raises(ValueError):
            schnorr.taproot_tweak_secret(bad)
    with fwtest.raises(ValueError, match="merkle root"):
        schnorr.taproot_tweak_pubkey(xonly, bytes(31))
    with fwtest.raises(ValueError, match="not on the curve"):
        schnorr.taproot_tweak_pubkey((5).to_bytes(32, "big"))
    with fwtest.raises(ValueError, match="32 bytes"):
        schnorr.taproot_tweak_pubkey(xonly[:31])
    # An empty merkle root is the key-path-only tweak, like None.
    assert schnorr.taproot_tweak_pubkey(xonly, b"") == schnorr.taproot_tweak_pubkey(xonly)
