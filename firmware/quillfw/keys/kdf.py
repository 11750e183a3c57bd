"""PBKDF2 (RFC 8018 §5.2) with HMAC-SHA512 (BIP39's seed) and HMAC-SHA256 (the
PIN key), identical under MicroPython and CPython.

CPython uses hashlib.pbkdf2_hmac. MicroPython's hashlib has no SHA-512 and no
PBKDF2: for SHA-512 the compression state after the HMAC key's inner and outer
pad blocks is computed once, so each of BIP39's 2048 iterations costs two
SHA-512 blocks instead of four.
"""
import hashlib

from quillfw.crypto import hashes

_PBKDF2 = getattr(hashlib, "pbkdf2_hmac", None)


def _padded_key(key, block, hash_fn):
    if len(key) > block:
        key = hash_fn(key)
    return bytes(key) + bytes(block - len(key))


def _sha512_resume(state, tail, done_bytes):
    """SHA-512 of (done_bytes already compressed into state) + tail, tail < 112 bytes."""
    n = done_bytes + len(tail)
    block = bytes(tail) + b"\x80" + bytes(111 - len(tail)) + (n * 8).to_bytes(16, "big")
    h = hashes._sha512_block(state, block, hashes._sha512_constants())
    return b"".join(x.to_bytes(8, "big") for x in h)


_POLL_EVERY = 32


def pbkdf2_hmac_sha512(password, salt, iterations, poll=None):
    """64 bytes (one block: BIP39 asks for no more). poll(), if given, is called
    every few rounds: a board takes seconds, and the link must stay answered."""
    if _PBKDF2 is not None and hasattr(hashlib, "sha512"):
        return _PBKDF2("sha512", password, salt, iterations, 64)
    key = int.from_bytes(_padded_key(password, 128, hashes.sha512), "big")
    K = hashes._sha512_constants()
    inner = hashes._sha512_block(list(hashes._H512), (key ^ hashes._IPAD128).to_bytes(128, "big"), K)
    outer = hashes._sha512_block(list(hashes._H512), (key ^ hashes._OPAD128).to_bytes(128, "big"), K)
    u = bytes(salt) + b"\x00\x00\x00\x01"
    u = _sha512_resume(outer, _sha512_resume(inner, u, 128), 128)
    acc = int.from_bytes(u, "big")
    for i in range(iterations - 1):
        u = _sha512_resume(outer, _sha512_resume(inner, u, 128), 128)
        acc ^= int.from_bytes(u, "big")
        if poll is not None and i % _POLL_EVERY == 0:
            poll()
    return acc.to_bytes(64, "big")


def pbkdf2_hmac_sha256(password, salt, iterations, poll=None):
    """32 bytes; poll as above."""
    if _PBKDF2 is not None:
        return _PBKDF2("sha256", password, salt, iterations, 32)
    key = int.from_bytes(_padded_key(password, 64, hashes.sha256), "big")
    ipad = (key ^ hashes._IPAD64).to_bytes(64, "big")
    opad = (key ^ hashes._OPAD64).to_bytes(64, "big")
    u = bytes(salt) + b"\x00\x00\x00\x01"
    acc = 0
    for i in range(iterations):
        if poll is not None and i % (4 * _POLL_EVERY) == 0:
            poll()
        h = hashlib.sha256(ipad)
        h.update(u)
        o = hashlib.sha256(opad)
        o.update(h.digest())
        u = o.digest()
        acc ^= int.from_bytes(u, "big")
    return acc.to_bytes(32, "big")

