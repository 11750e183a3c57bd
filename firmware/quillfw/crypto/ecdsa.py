"""ECDSA over secp256k1 exactly as Bitcoin Core signs (CKey::Sign, grind=true).

API:
    sign(secret32, msg32, grind=True) -> DER bytes (no sighash byte)
        RFC6979 nonce as libsecp256k1's nonce_function_rfc6979, low-S, and
        (grind=True) low-R grinding. Byte-identical to Core for every (key,
        hash); grind=False is Core's grind=false / plain libsecp256k1 signing.
    verify(pubkey_bytes, msg32, der_sig) -> bool
        Bitcoin rules: strict DER (BIP66), low S (BIP146 LOW_S), 1 <= r, s < N.
        Any malformed input gives False.
    der_encode(r, s) -> bytes
    der_decode(sig) -> (r, s)   strict DER as BIP66; ValueError otherwise.
    rfc6979_nonce(secret32, msg32, extra32=None) -> generator of candidate ints

Core's procedure (src/key.cpp, CKey::Sign): sign with no extra entropy; while
the signature's r needs 33 DER bytes (r >= 2^255, "high R"), sign again with
extra entropy = 32 bytes whose first 4 are a counter 1, 2, 3, ... in
little-endian. Low R saves one byte of every signature.
"""
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import hmac_sha256

N = ec.N
_HALF_N = N >> 1
_HIGH_R = 1 << 255


def rfc6979_nonce(secret32, msg32, extra32=None):
    """RFC 6979 section 3.2 HMAC-SHA256 DRBG as libsecp256k1 seeds it.

    Seed (nonce_function_rfc6979): key32 || (msg32 mod N) || extra32, the last
    only when given. Yields candidate nonces; a rejected candidate (0 or >= N,
    or r = 0 / s = 0 in the caller) continues the DRBG as RFC 6979 3.2.h.
    """
    msg = (int.from_bytes(msg32, "big") % N).to_bytes(32, "big")
    seed = bytes(secret32) + msg
    if extra32 is not None:
        seed += bytes(extra32)
    v = b"\x01" * 32
    k = bytes(32)
    k = hmac_sha256(k, v + b"\x00" + seed)
    v = hmac_sha256(k, v)
    k = hmac_sha256(k, v + b"\x01" + seed)
    v = hmac_sha256(k, v)
    while True:
        v = hmac_sha256(k, v)
        candidate = int.from_bytes(v, "big")
        if 0 < candidate < N:
            yield candidate
        k = hmac_sha256(k, v + b"\x00")
        v = hmac_sha256(k, v)


def _nonce_and_r(d, z, secret32, msg32, extra32):
    """The nonce one secp256k1_ecdsa_sign call settles on, with its r.

    libsecp256k1 moves to the next RFC6979 candidate while r = 0 or s = 0;
    s = k^-1 (z + r*d) is 0 exactly when z + r*d = 0, which is checked here
    without the inversion, so a high-R attempt that grinding discards never
    pays for computing s.
    """
    for k in rfc6979_nonce(secret32, msg32, extra32):
        x, _ = ec.point_mul_g(k)
        r = x % N
        if r != 0 and (z + r * d) % N != 0:
            return k, r


def sign(secret32, msg32, grind=True):
    """Core's CKey::Sign(hash, sig, grind): DER signature with low S, and low R
    when grinding."""
    d = ec.scalar_from_secret(secret32)
    if len(msg32) != 32:
        raise ValueError("message hash must be 32 bytes")
    if ec.NATIVE is not None:
        # the same signature from libsecp256k1: secp256k1_ecdsa_sign is the call
        # CKey::Sign makes; with grinding, the module runs Core's rounds in one call
        # and computes s only for the round kept (ecdsa_sign_grind)
        if grind and hasattr(ec.NATIVE, "ecdsa_sign_grind"):
            return _der_encode_rs(ec.NATIVE.ecdsa_sign_grind(secret32, msg32))
        # without grinding; or a module built before ecdsa_sign_grind (main's, which
        # tests/bench/bench_crypto_mcu.py runs beside this firmware): a call per round
        rs = ec.NATIVE.ecdsa_sign(secret32, msg32, None)
        counter = 0
        while grind and rs[0] & 0x80:
            counter += 1
            rs = ec.NATIVE.ecdsa_sign(secret32, msg32, counter.to_bytes(4, "little") + bytes(28))
        return _der_encode_rs(rs)
    z = int.from_bytes(msg32, "big") % N
    k, r = _nonce_and_r(d, z, secret32, msg32, None)
    counter = 0
    while grind and r >= _HIGH_R:
        counter += 1
        extra = counter.to_bytes(4, "little") + bytes(28)
        k, r = _nonce_and_r(d, z, secret32, msg32, extra)
    s = ec.inverse(k, N) * (z + r * d) % N
    if s > _HALF_N:
        s = N - s
    return der_encode(r, s)


# --- DER (X.690) as constrained by BIP66 --------------------------------------

def _der_first(b, start):
    """Where the DER INTEGER of the 32-byte unsigned number at b[start:] starts: its
    first nonzero byte (its last byte at most)."""
    end = start + 31
    while start < end and b[start] == 0:
        start += 1
    return start


def _der_encode_rs(rs):
    """DER of a 64-byte r || s (big-endian), both already in [1, N): one buffer,
    filled in place (a signature per input on a board's small heap)."""
    r0, s0 = _der_first(rs, 0), _der_first(rs, 32)
    r_pad, s_pad = rs[r0] >> 7, rs[s0] >> 7     # a 0x00 before a top bit set
    r_len, s_len = 32 - r0 + r_pad, 64 - s0 + s_pad
    out = bytearray(6 + r_len + s_len)
    out[0], out[1], out[2], out[3] = 0x30, 4 + r_len + s_len, 0x02, r_len
    out[4 + r_len], out[5 + r_len] = 0x02, s_len
    view = memoryview(rs)
    out[4 + r_pad:4 + r_len] = view[r0:32]
    out[6 + r_len + s_pad:] = view[s0:64]
    return bytes(out)


def der_encode(r, s):
    if not (0 < r < N and 0 < s < N):
        raise ValueError("signature values out of range")
    return _der_encode_rs(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def der_decode(sig):
    """(r, s) from a strict-DER signature (BIP66 IsValidSignatureEncoding,
    applied to the signature without its sighash byte)."""
    n = len(sig)
    # 0x30 len 0x02 lenR R 0x02 lenS S, each integer 1..33 bytes.
    if n < 8 or n > 72:
        raise ValueError("DER signature has a bad length")
    if sig[0] != 0x30 or sig[1] != n - 2:
        raise ValueError("DER signature is not a sequence of its own length")
    len_r = sig[3]
    if 5 + len_r >= n:
        raise ValueError("DER signature: R runs past the end")
    len_s = sig[5 + len_r]
    if len_r + len_s + 6 != n:
        raise ValueError("DER signature: lengths do not add up")
    r = _der_decode_int(sig, 2, len_r, "R")
    s = _der_decode_int(sig, 4 + len_r, len_s, "S")
    return r, s


def _der_decode_int(sig, pos, length, name):
    if sig[pos] != 0x02:
        raise ValueError("DER signature: " + name + " is not an integer")
    if length == 0:
        raise ValueError("DER signature: " + name + " is empty")
    first = pos + 2
    if sig[first] & 0x80:
        raise ValueError("DER signature: " + name + " is negative")
    if length > 1 and sig[first] == 0 and not sig[first + 1] & 0x80:
        raise ValueError("DER signature: " + name + " has a needless leading zero")
    return int.from_bytes(sig[first:first + length], "big")


def verify(pubkey, msg32, der_sig):
    """True iff der_sig is a valid low-S strict-DER signature of msg32 by pubkey."""
    try:
        r, s = der_decode(der_sig)
        if ec.NATIVE is None:
            point = ec.sec_decode(pubkey)
        elif not ((len(pubkey) == 33 and pubkey[0] in (2, 3)) or (len(pubkey) == 65 and pubkey[0] == 4)):
            return False  # sec_decode's encodings only: libsecp256k1 also parses hybrid 06/07
    except ValueError:
        return False
    if len(msg32) != 32 or not (0 < r < N and 0 < s <= _HALF_N):
        return False
    if ec.NATIVE is not None:
        return ec.NATIVE.ecdsa_verify(pubkey, msg32, r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    z = int.from_bytes(msg32, "big") % N
    w = ec.inverse(s, N)
    R = ec.point_mul_add_g(z * w % N, point, r * w % N)
    return R is not None and R[0] % N == r
