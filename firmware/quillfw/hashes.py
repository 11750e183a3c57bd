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

_K512 = (
    0x428A2F98D728AE22, 0x7137449123EF65CD, 0xB5C0FBCFEC4D3B2F, 0xE9B5DBA58189DBBC,
    0x3956C25BF348B538, 0x59F111F1B605D019, 0x923F82A4AF194F9B, 0xAB1C5ED5DA6D8118,
    0xD807AA98A3030242, 0x12835B0145706FBE, 0x243185BE4EE4B28C, 0x550C7DC3D5FFB4E2,
    0x72BE5D74F27B896F, 0x80DEB1FE3B1696B1, 0x9BDC06A725C71235, 0xC19BF174CF692694,
    0xE49B69C19EF14AD2, 0xEFBE4786384F25E3, 0x0FC19DC68B8CD5B5, 0x240CA1CC77AC9C65,
    0x2DE92C6F592B0275, 0x4A7484AA6EA6E483, 0x5CB0A9DCBD41FBD4, 0x76F988DA831153B5,
    0x983E5152EE66DFAB, 0xA831C66D2DB43210, 0xB00327C898FB213F, 0xBF597FC7BEEF0EE4,
    0xC6E00BF33DA88FC2, 0xD5A79147930AA725, 0x06CA6351E003826F, 0x142929670A0E6E70,
    0x27B70A8546D22FFC, 0x2E1B21385C26C926, 0x4D2C6DFC5AC42AED, 0x53380D139D95B3DF,
    0x650A73548BAF63DE, 0x766A0ABB3C77B2A8, 0x81C2C92E47EDAEE6, 0x92722C851482353B,
    0xA2BFE8A14CF10364, 0xA81A664BBC423001, 0xC24B8B70D0F89791, 0xC76C51A30654BE30,
    0xD192E819D6EF5218, 0xD69906245565A910, 0xF40E35855771202A, 0x106AA07032BBD1B8,
    0x19A4C116B8D2D0C8, 0x1E376C085141AB53, 0x2748774CDF8EEB99, 0x34B0BCB5E19B48A8,
    0x391C0CB3C5C95A63, 0x4ED8AA4AE3418ACB, 0x5B9CCA4F7763E373, 0x682E6FF3D6B2B8A3,
    0x748F82EE5DEFB2FC, 0x78A5636F43172F60, 0x84C87814A1F0AB72, 0x8CC702081A6439EC,
    0x90BEFFFA23631E28, 0xA4506CEBDE82BDE9, 0xBEF9A3F7B2C67915, 0xC67178F2E372532B,
    0xCA273ECEEA26619C, 0xD186B8C721C0C207, 0xEADA7DD6CDE0EB1E, 0xF57D4F7FEE6ED178,
    0x06F067AA72176FBA, 0x0A637DC5A2C898A6, 0x113F9804BEF90DAE, 0x1B710B35131C471B,
    0x28DB77F523047D84, 0x32CAAB7B40C72493, 0x3C9EBE0A15C9BEBC, 0x431D67C49C100D4C,
    0x4CC5D4BECB3E42B6, 0x597F299CFC657E2A, 0x5FCB6FAB3AD6FAEC, 0x6C44198C4A475817,
)

_H512 = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)


def _sha512_block(h, block):
    w = [int.from_bytes(block[i:i + 8], "big") for i in range(0, 128, 8)]
    for t in range(16, 80):
        x = w[t - 15]
        s0 = ((x >> 1) | (x << 63)) ^ ((x >> 8) | (x << 56)) ^ (x >> 7)
        x = w[t - 2]
        s1 = ((x >> 19) | (x << 45)) ^ ((x >> 61) | (x << 3)) ^ (x >> 6)
        w.append((w[t - 16] + (s0 & _M64) + w[t - 7] + (s1 & _M64)) & _M64)
    a, b, c, d, e, f, g, hh = h
    K = _K512
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
    h = list(_H512)
    tail = data[n - n % 128:] + pad
    for i in range(0, n - n % 128, 128):
        h = _sha512_block(h, data[i:i + 128])
    for i in range(0, len(tail), 128):
        h = _sha512_block(h, tail[i:i + 128])
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

# Message word order and rotation amounts per round, left and right lines.
_RL = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    7, 4, 13, 1, 10, 6, 15, 3, 12, 0, 9, 5, 2, 14, 11, 8,
    3, 10, 14, 4, 9, 15, 8, 1, 2, 7, 0, 6, 13, 11, 5, 12,
    1, 9, 11, 10, 0, 8, 12, 4, 13, 3, 7, 15, 14, 5, 6, 2,
    4, 0, 5, 9, 7, 12, 2, 10, 14, 1, 3, 8, 11, 6, 15, 13,
)
_RR = (
    5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12,
    6, 11, 3, 7, 0, 13, 5, 10, 14, 15, 8, 12, 4, 9, 1, 2,
    15, 5, 1, 3, 7, 14, 6, 9, 11, 8, 12, 2, 10, 0, 4, 13,
    8, 6, 4, 1, 3, 11, 15, 0, 5, 12, 2, 13, 9, 7, 10, 14,
    12, 15, 10, 4, 1, 5, 8, 7, 6, 2, 13, 14, 0, 3, 9, 11,
)
_SL = (
    11, 14, 15, 12, 5, 8, 7, 9, 11, 13, 14, 15, 6, 7, 9, 8,
    7, 6, 8, 13, 11, 9, 7, 15, 7, 12, 15, 9, 11, 7, 13, 12,
    11, 13, 6, 7, 14, 9, 13, 15, 14, 8, 13, 6, 5, 12, 7, 5,
    11, 12, 14, 15, 14, 15, 9, 8, 9, 14, 5, 6, 8, 6, 5, 12,
    9, 15, 5, 11, 6, 8, 13, 12, 5, 12, 13, 14, 11, 8, 5, 6,
)
_SR = (
    8, 9, 9, 11, 13, 15, 15, 5, 7, 7, 8, 11, 14, 14, 12, 6,
    9, 13, 15, 7, 12, 8, 9, 11, 7, 7, 12, 7, 6, 15, 13, 11,
    9, 7, 15, 11, 8, 6, 6, 14, 12, 13, 5, 14, 13, 13, 7, 5,
    15, 5, 8, 11, 14, 14, 6, 14, 6, 9, 12, 9, 12, 5, 15, 8,
    8, 5, 12, 9, 12, 5, 14, 6, 8, 13, 6, 5, 15, 13, 11, 11,
)
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
