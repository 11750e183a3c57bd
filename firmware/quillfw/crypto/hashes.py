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

# The 80 round constants, 8 bytes each (big-endian): a bytes literal stays in
# flash with the module where 80 int objects would cost ~4 KB of RAM, and only
# MicroPython needs them.
_K512_BLOB = (
    b"\x42\x8a\x2f\x98\xd7\x28\xae\x22\x71\x37\x44\x91\x23\xef\x65\xcd"
    b"\xb5\xc0\xfb\xcf\xec\x4d\x3b\x2f\xe9\xb5\xdb\xa5\x81\x89\xdb\xbc"
    b"\x39\x56\xc2\x5b\xf3\x48\xb5\x38\x59\xf1\x11\xf1\xb6\x05\xd0\x19"
    b"\x92\x3f\x82\xa4\xaf\x19\x4f\x9b\xab\x1c\x5e\xd5\xda\x6d\x81\x18"
    b"\xd8\x07\xaa\x98\xa3\x03\x02\x42\x12\x83\x5b\x01\x45\x70\x6f\xbe"
    b"\x24\x31\x85\xbe\x4e\xe4\xb2\x8c\x55\x0c\x7d\xc3\xd5\xff\xb4\xe2"
    b"\x72\xbe\x5d\x74\xf2\x7b\x89\x6f\x80\xde\xb1\xfe\x3b\x16\x96\xb1"
    b"\x9b\xdc\x06\xa7\x25\xc7\x12\x35\xc1\x9b\xf1\x74\xcf\x69\x26\x94"
    b"\xe4\x9b\x69\xc1\x9e\xf1\x4a\xd2\xef\xbe\x47\x86\x38\x4f\x25\xe3"
    b"\x0f\xc1\x9d\xc6\x8b\x8c\xd5\xb5\x24\x0c\xa1\xcc\x77\xac\x9c\x65"
    b"\x2d\xe9\x2c\x6f\x59\x2b\x02\x75\x4a\x74\x84\xaa\x6e\xa6\xe4\x83"
    b"\x5c\xb0\xa9\xdc\xbd\x41\xfb\xd4\x76\xf9\x88\xda\x83\x11\x53\xb5"
    b"\x98\x3e\x51\x52\xee\x66\xdf\xab\xa8\x31\xc6\x6d\x2d\xb4\x32\x10"
    b"\xb0\x03\x27\xc8\x98\xfb\x21\x3f\xbf\x59\x7f\xc7\xbe\xef\x0e\xe4"
    b"\xc6\xe0\x0b\xf3\x3d\xa8\x8f\xc2\xd5\xa7\x91\x47\x93\x0a\xa7\x25"
    b"\x06\xca\x63\x51\xe0\x03\x82\x6f\x14\x29\x29\x67\x0a\x0e\x6e\x70"
    b"\x27\xb7\x0a\x85\x46\xd2\x2f\xfc\x2e\x1b\x21\x38\x5c\x26\xc9\x26"
    b"\x4d\x2c\x6d\xfc\x5a\xc4\x2a\xed\x53\x38\x0d\x13\x9d\x95\xb3\xdf"
    b"\x65\x0a\x73\x54\x8b\xaf\x63\xde\x76\x6a\x0a\xbb\x3c\x77\xb2\xa8"
    b"\x81\xc2\xc9\x2e\x47\xed\xae\xe6\x92\x72\x2c\x85\x14\x82\x35\x3b"
    b"\xa2\xbf\xe8\xa1\x4c\xf1\x03\x64\xa8\x1a\x66\x4b\xbc\x42\x30\x01"
    b"\xc2\x4b\x8b\x70\xd0\xf8\x97\x91\xc7\x6c\x51\xa3\x06\x54\xbe\x30"
    b"\xd1\x92\xe8\x19\xd6\xef\x52\x18\xd6\x99\x06\x24\x55\x65\xa9\x10"
    b"\xf4\x0e\x35\x85\x57\x71\x20\x2a\x10\x6a\xa0\x70\x32\xbb\xd1\xb8"
    b"\x19\xa4\xc1\x16\xb8\xd2\xd0\xc8\x1e\x37\x6c\x08\x51\x41\xab\x53"
    b"\x27\x48\x77\x4c\xdf\x8e\xeb\x99\x34\xb0\xbc\xb5\xe1\x9b\x48\xa8"
    b"\x39\x1c\x0c\xb3\xc5\xc9\x5a\x63\x4e\xd8\xaa\x4a\xe3\x41\x8a\xcb"
    b"\x5b\x9c\xca\x4f\x77\x63\xe3\x73\x68\x2e\x6f\xf3\xd6\xb2\xb8\xa3"
    b"\x74\x8f\x82\xee\x5d\xef\xb2\xfc\x78\xa5\x63\x6f\x43\x17\x2f\x60"
    b"\x84\xc8\x78\x14\xa1\xf0\xab\x72\x8c\xc7\x02\x08\x1a\x64\x39\xec"
    b"\x90\xbe\xff\xfa\x23\x63\x1e\x28\xa4\x50\x6c\xeb\xde\x82\xbd\xe9"
    b"\xbe\xf9\xa3\xf7\xb2\xc6\x79\x15\xc6\x71\x78\xf2\xe3\x72\x53\x2b"
    b"\xca\x27\x3e\xce\xea\x26\x61\x9c\xd1\x86\xb8\xc7\x21\xc0\xc2\x07"
    b"\xea\xda\x7d\xd6\xcd\xe0\xeb\x1e\xf5\x7d\x4f\x7f\xee\x6e\xd1\x78"
    b"\x06\xf0\x67\xaa\x72\x17\x6f\xba\x0a\x63\x7d\xc5\xa2\xc8\x98\xa6"
    b"\x11\x3f\x98\x04\xbe\xf9\x0d\xae\x1b\x71\x0b\x35\x13\x1c\x47\x1b"
    b"\x28\xdb\x77\xf5\x23\x04\x7d\x84\x32\xca\xab\x7b\x40\xc7\x24\x93"
    b"\x3c\x9e\xbe\x0a\x15\xc9\xbe\xbc\x43\x1d\x67\xc4\x9c\x10\x0d\x4c"
    b"\x4c\xc5\xd4\xbe\xcb\x3e\x42\xb6\x59\x7f\x29\x9c\xfc\x65\x7e\x2a"
    b"\x5f\xcb\x6f\xab\x3a\xd6\xfa\xec\x6c\x44\x19\x8c\x4a\x47\x58\x17"
)
# the message schedule: one list, reused by every block, allocated with the module (at boot,
# at the heap's bottom): made at the first SHA-512 it lay amid that request's code, and split
# the free heap after it for good
_w512 = None if hasattr(hashlib, "sha512") else [0] * 80

_H512 = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)


def _sha512_constants():
    """The round constants, read from the blob in each round: 80 long ints kept
    in RAM would cost ~4 KB of a board's heap between hashes."""
    return _K512_BLOB


def _sha512_block(h, block, K):
    w = _w512
    for i in range(16):
        w[i] = int.from_bytes(block[8 * i:8 * i + 8], "big")
    for t in range(16, 80):
        x = w[t - 15]
        s0 = ((x >> 1) | (x << 63)) ^ ((x >> 8) | (x << 56)) ^ (x >> 7)
        x = w[t - 2]
        s1 = ((x >> 19) | (x << 45)) ^ ((x >> 61) | (x << 3)) ^ (x >> 6)
        w[t] = (w[t - 16] + (s0 & _M64) + w[t - 7] + (s1 & _M64)) & _M64
    a, b, c, d, e, f, g, hh = h
    for t in range(80):
        S1 = (((e >> 14) | (e << 50)) ^ ((e >> 18) | (e << 46)) ^ ((e >> 41) | (e << 23))) & _M64
        ch = (e & f) ^ (~e & g)
        t1 = (hh + S1 + ch + int.from_bytes(K[8 * t:8 * t + 8], "big") + w[t]) & _M64
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
    for t in range(80):
        w[t] = 0   # let the collector have the schedule's long ints
    return [(x + y) & _M64 for x, y in zip(h, (a, b, c, d, e, f, g, hh))]


def _sha512_pure(data):
    data = bytes(data)
    n = len(data)
    # FIPS 180-4 5.1.2: 0x80, zeros, then the 128-bit big-endian bit length.
    pad = b"\x80" + bytes((111 - n) % 128) + (n * 8).to_bytes(16, "big")
    global _w512
    if _w512 is None:       # a port with hashlib.sha512 (CPython), checked against it
        _w512 = [0] * 80
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
# (bytes: indexing gives ints; written as bytes literals, which a board keeps in
# flash with the module, where bytes((...)) kept an 80-entry tuple constant and
# the converted copy in the heap).
_RL = (
    b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
    b"\x07\x04\x0d\x01\x0a\x06\x0f\x03\x0c\x00\x09\x05\x02\x0e\x0b\x08"
    b"\x03\x0a\x0e\x04\x09\x0f\x08\x01\x02\x07\x00\x06\x0d\x0b\x05\x0c"
    b"\x01\x09\x0b\x0a\x00\x08\x0c\x04\x0d\x03\x07\x0f\x0e\x05\x06\x02"
    b"\x04\x00\x05\x09\x07\x0c\x02\x0a\x0e\x01\x03\x08\x0b\x06\x0f\x0d"
)
_RR = (
    b"\x05\x0e\x07\x00\x09\x02\x0b\x04\x0d\x06\x0f\x08\x01\x0a\x03\x0c"
    b"\x06\x0b\x03\x07\x00\x0d\x05\x0a\x0e\x0f\x08\x0c\x04\x09\x01\x02"
    b"\x0f\x05\x01\x03\x07\x0e\x06\x09\x0b\x08\x0c\x02\x0a\x00\x04\x0d"
    b"\x08\x06\x04\x01\x03\x0b\x0f\x00\x05\x0c\x02\x0d\x09\x07\x0a\x0e"
    b"\x0c\x0f\x0a\x04\x01\x05\x08\x07\x06\x02\x0d\x0e\x00\x03\x09\x0b"
)
_SL = (
    b"\x0b\x0e\x0f\x0c\x05\x08\x07\x09\x0b\x0d\x0e\x0f\x06\x07\x09\x08"
    b"\x07\x06\x08\x0d\x0b\x09\x07\x0f\x07\x0c\x0f\x09\x0b\x07\x0d\x0c"
    b"\x0b\x0d\x06\x07\x0e\x09\x0d\x0f\x0e\x08\x0d\x06\x05\x0c\x07\x05"
    b"\x0b\x0c\x0e\x0f\x0e\x0f\x09\x08\x09\x0e\x05\x06\x08\x06\x05\x0c"
    b"\x09\x0f\x05\x0b\x06\x08\x0d\x0c\x05\x0c\x0d\x0e\x0b\x08\x05\x06"
)
_SR = (
    b"\x08\x09\x09\x0b\x0d\x0f\x0f\x05\x07\x07\x08\x0b\x0e\x0e\x0c\x06"
    b"\x09\x0d\x0f\x07\x0c\x08\x09\x0b\x07\x07\x0c\x07\x06\x0f\x0d\x0b"
    b"\x09\x07\x0f\x0b\x08\x06\x06\x0e\x0c\x0d\x05\x0e\x0d\x0d\x07\x05"
    b"\x0f\x05\x08\x0b\x0e\x0e\x06\x0e\x06\x09\x0c\x09\x0c\x05\x0f\x08"
    b"\x08\x05\x0c\x09\x0c\x05\x0e\x06\x08\x0d\x06\x05\x0f\x0d\x0b\x0b"
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
