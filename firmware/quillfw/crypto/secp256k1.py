"""secp256k1 group arithmetic (SEC 2, section 2.4.1) in plain MicroPython.

Points are affine tuples (x, y) of ints, or None for the point at infinity.
Jacobian triples (X, Y, Z) stand for (X/Z^2, Y/Z^3) and never leave this module
except through the functions below.

API:
    P, N, G                         field prime, group order, generator (x, y)
    inverse(a, m) -> int            a^-1 mod m by extended Euclid (m prime, a != 0 mod m)
    scalar_from_secret(secret32)    int in 1..N-1, or ValueError (the secret is never echoed)
    point_mul_g(k) -> point         k*G with the precomputed comb table
    point_mul(point, k) -> point    k*point for any point (verification, tests)
    point_add(a, b) -> point        a + b
    point_neg(a) -> point           -a
    is_on_curve(point) -> bool
    lift_x(x: int) -> point|None    BIP340 lift_x: the point with even y, if any
    sec_encode(point, compressed=True) -> 33/65 bytes
    sec_decode(pubkey_bytes) -> point   02/03 + x or 04 + x + y; ValueError otherwise
    keypair(secret32) -> (d, point)  the checked scalar and d*G
    pubkey_from_secret(secret32, compressed=True) -> 33/65-byte SEC encoding
    xonly_from_secret(secret32) -> (x32 bytes, y_is_odd)
    clear_key_cache()               forget the cached public points (session end)

Why these choices (measured in shared/research/micropython-probe.md):
  * pow(x, -1, m) silently returns 0 on MicroPython, and pow(x, m-2, m) is 6x
    slower than extended Euclid there, so `inverse` uses Euclid.
  * k*G uses a single-table comb with 8 teeth: 255 precomputed affine points,
    31 doublings and at most 32 mixed additions per multiplication (6 teeth,
    63 points, was ~20% slower; see tests/bench/bench_signing_core.py). The table
    is one bytes blob (secp256k1_gtable.py, made by tools/gen_gtable.py) so it
    costs 16 KB instead of ~60 KB of int objects, and can live in flash.
  * Jacobian formulas are inlined into the hot loops: MicroPython's call and
    tuple overhead is comparable to a 256-bit modular multiplication.
  * keypair() remembers the public points of the last few secrets, keyed by
    a tagged hash of the secret (never the secret itself): a signing session
    signs many inputs with one key, and BIP340 signing and BIP341 secret
    tweaking both need d*G, which is half the cost of a Schnorr signature.
Not constant-time: timing depends on the scalar. See the research note.
"""
# The table is imported first, at module load: on a device loading .mpy files
# the 16 KB blob needs one contiguous heap block, which a fragmented heap may
# no longer have later (measured: lazy loading failed at -X heapsize=64K).
from quillfw.crypto.hashes import tagged_hash
from quillfw.crypto.secp256k1_gtable import COLS as _COLS
from quillfw.crypto.secp256k1_gtable import GTABLE as _GTABLE_BYTES
from quillfw.crypto.secp256k1_gtable import TEETH as _TEETH

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8
G = (GX, GY)

_GTABLE = memoryview(_GTABLE_BYTES)  # slicing a memoryview copies nothing
_SQRT_EXP = (P + 1) // 4  # P = 3 mod 4, so a^((P+1)/4) is a square root of a


def inverse(a, m):
    """a^-1 mod m by the extended Euclidean algorithm (never pow(a, -1, m))."""
    a %= m
    if a == 0:
        raise ZeroDivisionError("no inverse of 0")
    t0, t1, r0, r1 = 0, 1, m, a
    while r1:
        q = r0 // r1
        t0, t1 = t1, t0 - q * t1
        r0, r1 = r1, r0 - q * r1
    return t0 % m


def scalar_from_secret(secret32):
    """The secret key as an int, checked to be a valid scalar (1..N-1)."""
    if len(secret32) != 32:
        raise ValueError("secret key must be 32 bytes")
    d = int.from_bytes(secret32, "big")
    if d == 0 or d >= N:
        raise ValueError("secret key out of range")
    return d


# --- Jacobian arithmetic (a = 0; "dbl-2009-l" and "madd-2007-bl" style) --------

def _jac_double(X, Y, Z):
    if Y == 0:
        return None
    YY = Y * Y % P
    S = 4 * X * YY % P
    M = 3 * X * X % P
    X3 = (M * M - 2 * S) % P
    return X3, (M * (S - X3) - 8 * YY * YY) % P, 2 * Y * Z % P


def _jac_add(p1, p2):
    """Full Jacobian addition, handling doubling and infinity."""
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    X1, Y1, Z1 = p1
    X2, Y2, Z2 = p2
    Z1Z1 = Z1 * Z1 % P
    Z2Z2 = Z2 * Z2 % P
    U1 = X1 * Z2Z2 % P
    U2 = X2 * Z1Z1 % P
    S1 = Y1 * Z2 * Z2Z2 % P
    S2 = Y2 * Z1 * Z1Z1 % P
    H = (U2 - U1) % P
    r = (S2 - S1) % P
    if H == 0:
        if r == 0:
            return _jac_double(X1, Y1, Z1)
        return None
    HH = H * H % P
    HHH = H * HH % P
    V = U1 * HH % P
    X3 = (r * r - HHH - 2 * V) % P
    return X3, (r * (V - X3) - S1 * HHH) % P, Z1 * Z2 * H % P


def _to_affine(jp):
    if jp is None:
        return None
    X, Y, Z = jp
    zi = inverse(Z, P)
    zi2 = zi * zi % P
    return X * zi2 % P, Y * zi2 * zi % P


# --- fixed-base multiplication: comb over the precomputed table -------------

def _comb_g(k):
    """k*G in Jacobian coordinates for 0 < k < N.

    The comb (Lim-Lee, one table): write k as TEETH rows of COLS bits; column c
    (bit c of every row) selects the table entry sum(2^(COLS*row) * G over the
    rows whose bit is set), and columns are processed from the top with one
    doubling each: COLS-1 doublings and at most COLS mixed additions.
    """
    tab, teeth, cols = _GTABLE, _TEETH, _COLS
    p = P
    # Transpose: idx[c] collects bit c of row j as its bit j.
    idx = [0] * cols
    mask = (1 << cols) - 1
    for j in range(teeth):
        row = (k >> (cols * j)) & mask
        bit = 1 << j
        c = 0
        while row:
            if row & 1:
                idx[c] |= bit
            row >>= 1
            c += 1
    X = Y = Z = 0
    inf = True  # k > 0, so some column is non-zero and sets the accumulator
    for c in range(cols - 1, -1, -1):
        if not inf:
            # doubling, a = 0
            YY = Y * Y % p
            S = (X * YY << 2) % p
            M = 3 * X * X % p
            X = (M * M - 2 * S) % p
            Z = 2 * Y * Z % p
            Y = (M * (S - X) - 8 * YY * YY) % p
        i = idx[c]
        if i:
            o = (i - 1) << 6
            tx = int.from_bytes(tab[o:o + 32], "big")
            ty = int.from_bytes(tab[o + 32:o + 64], "big")
            if inf:
                X, Y, Z, inf = tx, ty, 1, False
                continue
            # mixed addition, Jacobian + affine
            Z1Z1 = Z * Z % p
            H = (tx * Z1Z1 - X) % p
            r = (ty * Z % p * Z1Z1 - Y) % p
            # H = 0 (accumulator A = +-T, the table point, mod N) cannot
            # happen for 0 < k < N: A (k with the low c+1 bits of each row
            # cleared) and T (bit c of each row) have disjoint bits, T < N, and
            # for c > 0 both A and A + T are even while N is odd; for c = 0,
            # A + T = k < N. So no doubling/infinity special case is needed.
            HH = H * H % p
            HHH = H * HH % p
            V = X * HH % p
            X3 = (r * r - HHH - 2 * V) % p
            Y = (r * (V - X3) - Y * HHH) % p
            X = X3
            Z = Z * H % p
    return X, Y, Z


def point_mul_g(k):
    """k*G as an affine point (None when k = 0 mod N)."""
    k %= N
    if k == 0:
        return None
    return _to_affine(_comb_g(k))


def point_mul(point, k):
    """k*point for any affine point, with a 4-bit fixed window."""
    k %= N
    if point is None or k == 0:
        return None
    base = (point[0], point[1], 1)
    multiples = [None, base]
    for _ in range(14):
        multiples.append(_jac_add(multiples[-1], base))
    acc = None
    shift = 252
    while shift >= 0:
        if acc is not None:
            for _ in range(4):
                acc = _jac_double(*acc)
                if acc is None:
                    break
        acc = _jac_add(acc, multiples[(k >> shift) & 15])
        shift -= 4
    return _to_affine(acc)


def point_add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _to_affine(_jac_add((a[0], a[1], 1), (b[0], b[1], 1)))


def point_neg(a):
    if a is None:
        return None
    return a[0], (P - a[1]) % P


def is_on_curve(point):
    if point is None:
        return False
    x, y = point
    return 0 <= x < P and 0 <= y < P and (y * y - x * x * x - 7) % P == 0


def lift_x(x):
    """BIP340 lift_x: the curve point with this x and an even y, or None."""
    if not 0 <= x < P:
        return None
    c = (x * x * x + 7) % P
    y = pow(c, _SQRT_EXP, P)
    if y * y % P != c:
        return None
    return x, (y if y & 1 == 0 else P - y)


# --- SEC 1 encodings (section 2.3.3 / 2.3.4) ---------------------------------

def sec_encode(point, compressed=True):
    if point is None:
        raise ValueError("cannot encode the point at infinity")
    x, y = point
    if compressed:
        return (b"\x03" if y & 1 else b"\x02") + x.to_bytes(32, "big")
    return b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")


def sec_decode(pubkey):
    """Parse a compressed (02/03) or uncompressed (04) public key."""
    n = len(pubkey)
    prefix = pubkey[0] if n else -1
    if n == 33 and prefix in (2, 3):
        point = lift_x(int.from_bytes(pubkey[1:33], "big"))
        if point is None:
            raise ValueError("public key x is not on the curve")
        if prefix == 3:
            point = point_neg(point)
        return point
    if n == 65 and prefix == 4:
        point = (int.from_bytes(pubkey[1:33], "big"), int.from_bytes(pubkey[33:65], "big"))
        if not is_on_curve(point):
            raise ValueError("public key is not on the curve")
        return point
    raise ValueError("public key must be 33 bytes (02/03) or 65 bytes (04)")


_KEY_CACHE_SIZE = 8
_key_cache = {}


def keypair(secret32):
    """(d, d*G) for a secret key: d checked to be in 1..N-1."""
    d = scalar_from_secret(secret32)
    fingerprint = tagged_hash("QuillKeyCache", secret32)
    point = _key_cache.get(fingerprint)
    if point is None:
        point = point_mul_g(d)
        if len(_key_cache) >= _KEY_CACHE_SIZE:
            _key_cache.clear()  # dicts are unordered on MicroPython: no LRU
        _key_cache[fingerprint] = point
    return d, point


def clear_key_cache():
    _key_cache.clear()


def pubkey_from_secret(secret32, compressed=True):
    return sec_encode(keypair(secret32)[1], compressed)


def xonly_from_secret(secret32):
    x, y = keypair(secret32)[1]
    return x.to_bytes(32, "big"), y & 1 == 1
