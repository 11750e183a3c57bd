"""Addresses of scripts, as the device shows them to its user:

    address(script_pubkey, network) -> its address text ("main", "test", "regtest"),
                                       or None for a script without one

Base58Check for P2PKH/P2SH, BIP173 bech32 for witness v0 and BIP350 bech32m
for v1+. Imported while outputs are shown and forgotten after (heap).
"""

_HRP = {"main": "bc", "test": "tb", "regtest": "bcrt"}
_P2PKH_VERSION = {"main": 0x00, "test": 0x6F, "regtest": 0x6F}
_P2SH_VERSION = {"main": 0x05, "test": 0xC4, "regtest": 0xC4}
_CHARSET = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l"
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


def _five_bit(data, out):
    """Append data's 5-bit groups to the bytearray out (a byte per group: a list would
    take 8 bytes per group of a signing session's heap)."""
    acc, bits = 0, 0
    for byte in data:
        acc = ((acc << 8) | byte) & 0xFFF
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)


def _segwit_address(hrp, version, program):
    """BIP173/BIP350: hrp, "1", the data's characters and the 6-character checksum."""
    data = bytearray((version,))
    _five_bit(program, data)
    chk = 1
    for c in hrp:                       # the hrp's expansion: high bits, 0, low bits
        chk = _polymod((ord(c) >> 5,), chk)
    chk = _polymod((0,), chk)
    for c in hrp:
        chk = _polymod((ord(c) & 31,), chk)
    chk = _polymod(bytes(6), _polymod(data, chk)) ^ (1 if version == 0 else _BECH32M)
    for i in range(6):
        data.append((chk >> (5 * (5 - i))) & 31)
    for i in range(len(data)):          # in place: the characters' bytes
        data[i] = _CHARSET[data[i]]
    return hrp + "1" + data.decode()


def address(script_pubkey, network):
    s = bytes(script_pubkey)
    n = len(s)
    if n == 25 and s[:3] == b"\x76\xa9\x14" and s[23:] == b"\x88\xac":
        from quillfw.keys.base58 import b58encode_check
        return b58encode_check(bytes((_P2PKH_VERSION[network],)) + s[3:23])
    if n == 23 and s[:2] == b"\xa9\x14" and s[22] == 0x87:
        from quillfw.keys.base58 import b58encode_check
        return b58encode_check(bytes((_P2SH_VERSION[network],)) + s[2:22])
    if 4 <= n <= 42 and (s[0] == 0 or 0x51 <= s[0] <= 0x60) and s[1] == n - 2:
        version = 0 if s[0] == 0 else s[0] - 0x50
        if version != 0 or n - 2 in (20, 32):
            return _segwit_address(_HRP[network], version, s[2:])
    return None
