"""BIP158 basic filters and BIP157 headers: every case of Core's blockfilters.json (testnet
blocks with their spent scripts), byte for byte."""
from quill.chain.block import Block
from quill.chain.blockfilter import basic_filter, elements, filter_header, siphash24
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
