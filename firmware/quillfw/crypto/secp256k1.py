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
    point_mul_add_g(a, point, b)    a*G + b*point (verification: one inversion)
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
    NATIVE                          the optional libsecp256k1 module, or None (pure arithmetic)

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
from quillfw.compat import const
from quillfw.crypto.hashes import tagged_hash

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8
G = (GX, GY)


def _native_module():
    """quill_secp256k1, libsecp256k1 as a native .mpy (firmware/natmod), when it is
    on the path, unless $QUILL_CRYPTO (the emulator's quill-emu --crypto) is
    "python"; "native" makes its absence an ImportError. Boards have no
    environment: they use the module when it was deployed."""
    try:
        from os import getenv
        choice = getenv("QUILL_CRYPTO") or "auto"
    except ImportError:  # boards
        choice = "auto"
    if choice == "python":
        return None
    try:
        import quill_secp256k1
    except (ImportError, ValueError):  # ValueError: built for another architecture
        if choice == "native":
            raise
        return None
    return quill_secp256k1


# ecdsa and schnorr sign and verify with NATIVE when it is set (get_info's crypto_backend).
NATIVE = _native_module()
del _native_module
# The comb's table, only for the pure arithmetic (with NATIVE, k*G is its pubkey): 16 KB
# of a board's heap that the module's own tables already stand for. Imported at module
# load: on a device loading .mpy files the blob needs one contiguous heap block, which a
# fragmented heap may no longer have later (measured: lazy loading failed at -X heapsize=64K).
if NATIVE is None:
    from quillfw.crypto.secp256k1_gtable import GTABLE as _GTABLE_BYTES
else:
    _GTABLE_BYTES = b""


def _thumb_module():
    """quillfw.crypto.secp256k1_thumb, the field arithmetic in inline Thumb assembler,
    on a Cortex-M board; None elsewhere (CPython has no micropython module, other
    MicroPython ports reject the decorator or the ARMv6-M .mpy)."""
    if NATIVE is not None:
        return None
    try:
        import micropython  # noqa: F401  (none on CPython: the Thumb module is not even read there)

        from quillfw.crypto import secp256k1_thumb
    except Exception:  # ImportError, SyntaxError, ValueError: incompatible .mpy arch
        return None
    return secp256k1_thumb


_FE = _thumb_module()
del _thumb_module
# _FE's one working buffer, allocated once while the heap is young: 32-byte field
# elements in the slots below (slot i at byte 32*i), the product scratch in slots
# 0-1 and the comb's column digits in slot 15.
_FB = bytearray(512) if _FE is not None else None
_X = const(2)
_Y = const(3)
_Z = const(4)
_TX = const(5)
_TY = const(6)
_ZZ = const(7)
_H = const(8)
_R = const(9)
_HH = const(10)
_HHH = const(11)
_V = const(12)
_S = const(13)
_ZERO = const(14)
_IDX = const(480)  # slot 15, as a byte offset

_GTABLE = memoryview(_GTABLE_BYTES)  # slicing a memoryview copies nothing


def inverse(a, m):
    """a^-1 mod m by the extended Euclidean algorithm (never pow(a, -1, m)),
    with Lehmer's steps (Knuth, TAOCP 4.5.2, Algorithm L): while the remainders
    are long, the quotients are found from their top 28 bits in small ints, and
    each batch of ~15 steps is applied to the big ints at once: 4x fewer big-int
    operations, so less time and garbage, than one full step per quotient."""
    a %= m
    if a == 0:
        raise ZeroDivisionError("no inverse of 0")
    r0, r1, t0, t1 = m, a, 0, 1
    sh = 0
    while r0 >> sh >= 1 << 28:
        sh += 8
    while r1 >> 28:
        while sh and r0 >> sh < 1 << 24:
            sh -= 4
        x = r0 >> sh
        y = r1 >> sh
        A, B, C, D = 1, 0, 0, 1  # noqa: N806 (Knuth's names)
        while y + C and y + D:
            q = (x + A) // (y + C)
            if q != (x + B) // (y + D):
                break
            A, C = C, A - q * C  # noqa: N806
            B, D = D, B - q * D  # noqa: N806
            x, y = y, x - q * y
        if B == 0:
            q, r = divmod(r0, r1)
            r0, r1 = r1, r
            t0, t1 = t1, t0 - q * t1
        else:
            r0, r1 = A * r0 + B * r1, C * r0 + D * r1
            t0, t1 = A * t0 + B * t1, C * t0 + D * t1
    while r1:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    return t0 % m


def scalar_from_secret(secret32):
    """The secret key as an int, checked to be a valid scalar (1..N-1)."""
    if len(secret32) != 32:
        raise ValueError("secret key must be 32 bytes")
    d = int.from_bytes(secret32, "big")
    if d == 0 or d >= N:
        raise ValueError("secret key out of range")
    return d


# --- field arithmetic mod P ---------------------------------------------------
#
# Two implementations of the same formulas, giving the same points:
#  * on a Cortex-M board, _FE (secp256k1_thumb, inline assembler) works on
#    32-byte little-endian elements inside the one buffer _FB: no big-int object
#    is created per operation, so a signature leaves almost no garbage, and a
#    256-bit product with its reduction costs ~1,600 instructions instead of
#    ~16,000 for a big-int product and its reduction on a Cortex-M0+;
#  * everywhere else (the unix port, CPython), big ints reduced with one % P per
#    product: on a 64-bit port a % P costs what two folds by 2^256 = 2^32 + 977
#    cost, and it allocates one int instead of eight.

_M256 = const((1 << 256) - 1)


# libsecp256k1's addition chain for a^((P+1)/4): per step, how many squarings of
# the previous result, then which earlier result multiplies it (255: none);
# results 0.. are a, a^(2^2-1), a^(2^3-1), a^(2^6-1), .., 2^9, 2^11, 2^22, 2^44, 2^88,
# 2^176, 2^220, 2^223 - 1, then the tail.
_SQRT_CHAIN = const(b"\x01\x00\x01\x00\x03\x02\x03\x02\x02\x01\x0b\x05\x16\x06"
                    b"\x2c\x07\x58\x08\x2c\x07\x03\x02\x17\x06\x06\x01\x02\xff")


# --- Jacobian arithmetic (a = 0; "dbl-2009-l" and "add-2007-bl" style) -------
# General-purpose, canonical (% P) versions for the rare paths: table
# construction, adding two results, tests. Inputs may be loose.

def _jac_double(X, Y, Z):
    if Y % P == 0:
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
    if _FE is not None:
        return _to_affine_thumb(X, Y, Z)
    zi = inverse(Z, P)
    zi2 = zi * zi % P
    return X * zi2 % P, Y * zi2 * zi % P


# --- the Thumb arithmetic's programs (tools/gen_fe_thumb.py: run's operations) --

_MUL, _SUB, _ADD, _MULK, _LOAD, _NEGIF, _SQRN = 1, 2, 3, 4, 5, 6, 7
_SQRT_OUT = const(13)  # _S: where _SQRT_CHAIN's last result lands


def _program(*parts):
    """run's bytes program: the operations of parts in order, then op 0."""
    out = bytearray()
    for ops in parts:
        for op in ops:
            out.extend(bytes(op))
    return bytes(out) + bytes(4)


def _chain_ops(chain):
    """(dst, src, squarings, multiplier) steps as operations."""
    return [op for dst, src, n, m in chain for op in ((_SQRN, dst, src, n), (_MUL, dst, dst, m))]


def _thumb_programs():
    """The programs, built once at import: their operation tuples are then garbage."""
    # libsecp256k1's former addition chain for a^(P-2) = a^-1 (Fermat): a in _TX, then
    # x2, x3, x11, x22, x44, x88 (x_n = a^(2^n - 1)) in _TY, _ZZ, _H, _R, _HH, _HHH and
    # the running value in _S; 255 squarings and 15 multiplications.
    inv = _chain_ops(((_TY, _TX, 1, _TX), (_ZZ, _TY, 1, _TX), (_S, _ZZ, 3, _ZZ), (_S, _S, 3, _ZZ),
                      (_H, _S, 2, _TY), (_R, _H, 11, _H), (_HH, _R, 22, _R), (_HHH, _HH, 44, _HH),
                      (_S, _HHH, 88, _HHH), (_S, _S, 44, _HH), (_S, _S, 3, _ZZ), (_S, _S, 23, _R),
                      (_S, _S, 5, _TX), (_S, _S, 3, _TY), (_S, _S, 2, _TX)))
    # dbl-2009-l, as _comb_pure doubles: YY in _ZZ, M in _H
    dbl = ((_MUL, _ZZ, _Y, _Y), (_MUL, _S, _X, _ZZ), (_MULK, _S, _S, 4), (_MUL, _H, _X, _X),
           (_MULK, _H, _H, 3), (_MUL, _Z, _Y, _Z), (_ADD, _Z, _Z, _Z), (_MUL, _X, _H, _H),
           (_SUB, _X, _X, _S), (_SUB, _X, _X, _S), (_SUB, _S, _S, _X), (_MUL, _S, _H, _S),
           (_MUL, _ZZ, _ZZ, _ZZ), (_MULK, _ZZ, _ZZ, 8), (_SUB, _Y, _S, _ZZ))
    # the affine point at src + off (negated if the flag is set): into (_X, _Y), or
    # added to (_X, _Y, _Z) by madd-2007-bl as _comb_pure adds (H = 0 leaves Z = 0)
    put = ((_LOAD, _X, 0, 0), (_LOAD, _Y, 0, 1), (_NEGIF, _Y, _ZERO, _Y))
    madd = ((_LOAD, _TX, 0, 0), (_LOAD, _TY, 0, 1), (_NEGIF, _TY, _ZERO, _TY),
            (_MUL, _ZZ, _Z, _Z), (_MUL, _H, _TX, _ZZ), (_SUB, _H, _H, _X), (_MUL, _R, _TY, _Z),
            (_MUL, _R, _R, _ZZ), (_SUB, _R, _R, _Y), (_MUL, _HH, _H, _H), (_MUL, _HHH, _H, _HH),
            (_MUL, _V, _X, _HH), (_MUL, _Z, _Z, _H), (_MUL, _X, _R, _R), (_SUB, _X, _X, _HHH),
            (_SUB, _X, _X, _V), (_SUB, _X, _X, _V), (_SUB, _S, _V, _X), (_MUL, _S, _R, _S),
            (_MUL, _Y, _Y, _HHH), (_SUB, _Y, _S, _Y))
    # (X/Z^2, Y/Z^3) with _S = Z^-1
    affine = ((_MUL, _Z, _S, _S), (_MUL, _X, _X, _Z), (_MUL, _Y, _Y, _Z), (_MUL, _Y, _Y, _S))
    # _SQRT_CHAIN: results 0, 1, 2, 5, 6, 7, 8 are multipliers later and keep a slot;
    # the others live only in the running slot _S
    slots = {0: _TX, 1: _TY, 2: _ZZ, 5: _H, 6: _R, 7: _HH, 8: _HHH}
    sqrt = []
    prev = _TX
    for i in range(0, len(_SQRT_CHAIN), 2):
        dst = slots.get((i >> 1) + 1, _S)
        sqrt.append((_SQRN, dst, prev, _SQRT_CHAIN[i]))
        if _SQRT_CHAIN[i + 1] != 255:
            sqrt.append((_MUL, dst, dst, slots[_SQRT_CHAIN[i + 1]]))
        prev = dst
    assert prev == _SQRT_OUT
    return (_program(dbl, madd), _program(dbl, dbl, dbl, dbl, madd), _program(madd), _program(put),
            _program(inv), _program(inv, affine), _program(sqrt))


if _FE is not None:
    _run = _FE.run
    _P_DBL_MADD, _P_DBL4_MADD, _P_MADD, _P_SET, _P_INV, _P_INV_AFFINE, _P_SQRT = _thumb_programs()
_ONE_LE = b"\x01" + bytes(31)
_ZERO32 = bytes(32)


def _fe_set(slot, v):
    _FB[slot << 5:(slot << 5) + 32] = (v % P).to_bytes(32, "little")


def _fe_get(slot):
    return int.from_bytes(_FB[slot << 5:(slot << 5) + 32], "little") % P


def _thumb_xyz():
    """(_X, _Y, _Z) as loose ints."""
    fb = _FB
    return (int.from_bytes(fb[64:96], "little"), int.from_bytes(fb[96:128], "little"),
            int.from_bytes(fb[128:160], "little"))


def _inverse_p(a):
    """a^-1 mod P: by Fermat with the Thumb arithmetic, else inverse()."""
    if _FE is None:
        return inverse(a, P)
    if a % P == 0:
        raise ZeroDivisionError("no inverse of 0")
    _fe_set(_TX, a)
    _run(_FB, _P_INV, None, 0)
    return _fe_get(_S)


def _to_affine_thumb(X, Y, Z):
    """_to_affine with the Thumb arithmetic: Z^-1 by Fermat, one call."""
    if Z % P == 0:
        raise ZeroDivisionError("no inverse of 0")
    _fe_set(_TX, Z)
    _fe_set(_X, X)
    _fe_set(_Y, Y)
    _run(_FB, _P_INV_AFFINE, None, 0)
    return _fe_get(_X), _fe_get(_Y)


# --- fixed-base multiplication: signed comb over the precomputed table -------

def _comb_g(k):
    """k*G in loose Jacobian coordinates, for 0 < k < N.

    The signed multi-comb of libsecp256k1's ecmult_gen: for odd k the bits b_i
    of (k + 2^256 - 1) / 2 give k = sum((2*b_i - 1) * 2^i), every digit +-1.
    Bit i = block*128 + tooth*16 + column; the 16 columns are processed from
    the top with one doubling each, and in each column each of the 2 blocks
    adds its table entry for the column's 8 digits (negated when the top tooth
    is -1, as the complement of every digit is the negated point): 15
    doublings and 32 mixed additions, no column ever empty. An even k is
    computed as N - k and negated.
    """
    if NATIVE is not None:
        xy = NATIVE.pubkey(k.to_bytes(32, "big"))
        return int.from_bytes(xy[:32], "big"), int.from_bytes(xy[32:], "big"), 1
    k0 = k
    negate = not k & 1
    if negate:
        k = N - k
    if _FE is not None:
        X, Y, Z = _comb_thumb(k)
    else:
        X, Y, Z = _comb_pure(k)
    if negate:
        Y = -Y
    if Z % P == 0:
        return _window_mul(G, k0)
    return X, Y, Z


def _comb_digits(k, idx, base):
    """idx[base + block*16 + column] = the column's digits of odd k, tooth j as bit j
    (1 = +1); idx[base:base + 32] must be zero."""
    b = ((k + _M256) >> 1).to_bytes(32, "little")
    for o in range(0, 32, 2):  # o = block*16 + tooth*2: one 16-bit row
        row = b[o] | b[o + 1] << 8
        bit = 1 << ((o >> 1) & 7)
        c = base + (o & 16)
        while row:
            if row & 1:
                idx[c] |= bit
            row >>= 1
            c += 1


def _comb_pure(k):
    """_comb_g's columns for odd k in big-int arithmetic: (X, Y, Z) loose."""
    tab = _GTABLE
    idx = bytearray(32)
    _comb_digits(k, idx, 0)
    X = Y = Z = 0
    first = True
    for c in range(15, -1, -1):
        if not first:
            # doubling (dbl-2009-l, a = 0)
            YY = Y * Y % P
            S = (X * YY << 2) % P
            M = X * X * 3 % P
            Z = (Y * Z << 1) % P
            X = (M * M - (S << 1)) % P
            Y = (M * (S - X) - (YY * YY << 3)) % P
        for blk in (0, 16):
            i = idx[blk + c]
            if i & 128:
                o = ((blk << 3) + (i & 127)) << 6
                tx = int.from_bytes(tab[o:o + 32], "big")
                ty = int.from_bytes(tab[o + 32:o + 64], "big")
            else:
                o = ((blk << 3) + 127 - i) << 6
                tx = int.from_bytes(tab[o:o + 32], "big")
                ty = P - int.from_bytes(tab[o + 32:o + 64], "big")
            if first:
                X, Y, Z, first = tx, ty, 1, False
                continue
            # mixed addition (madd-2007-bl), Jacobian + affine table point.
            # Should the accumulator ever equal +-T (H = 0 mod P), the sum is
            # wrong but Z becomes 0 mod P and stays so: checked once below, and such a
            # scalar is redone by _window_mul.
            ZZ = Z * Z % P
            H = tx * ZZ % P - X
            r = ty * Z % P * ZZ % P - Y
            HH = H * H % P
            HHH = H * HH % P
            V = X * HH % P
            Z = Z * H % P
            X = (r * r - HHH - (V << 1)) % P
            Y = (r * (V - X) - Y * HHH) % P
    return X, Y, Z


def _comb_thumb(k):
    """_comb_g's columns for odd k with the Thumb arithmetic (_FE) in _FB: the same
    formulas as _comb_pure, one call per column and block, nothing allocated until
    the result's ints."""
    fb, tab, run = _FB, _GTABLE_BYTES, _run
    fb[_IDX:_IDX + 32] = _ZERO32
    _comb_digits(k, fb, _IDX)
    for c in range(15, -1, -1):
        for blk in (0, 16):
            i = fb[_IDX + blk + c]
            if i & 128:  # src offset << 1 | negate
                o = ((blk << 3) + (i & 127)) << 7
            else:
                o = ((blk << 3) + 127 - i) << 7 | 1
            if c != 15:
                run(fb, _P_DBL_MADD if blk == 0 else _P_MADD, tab, o)
            elif blk == 0:
                run(fb, _P_SET, tab, o)
                fb[128:160] = _ONE_LE
            else:
                run(fb, _P_MADD, tab, o)
    return _thumb_xyz()


def point_mul_g(k):
    """k*G as an affine point (None when k = 0 mod N)."""
    k %= N
    if k == 0:
        return None
    return _to_affine(_comb_g(k))


# --- variable-base multiplication: signed 4-bit window over affine multiples -

def _window_mul(point, k):
    """k*point in loose Jacobian coordinates, for an affine point and 0 < k < N.

    An odd k is recoded into 64 odd digits d in -15..15 (k = sum(d_i * 16^i),
    Joye-Tunstall), so 1, 3, .., 15 times the point (made affine with one
    inversion) and their negations cover every digit: 63 rounds of four
    doublings and one mixed addition. An even k is computed as N - k, negated.
    An exceptional addition (only possible for k within 30 of N) leaves Z = 0
    mod P, and that scalar is redone by double-and-add with the complete formulas.
    """
    k0 = k
    negate = not k & 1
    if negate:
        k = N - k
    digits = bytearray(64)  # d + 16
    for i in range(63):
        d = (k & 31) - 16
        digits[i] = d + 16
        k = (k - d) >> 4
    digits[63] = k + 16
    jac = [(point[0], point[1], 1)]
    two = _jac_double(point[0], point[1], 1)
    for _ in range(7):
        jac.append(_jac_add(jac[-1], two))
    # made affine with one inversion (Montgomery's trick: invert the product of
    # the Z's, then peel off one factor per point)
    prefix = [1] * 8
    acc = 1
    for i in range(8):
        prefix[i] = acc
        acc = acc * jac[i][2] % P
    inv = _inverse_p(acc)
    table = [None] * 8
    for i in range(7, -1, -1):
        X, Y, Z = jac[i]
        zi = inv * prefix[i] % P
        inv = inv * Z % P
        zi2 = zi * zi % P
        table[i] = (X * zi2 % P, Y * zi2 * zi % P)
    jac = two = prefix = None
    if _FE is not None:
        X, Y, Z = _window_thumb(digits, table)
    else:
        X, Y, Z = _window_pure(digits, table)
    if negate:
        Y = -Y
    if Z % P == 0:
        # double-and-add with the complete formulas
        acc = None
        base = (point[0], point[1], 1)
        for i in range(255, -1, -1):
            if acc is not None:
                acc = _jac_double(*acc)
            if k0 >> i & 1:
                acc = _jac_add(acc, base)
        return acc
    return X, Y, Z


def _window_thumb(digits, table):
    """_window_mul's rounds with the Thumb arithmetic: the table as big-endian bytes."""
    fb, run = _FB, _run
    tab = b"".join(x.to_bytes(32, "big") + y.to_bytes(32, "big") for x, y in table)
    d = digits[63] - 16
    run(fb, _P_SET, tab, ((d if d > 0 else -d) >> 1 << 7) | (d < 0))
    fb[128:160] = _ONE_LE
    for i in range(62, -1, -1):
        d = digits[i] - 16
        run(fb, _P_DBL4_MADD, tab, ((d if d > 0 else -d) >> 1 << 7) | (d < 0))
    return _thumb_xyz()


def _window_pure(digits, table):
    """_window_mul's rounds in big-int arithmetic: (X, Y, Z) loose."""
    X = Y = Z = 0
    first = True
    for i in range(63, -1, -1):
        if not first:
            for _ in range(4):
                # doubling (dbl-2009-l, a = 0)
                YY = Y * Y % P
                S = (X * YY << 2) % P
                M = X * X * 3 % P
                Z = (Y * Z << 1) % P
                X = (M * M - (S << 1)) % P
                Y = (M * (S - X) - (YY * YY << 3)) % P
        d = digits[i] - 16
        if d > 0:
            tx, ty = table[d >> 1]
        else:
            tx, ty = table[(-d) >> 1]
            ty = P - ty
        if first:
            X, Y, Z, first = tx, ty, 1, False
            continue
        ZZ = Z * Z % P
        H = tx * ZZ % P - X
        r = ty * Z % P * ZZ % P - Y
        HH = H * H % P
        HHH = H * HH % P
        V = X * HH % P
        Z = Z * H % P
        X = (r * r - HHH - (V << 1)) % P
        Y = (r * (V - X) - Y * HHH) % P
    return X, Y, Z


def point_mul(point, k):
    """k*point for any affine point."""
    k %= N
    if point is None or k == 0:
        return None
    return _to_affine(_window_mul(point, k))


def point_mul_add_g(a, point, b):
    """a*G + b*point as an affine point (None for infinity), with one
    inversion: what ECDSA and BIP340 verification need."""
    a %= N
    b %= N
    acc = _comb_g(a) if a else None
    if point is not None and b:
        acc = _jac_add(acc, _window_mul(point, b))
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


def _sqrt_thumb(c):
    """c^((P+1)/4) with the Thumb arithmetic, by _SQRT_CHAIN: one call."""
    _fe_set(_TX, c)
    _run(_FB, _P_SQRT, None, 0)
    return _fe_get(_SQRT_OUT)


def lift_x(x):
    """BIP340 lift_x: the curve point with this x and an even y, or None."""
    if not 0 <= x < P:
        return None
    c = (x * x * x + 7) % P
    # y = c^((P+1)/4), a square root of c if it has one (P = 3 mod 4), by the
    # chain above: 253 squarings and 13 multiplications
    if _FE is not None:
        y = _sqrt_thumb(c)
    else:
        r = [c]
        for i in range(0, len(_SQRT_CHAIN), 2):
            t = r[-1]
            for _ in range(_SQRT_CHAIN[i]):
                t = t * t % P
            j = _SQRT_CHAIN[i + 1]
            if j != 255:
                t = t * r[j] % P
            r.append(t)
        y = r[-1]
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


_KEY_CACHE_SIZE = const(4)
_SLOT = const(96)   # fingerprint, x, y: 32 bytes each
# One block allocated at import and overwritten in turn: cached points kept as
# ints (a tuple, two ints and their digits per key) were small long-lived
# objects scattered through the heap a session signs in, splitting its holes.
_key_cache = bytearray(_KEY_CACHE_SIZE * _SLOT)
_key_cache_used = bytearray(2)     # slots filled, next slot to overwrite


def _cached_point(fingerprint):
    cache = _key_cache
    for o in range(0, _key_cache_used[0] * _SLOT, _SLOT):
        if cache[o:o + 32] == fingerprint:
            return (int.from_bytes(cache[o + 32:o + 64], "big"),
                    int.from_bytes(cache[o + 64:o + 96], "big"))
    return None


def _cache_point(fingerprint, point):
    used = _key_cache_used
    o = used[1] * _SLOT
    _key_cache[o:o + 32] = fingerprint
    _key_cache[o + 32:o + 64] = point[0].to_bytes(32, "big")
    _key_cache[o + 64:o + 96] = point[1].to_bytes(32, "big")
    used[1] = (used[1] + 1) % _KEY_CACHE_SIZE
    if used[0] < _KEY_CACHE_SIZE:
        used[0] += 1


def keypair(secret32):
    """(d, d*G) for a secret key: d checked to be in 1..N-1."""
    d = scalar_from_secret(secret32)
    fingerprint = tagged_hash("QuillKeyCache", secret32)
    point = _cached_point(fingerprint)
    if point is None:
        if NATIVE is not None:
            xy = NATIVE.pubkey(secret32)
            point = (int.from_bytes(xy[:32], "big"), int.from_bytes(xy[32:], "big"))
        else:
            point = point_mul_g(d)
        _cache_point(fingerprint, point)
    return d, point


def clear_key_cache():
    for i in range(len(_key_cache)):
        _key_cache[i] = 0
    _key_cache_used[0] = _key_cache_used[1] = 0


def pubkey_from_secret(secret32, compressed=True):
    return sec_encode(keypair(secret32)[1], compressed)


def xonly_from_secret(secret32):
    x, y = keypair(secret32)[1]
    return x.to_bytes(32, "big"), y & 1 == 1
