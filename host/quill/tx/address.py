"""Addresses and WIF keys per network (Core's key_io.cpp, base58.cpp, bech32.cpp).

* Base58 / Base58Check with Core's decoder rules (surrounding whitespace skipped).
* Bech32 (BIP173) and Bech32m (BIP350) with Core's limits (90 characters).
* `encode_destination(script, chain)`: ExtractDestination + EncodeDestination.
* `decode_destination(address, chain)`: DecodeDestination -> scriptPubKey, or
  AddressError carrying Core's error text.
* `encode_secret` / `decode_secret`: WIF (never echoes the key in errors).
"""
from dataclasses import dataclass
from functools import reduce
from operator import getitem, xor
from typing import Final, Iterable

from quill import compiled
from quill.consensus import SECP256K1_ORDER

from . import script as S
from .hashes import sha256d
from .polymod import Polymod

# -- network parameters (core-rpc.md §6, kernel/chainparams.cpp) -------------


@dataclass(frozen=True)
class ChainParams:
    name: str
    pubkey_prefix: int
    script_prefix: int
    secret_prefix: int
    hrp: str
    ext_public: bytes
    ext_secret: bytes


_TEST_EXT = (bytes.fromhex("043587cf"), bytes.fromhex("04358394"))

CHAINS = {
    "main": ChainParams("main", 0x00, 0x05, 0x80, "bc",
                        bytes.fromhex("0488b21e"), bytes.fromhex("0488ade4")),
    "test": ChainParams("test", 0x6F, 0xC4, 0xEF, "tb", *_TEST_EXT),
    "testnet4": ChainParams("testnet4", 0x6F, 0xC4, 0xEF, "tb", *_TEST_EXT),
    "signet": ChainParams("signet", 0x6F, 0xC4, 0xEF, "tb", *_TEST_EXT),
    "regtest": ChainParams("regtest", 0x6F, 0xC4, 0xEF, "bcrt", *_TEST_EXT),
}


def chain_params(chain) -> ChainParams:
    return chain if isinstance(chain, ChainParams) else CHAINS[chain]


class AddressError(ValueError):
    """An address that does not decode; the message is Core's error_str."""


# -- Base58 ------------------------------------------------------------------

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(B58_ALPHABET)}
# Core's IsSpace: space, \f, \n, \r, \t, \v.
_SPACE = " \f\n\r\t\v"


def base58_encode(data: bytes) -> str:
    zeros = len(data) - len(data.lstrip(b"\x00"))
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, r = divmod(n, 58)
        out.append(B58_ALPHABET[r])
    return "1" * zeros + "".join(reversed(out))


def base58_decode(text: str, max_len: int):
    """Core's DecodeBase58: bytes, or None if invalid or longer than max_len."""
    text = text.strip(_SPACE) if text[:1] in _SPACE or text[-1:] in _SPACE else text
    if "\x00" in text:
        return None
    zeros = len(text) - len(text.lstrip("1"))
    if zeros > max_len:
        return None
    n = 0
    for c in text[zeros:]:
        v = _B58_INDEX.get(c)
        if v is None:
            return None
        n = n * 58 + v
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    out = b"\x00" * zeros + body
    if len(out) > max_len:
        return None
    return out


def base58check_encode(payload: bytes) -> str:
    return base58_encode(payload + sha256d(payload)[:4])


def base58check_decode(text: str, max_len: int):
    """Core's DecodeBase58Check: the payload, or None."""
    limit = max_len + 4 if max_len <= 0x7FFFFFFF - 4 else 0x7FFFFFFF
    raw = base58_decode(text, limit)
    if raw is None or len(raw) < 4:
        return None
    payload, check = raw[:-4], raw[-4:]
    if sha256d(payload)[:4] != check:
        return None
    return payload


# -- Bech32 / Bech32m (BIP173, BIP350) ----------------------------------------

BECH32 = "bech32"
BECH32M = "bech32m"
_CONST = {BECH32: 1, BECH32M: 0x2BC830A3}
BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_CHARSET_INDEX = {c: i for i, c in enumerate(BECH32_CHARSET)}
BECH32_MAX_LENGTH = 90
_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


# Bech32 strings are at most 90 characters: the hrp expansion, data and checksum fit in 256 symbols.
_polymod: Final = Polymod(_GEN, 30, 256)


def _hrp_expand(hrp: str):
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


_CHARSET_BYTES = BECH32_CHARSET.encode().ljust(256, b"?")


# (hrp, data length) -> the residue of the initial 1 and the hrp's expansion followed by that many
# data symbols and the 6 zeros, and each data position's table (BIP173's polymod is linear: see
# polymod.Polymod). A few hrps by a few lengths: bounded, not an unbounded cache.
_PLANS: dict[tuple[str, int], tuple[int, list[tuple[int, ...]]]] = {}
_PLANS_MAX = 256


def _checksum_plan(hrp: str, length: int) -> tuple[int, list[tuple[int, ...]]]:
    plan = _PLANS.get((hrp, length))
    if plan is None:
        by_position = _polymod.tables()
        expanded = _hrp_expand(hrp)
        total = len(expanded) + length + 6
        residue = by_position[total][1]
        for i, v in enumerate(expanded):
            residue ^= by_position[total - 1 - i][v]
        plan = (residue, by_position[length + 5:5:-1])
        if len(_PLANS) < _PLANS_MAX:
            _PLANS[(hrp, length)] = plan
    return plan


def _hrp_residue(hrp: str) -> int:
    """The polymod's residue after the hrp's expansion (a few hrps: bounded as _PLANS)."""
    residue = _HRP_RESIDUES.get(hrp)
    if residue is None:
        residue = _polymod.continued(1, bytes(_hrp_expand(hrp)))
        if len(_HRP_RESIDUES) < _PLANS_MAX:
            _HRP_RESIDUES[hrp] = residue
    return residue


_HRP_RESIDUES: dict[str, int] = {}
_SIX_ZEROS: Final = bytes(6)  # the checksum's place, fed to the polymod
# This module is compiled by mypyc (quill.compiled): a loop over the symbols beats the tables then.
_NATIVE = compiled.PURE_REASON is None


def bech32_encode(hrp: str, data5, encoding: str) -> str:
    data = bytes(data5)
    if _NATIVE and hrp.isascii():
        mod = _polymod.continued(_polymod.continued(_hrp_residue(hrp), data), _SIX_ZEROS) ^ _CONST[encoding]
    elif 2 * len(hrp) + 1 + len(data) + 6 > _polymod.positions:  # beyond the tables
        values = _hrp_expand(hrp) + list(data)
        mod = _polymod(values + [0] * 6) ^ _CONST[encoding]
    else:
        residue, positions = _checksum_plan(hrp, len(data))
        mod = reduce(xor, map(getitem, positions, data), residue) ^ _CONST[encoding]
    checksum = bytes(((mod >> 25) & 31, (mod >> 20) & 31, (mod >> 15) & 31, (mod >> 10) & 31, (mod >> 5) & 31,
                      mod & 31))
    return hrp + "1" + (data + checksum).translate(_CHARSET_BYTES).decode()


def bech32_decode(text: str, limit: int = BECH32_MAX_LENGTH):
    """(encoding, hrp, data5 without checksum), or None (Core's bech32::Decode)."""
    if len(text) > limit:
        return None
    lower = upper = False
    for c in text:
        o = ord(c)
        if o < 33 or o > 126:
            return None
        if "a" <= c <= "z":
            lower = True
        elif "A" <= c <= "Z":
            upper = True
    if lower and upper:
        return None
    text = text.lower()
    pos = text.rfind("1")
    if pos < 1 or pos + 7 > len(text):
        return None
    hrp = text[:pos]
    data = []
    for c in text[pos + 1:]:
        v = _CHARSET_INDEX.get(c)
        if v is None:
            return None
        data.append(v)
    check = _polymod(_hrp_expand(hrp) + data)
    for encoding, const in _CONST.items():
        if check == const:
            return encoding, hrp, data[:-6]
    return None


def convert_bits(data: Iterable[int], frombits: int, tobits: int, pad: bool) -> list[int] | None:
    """Regroup bits (Core's ConvertBits); None if the padding is invalid."""
    acc = bits = 0
    out = []
    maxv = (1 << tobits) - 1
    # Core's max_acc: only the bits not yet taken are kept, so that the accumulator stays small
    max_acc = (1 << (frombits + tobits - 1)) - 1
    for v in data:
        acc = ((acc << frombits) | v) & max_acc
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (tobits - bits)) & maxv)
    elif bits >= frombits or ((acc << (tobits - bits)) & maxv):
        return None
    return out


# Byte length -> how to spread its bits into 5-bit groups, one per byte, with a few big-integer
# steps (see _spread_plan); a plan per length an address program or a key has: bounded.
_SPREADS: dict[int, tuple[int, int, list[tuple[int, int, int]]]] = {}


def _spread_plan(nbytes: int) -> tuple[int, int, list[tuple[int, int, int]]]:
    """(padding bits, leading zero groups, steps) for `nbytes` bytes. The padded bits are one lane
    of `lanes` groups (a power of two, the leading ones zero); each step halves every lane's groups,
    moving the high half up to where its bytes will end, until each group has its own byte."""
    bits = nbytes * 8
    groups = (bits + 4) // 5
    lanes = 1
    while lanes < groups:
        lanes *= 2
    steps = []
    width = lanes  # groups per lane
    while width > 1:
        half = width // 2
        half_mask = (1 << (half * 5)) - 1
        low = high = 0
        for base in range(0, lanes * 8, width * 8):  # each lane's place in the result
            low |= half_mask << base
            high |= half_mask << (base + half * 5)
        steps.append((low, high, half * 3))  # the high half moves from half * 5 to half * 8
        width = half
    return groups * 5 - bits, lanes - groups, steps


def _five_bit_groups(data: bytes) -> bytes:
    """convert_bits(data, 8, 5, pad=True) as bytes, by whole-integer masks and shifts (the hot path
    of address encoding) when interpreted; compiled (quill.compiled), convert_bits' loop is the faster."""
    if _NATIVE:
        groups = convert_bits(data, 8, 5, True)
        assert groups is not None  # padded: never None
        return bytes(groups)
    plan = _SPREADS.get(len(data))
    if plan is None:
        plan = _spread_plan(len(data))
        if len(_SPREADS) < _PLANS_MAX:
            _SPREADS[len(data)] = plan
    pad, skip, steps = plan
    n = int.from_bytes(data, "big") << pad
    for low, high, shift in steps:
        n = (n & low) | ((n & high) << shift)
    return n.to_bytes((len(data) * 8 + 4) // 5 + skip, "big")[skip:]


def bytes_to_5bit(data: bytes):
    """convert_bits(data, 8, 5, pad=True)."""
    return list(_five_bit_groups(data))


def encode_segwit_address(hrp: str, version: int, program: bytes) -> str:
    encoding = BECH32 if version == 0 else BECH32M
    return bech32_encode(hrp, bytes((version,)) + _five_bit_groups(program), encoding)


def witness_script(version: int, program: bytes) -> bytes:
    """scriptPubKey OP_n <program> for a witness program."""
    return bytes((0 if version == 0 else 0x50 + version, len(program))) + program


# -- destinations -------------------------------------------------------------


def encode_destination(script: bytes, chain, solved=None):
    """Address for a scriptPubKey (Core's ExtractDestination + EncodeDestination), or None.

    None for pubkey, multisig, nulldata and nonstandard scripts. `solved` is
    the script's solver() result when the caller already has it.
    """
    p = chain_params(chain)
    kind, sol = solved if solved is not None else S.solver(script)
    if kind == S.PUBKEYHASH:
        return base58check_encode(bytes((p.pubkey_prefix,)) + sol[0])
    if kind == S.SCRIPTHASH:
        return base58check_encode(bytes((p.script_prefix,)) + sol[0])
    if kind in (S.WITNESS_V0_KEYHASH, S.WITNESS_V0_SCRIPTHASH):
        return encode_segwit_address(p.hrp, 0, sol[0])
    if kind == S.WITNESS_V1_TAPROOT:
        return encode_segwit_address(p.hrp, 1, sol[0])
    if kind == S.ANCHOR:
        return encode_segwit_address(p.hrp, 1, b"\x4e\x73")
    if kind == S.WITNESS_UNKNOWN:
        return encode_segwit_address(p.hrp, sol[0][0], sol[1])
    return None


def pkh_address(pubkey: bytes, chain) -> str:
    """P2PKH address of a public key (used by the deprecated `addresses` field)."""
    from .hashes import hash160
    return base58check_encode(bytes((chain_params(chain).pubkey_prefix,)) + hash160(pubkey))


def script_hash_address(script: bytes, chain) -> str:
    """P2SH address wrapping `script`."""
    from .hashes import hash160
    return base58check_encode(bytes((chain_params(chain).script_prefix,)) + hash160(script))


def decode_destination(text: str, chain) -> bytes:
    """Core's DecodeDestination: the scriptPubKey, or AddressError with Core's message."""
    p = chain_params(chain)
    is_bech32 = text[:len(p.hrp)].lower() == p.hrp
    if not is_bech32:
        data = base58check_decode(text, 21)
        if data is not None:
            if len(data) == 21 and data[0] == p.pubkey_prefix:
                return S.p2pkh(data[1:])
            if len(data) == 21 and data[0] == p.script_prefix:
                return S.p2sh(data[1:])
            if data[:1] in (bytes((p.script_prefix,)), bytes((p.pubkey_prefix,))):
                raise AddressError("Invalid length for Base58 address (P2PKH or P2SH)")
            raise AddressError("Invalid or unsupported Base58-encoded address.")
        if base58_decode(text, 100) is None:
            raise AddressError("Invalid or unsupported Segwit (Bech32) or Base58 encoding.")
        raise AddressError("Invalid checksum or length of Base58 address (P2PKH or P2SH)")
    dec = bech32_decode(text)
    if dec is None:
        raise AddressError("Invalid Bech32 address")
    encoding, hrp, data5 = dec
    if not data5:
        raise AddressError("Empty Bech32 data section")
    if hrp != p.hrp:
        raise AddressError("Invalid or unsupported prefix for Segwit (Bech32) address "
                           f"(expected {p.hrp}, got {hrp}).")
    version = data5[0]
    if version == 0 and encoding != BECH32:
        raise AddressError("Version 0 witness address must use Bech32 checksum")
    if version != 0 and encoding != BECH32M:
        raise AddressError("Version 1+ witness address must use Bech32m checksum")
    groups = convert_bits(data5[1:], 5, 8, False)
    if groups is None:
        raise AddressError("Invalid padding in Bech32 data section")
    program = bytes(groups)
    unit = "byte" if len(program) == 1 else "bytes"
    if version == 0:
        if len(program) in (20, 32):
            return witness_script(0, program)
        raise AddressError(f"Invalid Bech32 v0 address program size ({len(program)} {unit}), per BIP141")
    if version > 16:
        raise AddressError("Invalid Bech32 address witness version")
    if len(program) < 2 or len(program) > 40:
        raise AddressError(f"Invalid Bech32 address program size ({len(program)} {unit})")
    return witness_script(version, program)


# -- WIF private keys ----------------------------------------------------------



def encode_secret(secret: bytes, compressed: bool, chain) -> str:
    payload = bytes((chain_params(chain).secret_prefix,)) + secret + (b"\x01" if compressed else b"")
    return base58check_encode(payload)


def decode_secret(text: str, chain):
    """Core's DecodeSecret: (32-byte secret, compressed) or None. Never reports the key."""
    p = chain_params(chain)
    data = base58check_decode(text, 34)
    if data is None or not data or data[0] != p.secret_prefix:
        return None
    if len(data) == 33:
        compressed = False
    elif len(data) == 34 and data[-1] == 1:
        compressed = True
    else:
        return None
    secret = data[1:33]
    if not 0 < int.from_bytes(secret, "big") < SECP256K1_ORDER:
        return None
    return secret, compressed
