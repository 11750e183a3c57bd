"""The native module's ARMv6-M field multiplication and squaring (the hand-scheduled
Thumb-1 of firmware/natmod/quill_secp256k1/quill_fe_cols_armv6m.S) against Python's
big integers, on the Cortex-M0+ target.

The profiling build of the module (natmod.build(..., profile=True): the same assembly,
plus fe_mul/fe_sqr on raw 10x26 limbs) runs on qemu-m0plus. Inputs: limbs at every
magnitude libsecp256k1 may pass (1 to 8: limb i <= 2*m*(2^26 - 1), limb 9 <=
2*m*(2^22 - 1)), drawn at random, at their maxima, at zero, and the normalized values
around p and 2^256. Each result must be congruent to the product mod p and have
magnitude 1 (what the library assumes of it). The same build's hooks also check the
other ARMv6-M code the module swaps into libsecp256k1 (quill_libsecp256k1_armv6m.c):
the constant-time inverses mod p and mod n (the safegcd matrix products of
quill_modinv_armv6m.S, and the divsteps of quill_divsteps_armv6m.S) against pow(x, -1, m)
on edge and random values, the comb's table lookup (quill_comb_armv6m.S) picking each
entry of a random row, and SHA-256's compression (quill_sha256_armv6m.S) against
hashlib. ~40 s.
"""
import random

import pytest

from quill.emulator import natmod, qemu
from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.toolchains import unavailable

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
RANDOM_INVERSES = 300
M26, M22 = 0x3FFFFFF, 0x3FFFFF
RANDOM_PAIRS = 1500
BATCH = 50


def value(limbs):
    return sum(n << (26 * i) for i, n in enumerate(limbs))


def limbs_of(x):
    """x < 2^256 as normalized 26-bit limbs."""
    return [(x >> (26 * i)) & M26 for i in range(9)] + [x >> 234]


def at_max(m):
    return [2 * m * M26] * 9 + [2 * m * M22]


def random_limbs(rng):
    m = rng.choice((1, 2, 3, 4, 8))
    kind = rng.random()
    if kind < 0.15:                       # every limb at or near its maximum
        return [n - rng.randrange(4) for n in at_max(m)]
    if kind < 0.3:                        # a normalized value near p or 2^256
        return limbs_of((rng.choice((P, 2**256)) - rng.randrange(1, 2**40)) % 2**256)
    return [rng.randrange(2 * m * M26 + 1) for _ in range(9)] + [rng.randrange(2 * m * M22 + 1)]


def edge_values():
    values = [[0] * 10, limbs_of(1), limbs_of(P - 1), limbs_of(P), limbs_of(P + 1),
              limbs_of(2**256 - 1), limbs_of(2**255), [M26] * 9 + [M22]]
    values += [at_max(m) for m in (1, 2, 4, 8)]
    return values


def pairs():
    rng = random.Random(20261127)
    edges = edge_values()
    out = [(a, b) for a in edges for b in edges]
    out += [(random_limbs(rng), random_limbs(rng)) for _ in range(RANDOM_PAIRS)]
    return out


def pack(limbs):
    return b"".join(n.to_bytes(4, "little") for n in limbs)


def magnitude_one(limbs):
    return all(n <= 2 * M26 for n in limbs[:9]) and limbs[9] <= 2 * M22


@pytest.fixture(scope="module")
def board():
    qemu_target(MCU_TARGET)
    try:
        module = natmod.build("armv6m", profile=True)
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")
    b = qemu.Board(MCU_TARGET, None, romfs=qemu.romfs_of({module.name: module.read_bytes()}))
    try:
        b.enter_raw_repl()
        out, err = b.exec("import sys\nsys.path.insert(0, '/rom')\nimport quill_secp256k1 as q\n"
                          "print(q.fe_mul, q.fe_sqr)")
        assert not err, err
        yield b
    finally:
        b.close()


def run_batch(board, batch):
    """[(a * b limbs, a^2 limbs)] from the board for each (a, b)."""
    script = ("for a, b in %r:\n"
              "    print('R', q.fe_mul(a, b).hex(), q.fe_sqr(a).hex())\n"
              % ([(pack(a), pack(b)) for a, b in batch],))
    out, err = board.exec(script, timeout=300)
    assert not err, err
    rows = [line.split() for line in out.replace("\r", "").splitlines() if line.startswith("R ")]
    assert len(rows) == len(batch)
    return [(unpack(m), unpack(s)) for _, m, s in rows]


def unpack(hex_limbs):
    raw = bytes.fromhex(hex_limbs)
    return [int.from_bytes(raw[4 * i:4 * i + 4], "little") for i in range(10)]


def test_field_multiply_and_square_match_big_integers(board):
    all_pairs = pairs()
    wrong = []
    for start in range(0, len(all_pairs), BATCH):
        batch = all_pairs[start:start + BATCH]
        for (a, b), (prod, sq) in zip(batch, run_batch(board, batch), strict=True):
            if value(prod) % P != value(a) * value(b) % P or not magnitude_one(prod):
                wrong.append(("mul", a, b, prod))
            if value(sq) % P != value(a) ** 2 % P or not magnitude_one(sq):
                wrong.append(("sqr", a, sq))
    assert not wrong, f"{len(wrong)} wrong of {len(all_pairs)}: {wrong[:3]}"
    assert len(all_pairs) >= RANDOM_PAIRS


def test_the_check_sees_a_wrong_result():
    """The comparison itself fails for a product that is off by one (it can fail)."""
    a, b = limbs_of(P - 1), limbs_of(12345)
    prod = limbs_of((value(a) * value(b) + 1) % P)
    assert value(prod) % P != value(a) * value(b) % P
    assert not magnitude_one(at_max(2))


def inverse_inputs():
    """Edge values (0, 1, the moduli and their neighbours, limbs of zeros and ones in the
    signed 30-bit form, 2^256 - 1) and random ones."""
    rng = random.Random(20261128)
    values = [0, 1, 2, 3, P - 1, P, P + 1, P - 2, N - 1, N, N + 1, N - 2, 2**256 - 1, 2**255,
              2**30, 2**30 - 1, 2**240 + 1, (1 << 256) // 3]
    values += [int("3fffffff" * 8, 16) & (2**256 - 1), 2**32 + 977]
    values += [rng.randrange(2**256) for _ in range(RANDOM_INVERSES)]
    return values


def expected_inverse(x, m):
    return pow(x % m, -1, m) if x % m else 0


def test_inverses_match_big_integers(board):
    values = inverse_inputs()
    wrong = []
    for start in range(0, len(values), BATCH):
        batch = values[start:start + BATCH]
        script = ("for x in %r:\n"
                  "    print('I', q.fe_inv(x).hex(), q.scalar_inv(x).hex())\n"
                  % ([x.to_bytes(32, "big") for x in batch],))
        out, err = board.exec(script, timeout=300)
        assert not err, err
        rows = [line.split() for line in out.replace("\r", "").splitlines() if line.startswith("I ")]
        assert len(rows) == len(batch)
        for x, (_, fe, sc) in zip(batch, rows, strict=True):
            if int(fe, 16) != expected_inverse(x, P):
                wrong.append(("mod p", hex(x), fe))
            if int(sc, 16) != expected_inverse(x, N):
                wrong.append(("mod n", hex(x), sc))
    assert not wrong, f"{len(wrong)} wrong of {2 * len(values)}: {wrong[:3]}"
    assert expected_inverse(P + 2, P) * 2 % P == 1     # the reference itself


def test_comb_lookup_picks_each_entry(board):
    """Every index of a random row (the profiling build's 2 KB comb: 16 entries of 64
    bytes) gives exactly that entry; an index out of the row is refused."""
    rng = random.Random(7)
    row = bytes(rng.randrange(256) for _ in range(16 * 64))
    out, err = board.exec("row = %r\nfor i in range(16):\n    print('C', q.comb_scan(row, i).hex())\n"
                          "try:\n    q.comb_scan(row, 16)\nexcept ValueError:\n    print('refused')\n"
                          % (row,))
    assert not err, err
    got = [line.split()[1] for line in out.replace("\r", "").splitlines() if line.startswith("C ")]
    assert got == [row[64 * i:64 * i + 64].hex() for i in range(16)]
    assert "refused" in out


SHA256_IV = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)


def sha256_padded(message):
    """FIPS 180-4 5.1.1: the message, 0x80, zeros, its bit length (64-bit big-endian)."""
    return message + b"\x80" + bytes((55 - len(message)) % 64) + (8 * len(message)).to_bytes(8, "big")


def test_sha256_compression_matches_hashlib(board):
    """quill_sha256_armv6m.S (the context's SHA-256 compression on the Pico) over the
    padded blocks of messages of 0 to 200 bytes, at every alignment of the input,
    gives hashlib's digest; libsecp256k1 also tests it when mpy_init installs it."""
    import hashlib
    import struct
    rng = random.Random(11)
    messages = [bytes(rng.randrange(256) for _ in range(n)) for n in (0, 1, 55, 56, 63, 64, 65, 119, 200)]
    iv = struct.pack("<8I", *SHA256_IV)
    script = ("for m, skip in %r:\n"
              "    print('H', q.sha256_compress(%r, memoryview(m)[skip:]).hex())\n"
              % ([(bytes(skip) + sha256_padded(m), skip) for m in messages for skip in range(4)], iv))
    out, err = board.exec(script, timeout=300)
    assert not err, err
    rows = [line.split()[1] for line in out.replace("\r", "").splitlines() if line.startswith("H ")]
    expected = [hashlib.sha256(m).digest() for m in messages for _ in range(4)]
    got = [struct.pack(">8I", *struct.unpack("<8I", bytes.fromhex(h))) for h in rows]
    assert got == expected
