"""Output descriptors as decoderawtransaction prints them (BIP380 checksum, Core's InferDescriptor).

`infer_descriptor(script, chain)` reproduces Core's InferDescriptor with no
key or script knowledge (core-rpc.md §3.8); `known_scripts` lets decodescript's
P2WSH wrapper see its witness script, as Core's FlatSigningProvider does.
Miniscript inference inside wsh() is not implemented: such scripts fall back
to addr(), whereas Core prints wsh(<miniscript>) for sane miniscripts.
"""
from functools import reduce
from operator import getitem, xor
from typing import Final

from quill import compiled

from . import script as S
from .address import encode_destination
from .curve_point import is_x_on_curve
from .hashes import sha256
from .polymod import Polymod

# This module is compiled by mypyc (quill.compiled): a loop over the symbols beats the tables then.
_NATIVE = compiled.PURE_REASON is None

# -- BIP380 checksum ------------------------------------------------------------

INPUT_CHARSET = ("0123456789()[],'/*abcdefgh@:$%{}"
                 "IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                 "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ")
CHECKSUM_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_POS = {c: i for i, c in enumerate(INPUT_CHARSET)}
_GEN = (0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD)


# Each character's INPUT_CHARSET position as a byte (0xFF for characters outside it).
_POS_TABLE: Final = bytes(_POS.get(chr(i), 0xFF) for i in range(256))
# A position's symbol (its low 5 bits), and its class (the high bits, 0-2) times 9, 3 and 1.
_SYMBOL = bytes(p & 31 for p in range(256))
_CLASS_9, _CLASS_3, _CLASS_1 = (bytes((p >> 5) * w if p < 96 else 0 for p in range(256)) for w in (9, 3, 1))
# Descriptors of up to 290 characters use the tables (4 symbols per 3 characters, and 8 more).
_polymod: Final = Polymod(_GEN, 40, 400)
# Each pair of checksum characters, by its 10 bits: the 8 characters are 4 lookups.
_CHECKSUM_PAIRS = [CHECKSUM_CHARSET[i >> 5] + CHECKSUM_CHARSET[i & 31] for i in range(1024)]
# Number of symbols -> the residue of the initial 1 after them and the 8 zeros, and each symbol's
# table, first symbol first (see polymod.Polymod; the zeros add nothing). One plan per length a
# descriptor has, made at its first use: at most _polymod.positions of them, bounded.
_PLANS: dict[int, tuple[int, list[tuple[int, ...]]]] = {}


def _plan(n: int) -> tuple[int, list[tuple[int, ...]]]:
    plan = _PLANS.get(n)
    if plan is None:
        by_position = _polymod.tables()
        plan = _PLANS[n] = (by_position[n + 8][1], by_position[n + 7:7:-1])
    return plan


def _symbol_loop_residue(desc: str) -> int:
    """BIP380's polymod of `desc` as its reference loop feeds it, one character at a time, or -1 for a
    character outside INPUT_CHARSET: the compiled form (native integers, no intermediate bytes)."""
    pm = _polymod
    table = _POS_TABLE
    c = 1
    cls = 0
    count = 0
    for i in range(len(desc)):
        o = ord(desc[i])
        if o > 255:
            return -1
        p = table[o]
        if p == 0xFF:
            return -1
        c = pm.step(c, p & 31)
        # after each group of 3 characters, their 3 classes as one base-3 number
        cls = cls * 3 + (p >> 5)
        count += 1
        if count == 3:
            c = pm.step(c, cls)
            cls = 0
            count = 0
    if count:
        c = pm.step(c, cls)
    for _ in range(8):
        c = pm.step(c, 0)
    return c ^ 1


def descriptor_checksum(desc: str):
    """The 8-character BIP380 checksum, or None if `desc` has a character outside INPUT_CHARSET."""
    if _NATIVE:
        c = _symbol_loop_residue(desc)
        if c < 0:
            return None
        pairs = _CHECKSUM_PAIRS
        return pairs[c >> 30] + pairs[(c >> 20) & 1023] + pairs[(c >> 10) & 1023] + pairs[c & 1023]
    try:
        positions = desc.encode("latin-1").translate(_POS_TABLE)
    except UnicodeEncodeError:
        return None
    if 0xFF in positions:
        return None
    # BIP380 feeds every character's symbol, and after each group of 3 characters
    # their 3 classes as one base-3 number; then any last classes, then 8 zeros.
    # Built here with slices, for every group at once.
    groups, rest = divmod(len(positions), 3)
    full = 3 * groups
    symbols = positions.translate(_SYMBOL)
    values = bytearray(4 * groups + (rest + 1 if rest else 0))
    body = 4 * groups
    values[0:body:4] = symbols[0:full:3]
    values[1:body:4] = symbols[1:full:3]
    values[2:body:4] = symbols[2:full:3]
    if groups:
        # the three classes of every group at once: byte-wise sums of at most 18 + 6 + 2, no carries
        values[3:body:4] = (int.from_bytes(positions[0:full:3].translate(_CLASS_9), "big")
                            + int.from_bytes(positions[1:full:3].translate(_CLASS_3), "big")
                            + int.from_bytes(positions[2:full:3].translate(_CLASS_1), "big")).to_bytes(groups, "big")
    if rest:
        cls = 0
        for i, p in enumerate(positions[full:]):
            values[body + i] = p & 31
            cls = cls * 3 + (p >> 5)
        values[body + rest] = cls
    n = len(values)
    if n + 8 <= _polymod.positions:
        residue, tables = _plan(n)
        c = reduce(xor, map(getitem, tables, values), residue) ^ 1
    else:
        c = _polymod(values + bytes(8)) ^ 1
    pairs = _CHECKSUM_PAIRS
    return pairs[c >> 30] + pairs[(c >> 20) & 1023] + pairs[(c >> 10) & 1023] + pairs[c & 1023]


def add_checksum(desc: str) -> str:
    return desc + "#" + descriptor_checksum(desc)


# -- inference --------------------------------------------------------------------

TOP, P2SH, P2WSH = "top", "p2sh", "p2wsh"


def is_valid_xonly(x: bytes) -> bool:
    """BIP340 lift_x succeeds: x < p and x^3 + 7 is a square mod p."""
    return is_x_on_curve(int.from_bytes(x, "big"))


def _infer_pubkey(key: bytes, ctx):
    """Core's InferPubkey without key origins: the key hex, or None (hybrid, or uncompressed in wsh)."""
    if key[0] not in (2, 3, 4):
        return None
    if ctx == P2WSH and len(key) != 33:
        return None
    return key.hex()


def _infer(script: bytes, ctx, chain, known_scripts, solved=None, address=False):
    # `solved` / `address`: the caller's solver() result and address (False = not computed).
    kind, sol = solved if solved is not None else S.solver(script)
    if kind == S.PUBKEY:
        key = _infer_pubkey(sol[0], ctx)
        if key is not None:
            return f"pk({key})"
    if kind == S.MULTISIG:
        keys = [_infer_pubkey(k, ctx) for k in sol[1:-1]]
        if None not in keys:
            return "multi(%d,%s)" % (sol[0][0], ",".join(keys))
    if kind == S.WITNESS_V0_SCRIPTHASH and ctx in (TOP, P2SH) and known_scripts:
        inner = known_scripts.get(sol[0])
        if inner is not None:
            sub = _infer(inner, P2WSH, chain, known_scripts)
            if sub is not None:
                return f"wsh({sub})"
    if kind == S.WITNESS_V1_TAPROOT and ctx == TOP and is_valid_xonly(sol[0]):
        return f"rawtr({sol[0].hex()})"
    if ctx != TOP:
        return None
    if address is False:
        address = encode_destination(script, chain, (kind, sol))
    if address is not None:
        return f"addr({address})"
    return f"raw({script.hex()})"


def infer_descriptor(script: bytes, chain, known_scripts=None, solved=None, address=False) -> str:
    """Core's InferDescriptor(script, provider)->ToString(), checksum included.

    `known_scripts` maps SHA256(witness script) -> witness script; `solved` and
    `address` pass the script's solver() result and encode_destination() when
    the caller already computed them.
    """
    return add_checksum(_infer(script, TOP, chain, known_scripts, solved, address))


def known_witness_script(script: bytes) -> dict:
    """A `known_scripts` map holding one witness script."""
    return {sha256(script): script}


def has_valid_checksum(desc: str) -> bool:
    """BIP380 descsum_check: `desc` ends in '#' and its 8-character checksum."""
    body, sep, checksum = desc.rpartition("#")
    return bool(sep) and len(checksum) == 8 and descriptor_checksum(body) == checksum
