"""BIP340 Schnorr signatures and BIP341 key tweaking over secp256k1.

API:
    sign(secret32, msg, aux32=bytes(32)) -> 64-byte signature
        BIP340 "Default Signing"; msg of any length (32 bytes in Bitcoin use).
    verify(xonly32, msg, sig64) -> bool
        BIP340 "Verification"; any malformed input gives False.
    taproot_tweak(xonly32, merkle_root=None) -> t as 32 bytes (BIP341 tweak)
    taproot_tweak_pubkey(xonly32, merkle_root=None) -> (y_is_odd, tweaked_xonly32)
    taproot_tweak_secret(secret32, merkle_root=None) -> tweaked secret32
        BIP341 taproot_tweak_*: t = hashTapTweak(xonly || merkle_root), where
        merkle_root None (or b"") is the key-path-only tweak. ValueError when
        t >= N, the key is invalid, or the result is the point at infinity / 0.
"""
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import tagged_hash

N = ec.N


def _int(b):
    return int.from_bytes(b, "big")


def _b32(v):
    return v.to_bytes(32, "big")


def sign(secret32, msg, aux32=bytes(32)):
    if len(aux32) != 32:
        raise ValueError("aux_rand must be 32 bytes")
    if ec.NATIVE is not None:
        ec.scalar_from_secret(secret32)  # the same ValueError as below
        sig = ec.NATIVE.schnorr_sign(secret32, msg, aux32)
        if sig is None:
            raise ValueError("BIP340 nonce is zero")
        return sig
    d0, (px, py) = ec.keypair(secret32)
    d = d0 if py & 1 == 0 else N - d0
    pk = _b32(px)
    t = _b32(d ^ _int(tagged_hash("BIP0340/aux", aux32)))
    k0 = _int(tagged_hash("BIP0340/nonce", t + pk + bytes(msg))) % N
    if k0 == 0:
        # Probability ~2^-256; BIP340 says fail rather than sign.
        raise ValueError("BIP340 nonce is zero")
    rx, ry = ec.point_mul_g(k0)
    k = k0 if ry & 1 == 0 else N - k0
    r = _b32(rx)
    e = _int(tagged_hash("BIP0340/challenge", r + pk + bytes(msg))) % N
    return r + _b32((k + e * d) % N)


def verify(xonly32, msg, sig64):
    if len(xonly32) != 32 or len(sig64) != 64:
        return False
    if ec.NATIVE is not None:
        return ec.NATIVE.schnorr_verify(xonly32, msg, sig64)
    point = ec.lift_x(_int(xonly32))
    if point is None:
        return False
    r = _int(sig64[:32])
    s = _int(sig64[32:])
    if r >= ec.P or s >= N:
        return False
    e = _int(tagged_hash("BIP0340/challenge", bytes(sig64[:32]) + bytes(xonly32) + bytes(msg))) % N
    R = ec.point_mul_add_g(s, point, N - e)
    return R is not None and R[1] & 1 == 0 and R[0] == r


def taproot_tweak(xonly32, merkle_root=None):
    """BIP341 t = hashTapTweak(xonly || merkle_root) as 32 bytes, checked < N."""
    return _b32(_tap_tweak(xonly32, merkle_root))


def _tap_tweak(xonly32, merkle_root):
    if merkle_root is None:
        merkle_root = b""
    if len(merkle_root) not in (0, 32):
        raise ValueError("merkle root must be 32 bytes")
    t = _int(tagged_hash("TapTweak", bytes(xonly32) + bytes(merkle_root)))
    if t >= N:
        raise ValueError("taproot tweak out of range")
    return t


def taproot_tweak_pubkey(xonly32, merkle_root=None):
    if len(xonly32) != 32:
        raise ValueError("x-only public key must be 32 bytes")
    point = ec.lift_x(_int(xonly32))
    if point is None:
        raise ValueError("x-only public key is not on the curve")
    t = _tap_tweak(xonly32, merkle_root)
    q = ec.point_add(point, ec.point_mul_g(t))
    if q is None:
        raise ValueError("tweaked public key is the point at infinity")
    return q[1] & 1 == 1, _b32(q[0])


def taproot_tweak_secret(secret32, merkle_root=None):
    d, (px, py) = ec.keypair(secret32)
    if py & 1:
        d = N - d
    t = _tap_tweak(_b32(px), merkle_root)
    tweaked = (d + t) % N
    if tweaked == 0:
        raise ValueError("tweaked secret key is zero")
    return _b32(tweaked)
