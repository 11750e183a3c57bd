"""quill.chain.block_scan against the full parser (quill.chain.block), and the bounded cache of
rendered block bodies (quill.handlers.blockchain.RenderedBlocks)."""
from __future__ import annotations

import pytest

from quill.chain.block import Block, BlockHeader
from quill.chain.block_scan import scan_block
from quill.handlers.blockchain import RenderedBlocks
from quill.rpc import univalue
from quill.tx.serialize import DeserializationError
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut


def _block() -> Block:
    coinbase = Transaction(2, [TxIn(OutPoint(b"\0" * 32, 0xFFFFFFFF), b"\x01\x02", 0xFFFFFFFF, [b"\0" * 32])],
                           [TxOut(50, b"\x51"), TxOut(0, b"\x6a\x24" + b"\xaa" * 36)], 0)
    legacy = Transaction(1, [TxIn(OutPoint(b"\x11" * 32, 3), b"\x00" * 300, 0xFFFFFFFE, [])],   # 3-byte length
                         [TxOut(1000, b"\x76\xa9\x14" + b"\x22" * 20 + b"\x88\xac")] * 3, 7)
    segwit = Transaction(2, [TxIn(OutPoint(b"\x33" * 32, 0), b"", 0xFFFFFFFD, [b"\x44" * 72, b"\x02" * 33]),
                             TxIn(OutPoint(b"\x55" * 32, 1), b"", 0xFFFFFFFD, [b"\x66" * 600])],
                         [TxOut(5000, b"\x00\x14" + b"\x77" * 20)], 0)
    many = Transaction(2, [TxIn(OutPoint(b"\x88" * 32, i), b"", 0, [b"\x01"]) for i in range(260)],
                       [TxOut(i, b"\x51") for i in range(300)], 0)
    return Block(BlockHeader(4, b"\x99" * 32, b"\xab" * 32, 1_700_000_000, 0x207FFFFF, 5),
                 [coinbase, legacy, segwit, many])


def test_scan_gives_the_parsers_txids_and_sizes():
    block = _block()
    raw = block.serialize()
    scan = scan_block(raw)
    assert scan.txids == [tx.txid() for tx in block.txs]
    assert (scan.size, scan.stripped_size, scan.weight) == (block.size(), block.stripped_size(), block.weight())
    assert raw[scan.first_tx:].startswith(block.txs[0].serialize())


def test_scan_refuses_cut_or_trailing_bytes():
    raw = _block().serialize()
    with pytest.raises(DeserializationError):
        scan_block(raw[:-1])
    with pytest.raises(DeserializationError):
        scan_block(raw + b"\0")


def test_rendered_blocks_keep_the_most_recent_within_their_bytes():
    cache = RenderedBlocks(3 * (100 + RenderedBlocks.ENTRY_OVERHEAD))
    for i in range(4):
        cache.put((i,), (1, "x" * 100))
    assert cache.get((0,)) is None and cache.get((1,)) == (1, "x" * 100)
    cache.put((4,), (1, "y" * 100))      # (2,) is now the least recently used
    assert cache.get((2,)) is None and cache.get((1,)) is not None and cache.get((4,)) is not None
    assert cache.used <= cache.max_bytes
    cache.put((5,), (1, "z" * 10_000))   # larger than the whole cache: not kept, nothing dropped
    assert cache.get((5,)) is None and cache.get((3,)) is not None


def test_raw_json_is_written_as_it_is_alone_and_inside_a_value():
    text = '{"a":1.50000000,"b":["x\\u0001",null,true]}'
    assert univalue.dumps(univalue.RawJSON(text)) == text
    assert univalue.dumps([univalue.RawJSON(text), 2]) == "[" + text + ",2]"
