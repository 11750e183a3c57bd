"""BIP158 basic filters and BIP157 headers: every case of Core's blockfilters.json (testnet
blocks with their spent scripts), byte for byte."""
import random
import struct

import pytest

from quill.chain.block import Block
from quill.chain.blockfilter import (
    BASIC_M,
    FilterQuery,
    basic_filter,
    decode_filter,
    elements,
    filter_header,
    siphash24,
)
from quill.tx.serialize import DeserializationError
from tests.kit.vectors import load_json


def test_siphash24_reference_vector():
    # The SipHash paper's test vector: key 00..0f, message 00..0e -> a129ca6149be45e5.
    k = bytes(range(16))
    k0, k1 = int.from_bytes(k[:8], "little"), int.from_bytes(k[8:], "little")
    assert siphash24(k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5


def test_core_block_filter_vectors():
    rows = [r for r in load_json("core/blockfilters.json") if len(r) > 1]
    assert len(rows) == 10
    for height, block_hash, raw, spent, prev_header, want_filter, want_header, note in rows:
        block = Block.from_bytes(bytes.fromhex(raw))
        assert block.hash()[::-1].hex() == block_hash
        got = basic_filter(block.hash(), elements(block, [bytes.fromhex(s) for s in spent]))
        assert got.hex() == want_filter, (height, note)
        header = filter_header(got, bytes.fromhex(prev_header)[::-1])
        assert header[::-1].hex() == want_header, (height, note)


def test_decode_and_match_core_filters():
    """Quill's own matcher on Core's filters: decoding gives the hashed elements in order, every
    element matches, and scripts absent from the block match only where their hash collides."""
    rows = [r for r in load_json("core/blockfilters.json") if len(r) > 1]
    strangers = [bytes([0x00, 0x14]) + bytes([i]) * 20 for i in range(50)]
    matched_any = False
    for height, _, raw, spent, _, want_filter, _, note in rows:
        block = Block.from_bytes(bytes.fromhex(raw))
        items = elements(block, [bytes.fromhex(s) for s in spent])
        filter_bytes = bytes.fromhex(want_filter)
        k0, k1 = struct.unpack_from("<QQ", block.hash())
        hashed = sorted((siphash24(k0, k1, item) * len(items) * BASIC_M) >> 64 for item in items)
        assert decode_filter(filter_bytes) == hashed, (height, note)
        for item in items:
            assert FilterQuery([item]).match_any(block.hash(), filter_bytes), (height, note)
        for script in strangers:
            collides = bool(hashed) and FilterQuery([script]).hashed(block.hash(), len(items))[0] in hashed
            assert FilterQuery([script]).match_any(block.hash(), filter_bytes) is collides
        matched_any |= FilterQuery(strangers + sorted(items)).match_any(block.hash(), filter_bytes)
    assert matched_any


def test_matcher_agrees_with_the_encoder_on_a_large_filter():
    rng = random.Random(158)
    block_hash = rng.randbytes(32)
    items = {rng.randbytes(rng.choice((22, 23, 25, 34))) for _ in range(5000)}
    filter_bytes = basic_filter(block_hash, items)
    assert len(decode_filter(filter_bytes)) == len(items)
    present = sorted(items)[:3]
    assert FilterQuery(present).match_any(block_hash, filter_bytes)
    absent = [rng.randbytes(22) for _ in range(200)]
    hits = sum(FilterQuery([s]).match_any(block_hash, filter_bytes) for s in absent)
    assert hits <= 2                      # false positives: 1 in M (784,931) per element and script


def test_malformed_filters_are_refused():
    block_hash = bytes(32)
    good = basic_filter(block_hash, {b"\x00\x14" + bytes(20), b"\x51\x20" + bytes(32)})
    for bad in (good[:-1], good + b"\x00", b"\x05"):
        with pytest.raises(DeserializationError):
            decode_filter(bad)
    assert decode_filter(b"\x00") == []
    assert not FilterQuery([b"\x00"]).match_any(block_hash, b"\x00")
