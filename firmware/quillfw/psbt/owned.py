"""The device's own single-key scripts and their addresses.

    script_for(kind, pubkey)      the scriptPubKey of a kind for a compressed key:
        "p2pkh"        OP_DUP OP_HASH160 <hash160> OP_EQUALVERIFY OP_CHECKSIG (BIP44)
        "p2sh-p2wpkh"  OP_HASH160 <hash160(0 <hash160>)> OP_EQUAL (BIP49)
        "p2wpkh"       0 <hash160> (BIP84)
        "p2tr"         1 <BIP86 output key: the BIP341 tweak with no script tree>
    classify(script_pubkey, pubkey) -> the kind that pays to pubkey, or None
    address(script_pubkey, network) -> its address text ("main", "test", "regtest"),
                                       or None for a script without one

Addresses: Base58Check for P2PKH/P2SH, BIP173 bech32 for witness v0 and
BIP350 bech32m for v1+.
"""
from quillfw.crypto.hashes import hash160
from quillfw.keys.base58 import b58encode_check

KINDS = ("p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr")
NETWORKS = ("main", "test", "regtest")

_HRP = {"main": "bc", "test": "tb", "regtest": "bcrt"}
_P2PKH_VERSION = {"main": 0x00, "test": 0x6F, "regtest": 0x6F}
_P2SH_VERSION = {"main": 0x05, "test": 0xC4, "regtest": 0xC4}


def _kind_of(script_pubkey):
    n = len(script_pubkey)
    if n == 25 and script_pubkey[:3] == b"\x76\xa9\x14" and script_pubkey[23:] == b"\x88\xac":
        return "p2pkh"
    if n == 23 and script_pubkey[:2] == b"\xa9\x14" and script_pubkey[22] == 0x87:
        return "p2sh-p2wpkh"
    if n == 22 and script_pubkey[:2] == b"\x00\x14":
        return "p2wpkh"
    if n == 34 and script_pubkey[:2] == b"\x51\x20":
        return "p2tr"
    return None


def script_for(kind, pubkey):
    if kind == "p2tr":
        from quillfw.crypto.schnorr import taproot_tweak_pubkey
        return b"\x51\x20" + taproot_tweak_pubkey(pubkey[1:])[1]
    h = hash160(pubkey)
    if kind == "p2pkh":
        return b"\x76\xa9\x14" + h + b"\x88\xac"
    if kind == "p2wpkh":
        return b"\x00\x14" + h
    if kind == "p2sh-p2wpkh":
        return b"\xa9\x14" + hash160(b"\x00\x14" + h) + b"\x87"
    raise ValueError("unknown script type")


def classify(script_pubkey, pubkey):
    kind = _kind_of(script_pubkey)
    if kind is not None and script_for(kind, pubkey) == bytes(script_pubkey):
        return kind
    return None


# ---- addresses -----------------------------------------------------------------

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
_BECH32M = 0x2BC830A3


def _polymod(values, chk=1):
    # every value stays below 2^30: a board's small int
    for v in values:
        top = chk >> 25
        chk = ((chk & 0x1FFFFFF) << 5) ^ v
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _GEN[i]
    return chk


def _five_bit(data):
    out, acc, bits = [], 0, 0
    for byte in data:
        acc = ((acc << 8) | byte) & 0xFFF
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    return out


def _segwit_address(hrp, version, program):
    data = [version] + _five_bit(program)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    const = 1 if version == 0 else _BECH32M
    chk = _polymod(expanded + data + [0] * 6) ^ const
    checksum = [(chk >> (5 * (5 - i))) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[d] for d in data + checksum)


def address(script_pubkey, network):
    s = bytes(script_pubkey)
    n = len(s)
    if n == 25 and s[:3] == b"\x76\xa9\x14" and s[23:] == b"\x88\xac":
        return b58encode_check(bytes((_P2PKH_VERSION[network],)) + s[3:23])
    if n == 23 and s[:2] == b"\xa9\x14" and s[22] == 0x87:
        return b58encode_check(bytes((_P2SH_VERSION[network],)) + s[2:22])
    if 4 <= n <= 42 and (s[0] == 0 or 0x51 <= s[0] <= 0x60) and s[1] == n - 2:
        version = 0 if s[0] == 0 else s[0] - 0x50
        if version != 0 or n - 2 in (20, 32):
            return _segwit_address(_HRP[network], version, s[2:])
    return None
