"""quillfw.crypto.hashes and quillfw.crypto.secp256k1 against CPython's hashlib/hmac and
libsecp256k1 (coincurve), over many lengths and random points (CPython only)."""
import hashlib
import hmac
import random

import coincurve
import pytest

from quillfw.crypto import hashes
from quillfw.crypto import secp256k1 as ec

LENGTHS = list(range(0, 300)) + [1000, 4096]


def _data(n):
    return bytes((i * 7 + n) & 0xFF for i in range(n))


def test_pure_sha512_every_padding_boundary():
    for n in LENGTHS:
        assert hashes._sha512_pure(_data(n)) == hashlib.sha512(_data(n)).digest(), n


def test_ripemd160_every_padding_boundary():
    try:
        hashlib.new("ripemd160")
    except ValueError:
        pytest.skip("this OpenSSL has no RIPEMD-160 to compare with")
    for n in LENGTHS:
        assert hashes.ripemd160(_data(n)) == hashlib.new("ripemd160", _data(n)).digest(), n


def test_hmacs_against_the_hmac_module():
    for key_len in (0, 1, 32, 63, 64, 65, 127, 128, 129, 300):
        key = _data(key_len)[::-1]
        for n in (0, 1, 64, 65, 200):
            msg = _data(n)
            assert hashes.hmac_sha256(key, msg) == hmac.new(key, msg, "sha256").digest()
            assert hashes.hmac_sha512(key, msg) == hmac.new(key, msg, "sha512").digest()


def test_pubkeys_and_point_operations_match_libsecp256k1():
    rng = random.Random(2561)
    for _ in range(100):
        a = rng.randrange(1, ec.N)
        b = rng.randrange(1, ec.N)
        ka = coincurve.PrivateKey.from_int(a)
        secret = a.to_bytes(32, "big")
        assert ec.pubkey_from_secret(secret) == ka.public_key.format()
        assert ec.pubkey_from_secret(secret, compressed=False) == ka.public_key.format(False)
        pa = ec.point_mul_g(a)
        pb = ec.point_mul_g(b)
        combined = coincurve.PublicKey.combine_keys([ka.public_key, coincurve.PrivateKey.from_int(b).public_key])
        assert ec.sec_encode(ec.point_add(pa, pb)) == combined.format()
        assert ec.sec_encode(ec.point_mul(pa, b)) == ka.public_key.multiply(b.to_bytes(32, "big")).format()
        assert ec.sec_decode(ka.public_key.format()) == pa
