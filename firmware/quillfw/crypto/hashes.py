"""Hash functions for the firmware, identical under MicroPython and CPython.

API (all take bytes-like data and return bytes):
    sha256(data)            SHA-256
    sha256d(data)           SHA-256(SHA-256(data)), Bitcoin's hash256
    ripemd160(data)         RIPEMD-160, pure Python (MicroPython's hashlib lacks it)
    hash160(data)           RIPEMD-160(SHA-256(data))
    sha512(data)            SHA-512: hashlib's when present, else pure Python
    hmac_sha256(key, msg)   HMAC-SHA256 (RFC 2104)
    hmac_sha512(key, msg)   HMAC-SHA512 (RFC 2104)
    tagged_hash(tag, data)  BIP340: SHA256(SHA256(tag) || SHA256(tag) || data)
    tagged_hasher(tag)      a hashlib.sha256 object already fed with the BIP340
                            tag prefix; call update() any number of times and
                            digest() once (MicroPython allows only one digest()).

`tag` is a str (e.g. "TapSighash"); the 64-byte prefix is computed once per tag.
"""
import hashlib


def sha256(data):
    return hashlib.sha256(data).digest()


def sha256d(data):
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


# --- HMAC (RFC 2104) ------------------------------------------------------
# The pads are XORed as one big int: a per-byte Python loop costs ~6x more
# under MicroPython, and RFC6979 runs HMAC seven times per signature.

_IPAD64 = int.from_bytes(b"\x36" * 64, "big")
_OPAD64 = int.from_bytes(b"\x5c" * 64, "big")
_IPAD128 = int.from_bytes(b"\x36" * 128, "big")
_OPAD128 = int.from_bytes(b"\x5c" * 128, "big")


def hmac_sha256(key, msg):
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    k = int.from_bytes(bytes(key) + bytes(64 - len(key)), "big")
    inner = hashlib.sha256((k ^ _IPAD64).to_bytes(64, "big"))
    inner.update(msg)
    outer = hashlib.sha256((k ^ _OPAD64).to_bytes(64, "big"))
    outer.update(inner.digest())
    return outer.digest()


def hmac_sha512(key, msg):
    if len(key) > 128:
        key = sha512(key)
    k = int.from_bytes(bytes(key) + bytes(128 - len(key)), "big")
    inner = sha512((k ^ _IPAD128).to_bytes(128, "big") + bytes(msg))
    return sha512((k ^ _OPAD128).to_bytes(128, "big") + inner)


# --- SHA-512 (FIPS 180-4) -------------------------------------------------

_M64 = 0xFFFFFFFFFFFFFFFF

# The 80 round constants, 8 bytes each (big-endian): a blob costs 640 bytes of
# RAM where 80 int objects would cost ~4 KB, and only MicroPython needs them.
_K512_BLOB = bytes.fromhex(
    "428a2f98d728ae227137449123ef65cdb5c0fbcfec4d3b2fe9b5dba58189dbbc"
    "3956c25bf348b53859f111f1b605d019923f82a4af194f9bab1c5ed5da6d8118"
    "d807aa98a303024212835b0145706fbe243185be4ee4b28c550c7dc3d5ffb4e2"
    "72be5d74f27b896f80deb1fe3b1696b19bdc06a725c71235c19bf174cf692694"
    "e49b69c19ef14ad2efbe4786384f25e30fc19dc68b8cd5b5240ca1cc77ac9c65"
    "2de92c6f592b02754a7484aa6ea6e4835cb0a9dcbd41fbd476f988da831153b5"
    "983e5152ee66dfaba831c66d2db43210b00327c898fb213fbf597fc7beef0ee4"
    "c6e00bf33da88fc2d5a79147930aa72506ca6351e003826f142929670a0e6e70"
    "27b70a8546d22ffc2e1b21385c26c9264d2c6dfc5ac42aed53380d139d95b3df"
    "650a73548baf63de766a0abb3c77b2a881c2c92e47edaee692722c851482353b"
    "a2bfe8a14cf10364a81a664bbc423001c24b8b70d0f89791c76c51a30654be30"
    "d192e819d6ef5218d69906245565a910f40e35855771202a106aa07032bbd1b8"
    "19a4c116b8d2d0c81e376c085141ab532748774cdf8eeb9934b0bcb5e19b48a8"
    "391c0cb3c5c95a634ed8aa4ae3418acb5b9cca4f7763e373682e6ff3d6b2b8a3"
    "748f82ee5defb2fc78a5636f43172f6084c87814a1f0ab728cc702081a6439ec"
    "90befffa23631e28a4506cebde82bde9bef9a3f7b2c67915c67178f2e372532b"
    "ca273eceea26619cd186b8c721c0c207eada7dd6cde0eb1ef57d4f7fee6ed178"
    "06f067aa72176fba0a637dc5a2c898a6113f9804bef90dae1b710b35131c471b"
    "28db77f523047d8432caab7b40c724933c9ebe0a15c9bebc431d67c49c100d4c"
    "4cc5d4becb3e42b6597f299cfc657e2a5fcb6fab3ad6faec6c44198c4a475817"
)
_k512 = None

_H512 = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)


def _sha512_constants():
    global _k512
    if _k512 is None:
        _k512 = [int.from_bytes(_K512_BLOB[i:i + 8], "big") for i in range(0, 640, 8)]
    return _k512


def _sha512_block(h, block, K):
    w = [int.from_bytes(block[i:i + 8], "big") for i in range(0, 128, 8)]
    for t in range(16, 80):
        x = w[t - 15]
        s0 = ((x >> 1) | (x << 63)) ^ ((x >> 8) | (x << 56)) ^ (x >> 7)
        x = w[t - 2]
        s1 = ((x >> 19) | (x << 45)) ^ ((x >> 61) | (x << 3)) ^ (x >> 6)
        w.append((w[t - 16] + (s0 & _M64) + w[t - 7] + (s1 & _M64)) & _M64)
    a, b, c, d, e, f, g, hh = h
    for t in range(80):
        S1 = (((e >> 14) | (e << 50)) ^ ((e >> 18) | (e << 46)) ^ ((e >> 41) | (e << 23))) & _M64
        ch = (e & f) ^ (~e & g)
        t1 = (hh + S1 + ch + K[t] + w[t]) & _M64
        S0 = (((a >> 28) | (a << 36)) ^ ((a >> 34) | (a << 30)) ^ ((a >> 39) | (a << 25))) & _M64
        maj = (a & b) ^ (a & c) ^ (b & c)
        hh = g
        g = f
        f = e
        e = (d + t1) & _M64
        d = c
        c = b
        b = a
        a = (t1 + S0 + maj) & _M64
    return [(x + y) & _M64 for x, y in zip(h, (a, b, c, d, e, f, g, hh))]


def _sha512_pure(data):
    data = bytes(data)
    n = len(data)
    # FIPS 180-4 5.1.2: 0x80, zeros, then the 128-bit big-endian bit length.
    pad = b"\x80" + bytes((111 - n) % 128) + (n * 8).to_bytes(16, "big")
    K = _sha512_constants()
    h = list(_H512)
    tail = data[n - n % 128:] + pad
    for i in range(0, n - n % 128, 128):
        h = _sha512_block(h, data[i:i + 128], K)
    for i in range(0, len(tail), 128):
        h = _sha512_block(h, tail[i:i + 128], K)
    return b"".join(x.to_bytes(8, "big") for x in h)


try:
    _hashlib_sha512 = hashlib.sha512
except AttributeError:  # MicroPython
    _hashlib_sha512 = None


def sha512(data):
    if _hashlib_sha512 is not None:
        return _hashlib_sha512(data).digest()
    return _sha512_pure(data)


# --- RIPEMD-160 (Dobbertin, Bosselaers, Preneel 1996) ---------------------

_M32 = 0xFFFFFFFF

# Message word order and rotation amounts per step, left and right lines
# (bytes: indexing gives ints, and 80 bytes beat an 80-entry tuple in RAM).
_RL = bytes((
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    7, 4, 13, 1, 10, 6, 15, 3, 12, 0, 9, 5, 2, 14, 11, 8,
    3, 10, 14, 4, 9, 15, 8, 1, 2, 7, 0, 6, 13, 11, 5, 12,
    1, 9, 11, 10, 0, 8, 12, 4, 13, 3, 7, 15, 14, 5, 6, 2,
    4, 0, 5, 9, 7, 12, 2, 10, 14, 1, 3, 8, 11, 6, 15, 13,
))
_RR = bytes((
    5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12,
    6, 11, 3, 7, 0, 13, 5, 10, 14, 15, 8, 12, 4, 9, 1, 2,
    15, 5, 1, 3, 7, 14, 6, 9, 11, 8, 12, 2, 10, 0, 4, 13,
    8, 6, 4, 1, 3, 11, 15, 0, 5, 12, 2, 13, 9, 7, 10, 14,
    12, 15, 10, 4, 1, 5, 8, 7, 6, 2, 13, 14, 0, 3, 9, 11,
))
_SL = bytes((
    11, 14, 15, 12, 5, 8, 7, 9, 11, 13, 14, 15, 6, 7, 9, 8,
    7, 6, 8, 13, 11, 9, 7, 15, 7, 12, 15, 9, 11, 7, 13, 12,
    11, 13, 6, 7, 14, 9, 13, 15, 14, 8, 13, 6, 5, 12, 7, 5,
    11, 12, 14, 15, 14, 15, 9, 8, 9, 14, 5, 6, 8, 6, 5, 12,
    9, 15, 5, 11, 6, 8, 13, 12, 5, 12, 13, 14, 11, 8, 5, 6,
))
_SR = bytes((
    8, 9, 9, 11, 13, 15, 15, 5, 7, 7, 8, 11, 14, 14, 12, 6,
    9, 13, 15, 7, 12, 8, 9, 11, 7, 7, 12, 7, 6, 15, 13, 11,
    9, 7, 15, 11, 8, 6, 6, 14, 12, 13, 5, 14, 13, 13, 7, 5,
    15, 5, 8, 11, 14, 14, 6, 14, 6, 9, 12, 9, 12, 5, 15, 8,
    8, 5, 12, 9, 12, 5, 14, 6, 8, 13, 6, 5, 15, 13, 11, 11,
))
_KL = (0x00000000, 0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xA953FD4E)
_KR = (0x50A28BE6, 0x5C4DD124, 0x6D703EF3, 0x7A6D76E9, 0x00000000)


def _rmd_f(j, x, y, z):
    if j == 0:
        return x ^ y ^ z
    if j == 1:
        return (x & y) | (~x & z)
    if j == 2:
        return (x | ~y) ^ z
    if j == 3:
        return (x & z) | (y & ~z)
    return x ^ (y | ~z)


def _rol32(x, n):
    return ((x << n) | (x >> (32 - n))) & _M32


def _ripemd160_block(h, block):
    x = [int.from_bytes(block[i:i + 4], "little") for i in range(0, 64, 4)]
    al, bl, cl, dl, el = h
    ar, br, cr, dr, er = h
    for j in range(80):
        rnd = j >> 4
        t = _rol32((al + (_rmd_f(rnd, bl, cl, dl) & _M32) + x[_RL[j]] + _KL[rnd]) & _M32, _SL[j])
        t = (t + el) & _M32
        al, el, dl, cl, bl = el, dl, _rol32(cl, 10), bl, t
        t = _rol32((ar + (_rmd_f(4 - rnd, br, cr, dr) & _M32) + x[_RR[j]] + _KR[rnd]) & _M32, _SR[j])
        t = (t + er) & _M32
        ar, er, dr, cr, br = er, dr, _rol32(cr, 10), br, t
    t = (h[1] + cl + dr) & _M32
    return [t, (h[2] + dl + er) & _M32, (h[3] + el + ar) & _M32,
            (h[4] + al + br) & _M32, (h[0] + bl + cr) & _M32]


def ripemd160(data):
    data = bytes(data)
    n = len(data)
    # Same Merkle-Damgard padding as MD4/MD5: 0x80, zeros, 64-bit LE bit length.
    pad = b"\x80" + bytes((55 - n) % 64) + (n * 8).to_bytes(8, "little")
    h = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
    full = n - n % 64
    for i in range(0, full, 64):
        h = _ripemd160_block(h, data[i:i + 64])
    tail = data[full:] + pad
    for i in range(0, len(tail), 64):
        h = _ripemd160_block(h, tail[i:i + 64])
    return b"".join(v.to_bytes(4, "little") for v in h)


def hash160(data):
    return ripemd160(hashlib.sha256(data).digest())


# --- BIP340 tagged hashes -------------------------------------------------

_tag_prefixes = {}


def _tag_prefix(tag):
    prefix = _tag_prefixes.get(tag)
    if prefix is None:
        t = hashlib.sha256(tag.encode()).digest()
        prefix = t + t
        _tag_prefixes[tag] = prefix
    return prefix


def tagged_hasher(tag):
    return hashlib.sha256(_tag_prefix(tag))


def tagged_hash(tag, data):
    h = hashlib.sha256(_tag_prefix(tag))
    h.update(data)
    return h.digest()
