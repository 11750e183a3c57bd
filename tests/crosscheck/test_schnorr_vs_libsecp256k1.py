"""quillfw.crypto.schnorr against libsecp256k1 through coincurve (CPython only)."""
import random

import coincurve

from quillfw.crypto import schnorr
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import tagged_hash

SEED = 340341


def _secrets(rng, count):
    out = []
    while len(out) < count:
        s = rng.getrandbits(256)
        if 0 < s < ec.N:
            out.append(s.to_bytes(32, "big"))
    return out


def test_random_signatures_byte_identical_to_sign_schnorr():
    rng = random.Random(SEED)
    for secret in _secrets(rng, 300):
        msg = rng.getrandbits(256).to_bytes(32, "big")
        aux = rng.getrandbits(256).to_bytes(32, "big")
        expected = coincurve.PrivateKey(secret).sign_schnorr(msg, aux)
        assert schnorr.sign(secret, msg, aux) == expected
        xonly = coincurve.PublicKeyXOnly.from_secret(secret).format()
        assert ec.xonly_from_secret(secret)[0] == xonly
        assert schnorr.verify(xonly, msg, expected)


def test_verify_agrees_with_libsecp256k1_on_corrupted_signatures():
    rng = random.Random(SEED + 1)
    for secret in _secrets(rng, 60):
        msg = rng.getrandbits(256).to_bytes(32, "big")
        sig = bytearray(coincurve.PrivateKey(secret).sign_schnorr(msg, bytes(32)))
        sig[rng.randrange(64)] ^= 1 << rng.randrange(8)
        pub = coincurve.PublicKeyXOnly.from_secret(secret)
        assert schnorr.verify(pub.format(), msg, bytes(sig)) == pub.verify(bytes(sig), msg)


def test_taproot_tweaks_match_libsecp256k1():
    rng = random.Random(SEED + 2)
    for i, secret in enumerate(_secrets(rng, 100)):
        root = None if i % 2 else rng.getrandbits(256).to_bytes(32, "big")
        internal = coincurve.PublicKeyXOnly.from_secret(secret)
        t = tagged_hash("TapTweak", internal.format() + (root or b""))
        assert schnorr.taproot_tweak(internal.format(), root) == t
        internal.tweak_add(t)
        assert schnorr.taproot_tweak_pubkey(ec.xonly_from_secret(secret)[0], root) == (
            internal.parity, internal.format())
        tweaked = schnorr.taproot_tweak_secret(secret, root)
        assert coincurve.PublicKeyXOnly.from_secret(tweaked).format() == internal.format()
