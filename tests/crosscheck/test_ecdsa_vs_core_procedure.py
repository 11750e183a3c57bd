"""quillfw.crypto.ecdsa.sign is byte-identical to Bitcoin Core's CKey::Sign (grind=true),
reproduced here with libsecp256k1 through coincurve (CPython only).

The reference implements Core's grinding loop itself (src/key.cpp): sign with no
extra entropy; while R is high (first byte of the 32-byte r >= 0x80), sign again
passing 32 bytes of extra entropy LE32(counter) || 28 zero bytes as the `ndata`
of libsecp256k1's default nonce function (coincurve: custom_nonce=(NULL, ndata)).
"""
import random

import coincurve
from coincurve._libsecp256k1 import ffi

from quillfw.crypto import ecdsa
from quillfw.crypto import secp256k1 as ec

SEED = 20260821
PAIRS = 1000


def _der_r(der):
    # Independent of quillfw: DER SEQUENCE { INTEGER r, INTEGER s }, r starts at byte 4.
    return int.from_bytes(der[4:4 + der[3]], "big")


def core_sign(secret32, msg32):
    """(DER signature, grinding rounds) as Core's CKey::Sign(grind=true)."""
    key = coincurve.PrivateKey(secret32)
    sig = key.sign(msg32, hasher=None)  # RFC6979 (nonce_function_rfc6979), low S
    counter = 0
    while _der_r(sig) >= 1 << 255:  # !SigHasLowR
        counter += 1
        extra = ffi.new("unsigned char[32]", counter.to_bytes(4, "little") + bytes(28))
        sig = key.sign(msg32, hasher=None, custom_nonce=(ffi.NULL, extra))
    return sig, counter


def pairs_by_rounds(per_kind=3, most=4):
    """{rounds: [(secret, msg), ...]} for 0, 1, 2 ... most grinding rounds (Core's signing
    with 1 to most + 1 nonces), per_kind pairs each, by Core's procedure: the cases a
    faster signing path must keep byte-identical."""
    rng = random.Random(SEED + 1)
    found = {rounds: [] for rounds in range(most + 1)}
    while any(len(pairs) < per_kind for pairs in found.values()):
        for secret, msg in _random_pairs(rng, 64):
            rounds = min(core_sign(secret, msg)[1], most)
            if len(found[rounds]) < per_kind:
                found[rounds].append((secret, msg))
    return found


def _random_pairs(rng, count):
    pairs = []
    while len(pairs) < count:
        secret = rng.getrandbits(256)
        if 0 < secret < ec.N:
            pairs.append((secret.to_bytes(32, "big"), rng.getrandbits(256).to_bytes(32, "big")))
    return pairs


def test_random_pairs_byte_identical_to_core_procedure():
    rng = random.Random(SEED)
    rounds = []
    for secret, msg in _random_pairs(rng, PAIRS):
        expected, counter = core_sign(secret, msg)
        assert ecdsa.sign(secret, msg) == expected, (msg.hex(), counter)
        rounds.append(counter)
    assert len(rounds) >= 1000
    # Half the first attempts have a high R; make sure retries really happened.
    assert sum(1 for c in rounds if c >= 1) > 300
    assert sum(1 for c in rounds if c >= 2) > 100
    assert max(rounds) >= 4


def test_cases_needing_many_grinding_rounds():
    """Search (fixed seed) for pairs that need >= 5 retries and check them all."""
    rng = random.Random(SEED + 1)
    found = []
    while len(found) < 12:
        secret, msg = _random_pairs(rng, 1)[0]
        expected, counter = core_sign(secret, msg)
        if counter >= 5:
            found.append((secret, msg, expected, counter))
    for secret, msg, expected, counter in found:
        assert ecdsa.sign(secret, msg) == expected, counter
    assert max(c for *_, c in found) >= 6


def test_without_grinding_equals_plain_libsecp256k1():
    rng = random.Random(SEED + 2)
    for secret, msg in _random_pairs(rng, 200):
        assert ecdsa.sign(secret, msg, grind=False) == coincurve.PrivateKey(secret).sign(msg, hasher=None)


def test_edge_secrets_and_messages():
    secrets = [1, 2, ec.N - 1, ec.N - 2, (ec.N - 1) // 2, 1 << 255, (1 << 128) - 1]
    msgs = [bytes(32), b"\xff" * 32, ec.N.to_bytes(32, "big"), (ec.N + 1).to_bytes(32, "big"),
            (ec.N - 1).to_bytes(32, "big")]
    for s in secrets:
        for m in msgs:
            secret = s.to_bytes(32, "big")
            expected, _ = core_sign(secret, m)
            assert ecdsa.sign(secret, m) == expected


def test_signatures_verify_with_libsecp256k1_and_ours():
    rng = random.Random(SEED + 3)
    for secret, msg in _random_pairs(rng, 100):
        der = ecdsa.sign(secret, msg)
        pub = coincurve.PrivateKey(secret).public_key
        assert pub.verify(der, msg, hasher=None)
        assert ecdsa.verify(pub.format(), msg, der)
        assert ecdsa.verify(pub.format(compressed=False), msg, der)
        other = bytes((msg[0] ^ 1,)) + msg[1:]
        assert not ecdsa.verify(pub.format(), other, der)
