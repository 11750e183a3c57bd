"""Address and key encodings: Core's key_io and base58 vectors, BIP173/BIP350, BIP380 checksums."""
import random

import pytest

from quill.tx import address as A
from quill.tx.descriptor import descriptor_checksum, has_valid_checksum
from tests.kit.vectors import load_json

CHAINS = ("main", "test", "testnet4", "signet", "regtest")


def _flip_case(s):
    return "".join(c.lower() if c.isupper() else c.upper() for c in s)


def test_base58_encode_decode():
    rows = load_json("core/base58_encode_decode.json")
    assert len(rows) == 21
    for hexdata, text in rows:
        data = bytes.fromhex(hexdata)
        assert A.base58_encode(data) == text
        assert A.base58_decode(text, 256) == data


def test_base58_decoder_rules():
    # Core's DecodeBase58 skips surrounding whitespace but nothing inside.
    assert A.base58_decode(" \t\n\v\f\r2g \t\n\v\f\r", 10) == b"a"
    assert A.base58_decode("2 g", 10) is None
    assert A.base58_decode("3mJr7A\x00", 10) is None
    assert A.base58_decode("0", 10) is None          # not in the alphabet
    assert A.base58_decode("1111", 3) is None         # more leading zeros than allowed
    assert A.base58_decode("a3gV", 2) is None         # decodes to 3 bytes


def test_key_io_valid():
    rows = load_json("core/key_io_valid.json")
    assert len(rows) == 70
    for text, payload_hex, meta in rows:
        chain = meta["chain"]
        payload = bytes.fromhex(payload_hex)
        if meta["isPrivkey"]:
            assert A.decode_secret(text, chain) == (payload, meta["isCompressed"]), text
            assert A.encode_secret(payload, meta["isCompressed"], chain) == text
            with pytest.raises(A.AddressError):
                A.decode_destination(text, chain)
        else:
            assert A.decode_destination(text, chain) == payload, text
            assert A.encode_destination(payload, chain) == text
            assert A.decode_secret(text, chain) is None
            if meta.get("tryCaseFlip"):
                assert A.decode_destination(_flip_case(text), chain) == payload


def test_key_io_invalid_on_every_chain():
    rows = load_json("core/key_io_invalid.json")
    assert len(rows) == 70
    for (text,) in rows:
        for chain in CHAINS:
            with pytest.raises(A.AddressError):
                A.decode_destination(text, chain)
            assert A.decode_secret(text, chain) is None


def _chain_for_hrp(hrp):
    return {"bc": "main", "tb": "test"}[hrp]


@pytest.mark.parametrize("bip, encoding", [("bip173", A.BECH32), ("bip350", A.BECH32M)])
def test_bech32_checksum_strings(bip, encoding):
    data = load_json(f"bips/{bip}_vectors.json")
    key = "bech32" if encoding == A.BECH32 else "bech32m"
    assert data[f"valid_{key}"] and data[f"invalid_{key}"]
    for text in data[f"valid_{key}"]:
        dec = A.bech32_decode(text)
        assert dec is not None and dec[0] == encoding, text
        # Re-encoding gives the lower-case string back.
        assert A.bech32_encode(dec[1], dec[2], encoding) == text.lower()
    for entry in data[f"invalid_{key}"]:
        dec = A.bech32_decode(entry["string"])
        assert dec is None or dec[0] != encoding, entry


@pytest.mark.parametrize("bip", ["bip173", "bip350"])
def test_segwit_addresses(bip):
    data = load_json(f"bips/{bip}_vectors.json")
    for entry in data["valid_segwit_addresses"]:
        chain = _chain_for_hrp(entry["hrp"])
        if entry.get("valid_under_bip350", True):
            script = bytes.fromhex(entry["scriptPubKey"])
            assert A.decode_destination(entry["address"], chain) == script
            assert A.encode_destination(script, chain) == entry["address"].lower()
        else:
            with pytest.raises(A.AddressError):
                A.decode_destination(entry["address"], chain)
    for entry in data["invalid_segwit_addresses"]:
        for chain in ("main", "test"):
            with pytest.raises(A.AddressError):
                A.decode_destination(entry["address"], chain)


def test_bip173_examples():
    data = load_json("bips/bip173_vectors.json")
    for ex in data["examples"]:
        script = bytes.fromhex(ex["scriptPubKey_derived"])
        chain = "main" if ex["address"].lower().startswith("bc1") else "test"
        assert A.encode_destination(script, chain) == ex["address"].lower()
        assert A.decode_destination(ex["address"], chain) == script


def test_anchor_addresses_per_network():
    anchor = bytes.fromhex("51024e73")
    assert A.encode_destination(anchor, "main") == "bc1pfeessrawgf"
    assert A.encode_destination(anchor, "testnet4") == "tb1pfees9rn5nz"
    assert A.encode_destination(anchor, "regtest") == "bcrt1pfeesnyr2tx"
    assert A.decode_destination("bcrt1pfeesnyr2tx", "regtest") == anchor


def test_core_decode_destination_messages():
    with pytest.raises(A.AddressError, match=r"^Invalid or unsupported prefix for Segwit \(Bech32\) "
                                             r"address \(expected bc, got bcrt\)\.$"):
        A.decode_destination("bcrt1pfeesnyr2tx", "main")
    with pytest.raises(A.AddressError, match="Version 1\\+ witness address must use Bech32m"):
        A.decode_destination("bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx", "main")
    with pytest.raises(A.AddressError, match="Invalid or unsupported Base58-encoded address."):
        A.decode_destination(A.base58check_encode(b"\x30" + bytes(20)), "main")
    with pytest.raises(A.AddressError, match="Invalid length for Base58 address"):
        A.decode_destination(A.base58check_encode(b"\x00" + bytes(19)), "main")


def test_wif_rejects_out_of_range_and_wrong_chain():
    zero = A.encode_secret(bytes(32), True, "main")
    order = A.encode_secret(A.SECP256K1_ORDER.to_bytes(32, "big"), True, "main")
    assert A.decode_secret(zero, "main") is None
    assert A.decode_secret(order, "main") is None
    one = A.encode_secret((1).to_bytes(32, "big"), True, "main")
    assert one == "KwDiBf89QgGbjEhKnhXJuH7LrciVrZi3qYjgd9M7rFU73sVHnoWn"
    assert A.decode_secret(one, "regtest") is None
    # A 34-byte payload must end in 0x01.
    assert A.decode_secret(A.base58check_encode(b"\x80" + bytes(31) + b"\x01\x02"), "main") is None


def test_descriptor_checksums_bip380():
    data = load_json("bips/bip380_386_descriptor_vectors.json")
    tests = data["bips"]["bip0380"]["checksum_tests"]
    assert tests
    for t in tests:
        assert has_valid_checksum(t["descriptor"]) == t["checksum_verifies"], t["label"]
    checked = 0
    for bip in data["bips"].values():
        for d in bip.get("valid_descriptors", []):
            desc = d["descriptor"]
            if "#" in desc:
                assert has_valid_checksum(desc), desc
                checked += 1
    assert descriptor_checksum("raw(deadbeef)") == "89f8spxm"
    assert descriptor_checksum("raw(\u00dc)") is None


def test_five_bit_groups_of_every_length_are_convert_bits():
    # one spreading plan per byte length (address.py): each length checked, not only a sample
    rnd = random.Random(173)
    for n in range(0, 100):
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert A.bytes_to_5bit(data) == A.convert_bits(data, 8, 5, True), n
        assert A.bytes_to_5bit(b"\xff" * n) == A.convert_bits(b"\xff" * n, 8, 5, True), n
