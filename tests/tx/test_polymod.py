"""The table-driven polymod (quill.tx.polymod) against BIP173's and BIP380's
own symbol-by-symbol algorithms, written out here as the BIPs give them."""
import random

from quill.tx.address import BECH32_CHARSET, bech32_decode, bech32_encode
from quill.tx.descriptor import INPUT_CHARSET, descriptor_checksum

BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
DESCRIPTOR_GEN = (0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD)


def bip173_polymod(values):
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= BECH32_GEN[i] if ((top >> i) & 1) else 0
    return chk


def bip173_encode(hrp, data, const):
    values = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp] + data
    polymod = bip173_polymod(values + [0] * 6) ^ const
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32_CHARSET[d] for d in data + checksum)


def bip380_checksum(desc):
    def polymod(c, val):
        c0 = c >> 35
        c = ((c & 0x7FFFFFFFF) << 5) ^ val
        for i in range(5):
            if c0 & (1 << i):
                c ^= DESCRIPTOR_GEN[i]
        return c

    c, cls, clscount = 1, 0, 0
    for ch in desc:
        pos = INPUT_CHARSET.find(ch)
        if pos == -1:
            return None
        c = polymod(c, pos & 31)
        cls = cls * 3 + (pos >> 5)
        clscount += 1
        if clscount == 3:
            c = polymod(c, cls)
            cls, clscount = 0, 0
    if clscount > 0:
        c = polymod(c, cls)
    for _ in range(8):
        c = polymod(c, 0)
    c ^= 1
    return "".join("qpzry9x8gf2tvdw0s3jn54khce6mua7l"[(c >> (5 * (7 - i))) & 31] for i in range(8))


def test_descriptor_checksums_of_every_length_match_bip380():
    rnd = random.Random(380)
    # every remainder mod 3, the table's edge (~290 characters) and beyond it
    lengths = list(range(0, 40)) + list(range(280, 300)) + [rnd.randrange(300, 3000) for _ in range(20)]
    for n in lengths:
        desc = "".join(rnd.choice(INPUT_CHARSET) for _ in range(n))
        assert descriptor_checksum(desc) == bip380_checksum(desc), n
    assert descriptor_checksum("addr(\u00e9)") is None and descriptor_checksum("addr(\u20ac)") is None
    assert descriptor_checksum("raw(deadbeef)") == "89f8spxm"  # BIP380's test vector


def test_bech32_checksums_match_bip173_and_bip350():
    rnd = random.Random(173)
    for _ in range(300):
        hrp = rnd.choice(["bc", "tb", "bcrt", "".join(rnd.choice("abcxyz") for _ in range(rnd.randrange(1, 40)))])
        data = [rnd.randrange(32) for _ in range(rnd.randrange(0, 50))]
        for encoding, const in (("bech32", 1), ("bech32m", 0x2BC830A3)):
            text = bech32_encode(hrp, data, encoding)
            assert text == bip173_encode(hrp, data, const)
            assert bech32_decode(text, limit=200) == (encoding, hrp, data)
