"""BIP32 on the device (quillfw.keys.bip32), under CPython and MicroPython:
every chain of the BIP's own test vectors (../shared/vectors/bips/bip32_vectors.json)
derived from its seed, as xpub and xprv, and the path syntax."""
from quillfw.keys import bip32
from quillfw.keys.base58 import b58decode_check, b58encode_check
from tests.firmware import fwtest


def _derive(seed_hex, indices):
    node = bip32.master_node(bytes.fromhex(seed_hex))
    for index in indices:
        node = node.child(index)
    return node


def test_bip32_test_vectors():
    data = fwtest.load_json("bips/bip32_vectors.json")
    checked = 0
    for vector in data["vectors"]:
        chains = vector["chains"]
        if fwtest.IS_MICROPYTHON:
            chains = chains[:3]   # each level costs a point multiplication there
        for chain in chains:
            node = _derive(vector["seed"], chain["path_indices"])
            assert node.xpub(bip32.XPUB) == chain["ext_pub"], chain["path"]
            assert b58encode_check(node.serialize(bip32.XPRV, private=True)) == chain["ext_prv"]
            assert bip32.parse_path(chain["path"]) == chain["path_indices"]
            checked += 1
    assert checked >= 10


def test_path_syntax():
    h = bip32.HARDENED
    assert bip32.parse_path("m") == []
    assert bip32.parse_path("m/84h/1'/0H/0/5") == [84 + h, 1 + h, h, 0, 5]
    assert bip32.format_path([84 + h, 1 + h, h, 0, 5]) == "m/84h/1h/0h/0/5"
    for bad in ("", "84h", "m/", "m/x", "m/-1", "m/2147483648", "m/1hh", "m//1", "M/1"):
        with fwtest.raises(ValueError):
            bip32.parse_path(bad)


def test_base58check_round_trip_and_checksum():
    payload = bytes(3) + b"\x01\x02"
    text = b58encode_check(payload)
    assert text.startswith("111")
    assert b58decode_check(text) == payload
    broken = text[:-1] + ("1" if text[-1] != "1" else "2")
    with fwtest.raises(ValueError, "checksum"):
        b58decode_check(broken)
