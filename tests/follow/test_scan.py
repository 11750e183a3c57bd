"""quill.chain.scan: scanning a raw block finds exactly the transactions a full decode and a wallet's
own test (pays a watched script, spends a watched outpoint, or spends an output of an earlier match
in the same block) would find, with their positions; malformed blocks are refused."""
from __future__ import annotations

import random

import pytest

from quill.chain.block import Block, BlockHeader
from quill.chain.scan import AnyOf, outpoint_key, scan_block
from quill.tx.serialize import DeserializationError
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut


def _block(rng: random.Random, watched: list[bytes], owned: list[tuple[bytes, int]]) -> Block:
    txs = [Transaction(1, [TxIn(OutPoint(), rng.randbytes(8), 0xFFFFFFFF)], [TxOut(50, rng.choice(watched))], 0)]
    for k in range(300):
        vin = [TxIn(OutPoint(rng.randbytes(32), rng.randrange(3)), rng.randbytes(rng.choice((0, 23, 107))),
                    0xFFFFFFFD) for _ in range(rng.randrange(1, 4))]
        if k % 3:       # segwit
            for i in vin:
                i.witness = [rng.randbytes(rng.choice((0, 33, 72, 300))) for _ in range(rng.randrange(1, 4))]
        if k % 50 == 7:
            vin[0].prevout = OutPoint(*rng.choice(owned))
        if k % 50 == 21:    # spends the previous transaction's first output (a match when that paid us)
            vin[0].prevout = OutPoint(txs[-1].txid(), 0)
        vout = [TxOut(rng.randrange(10**8), b"\x00\x14" + rng.randbytes(20)) for _ in range(rng.randrange(1, 4))]
        if k % 50 == 20:
            vout[0] = TxOut(1000, rng.choice(watched))
        txs.append(Transaction(2, vin, vout, 0))
    return Block(BlockHeader(0x20000000, bytes(32), bytes(32), 0, 0x207FFFFF, 0), txs)


def _expected(block: Block, watched: set[bytes], owned: set[bytes]) -> list[int]:
    found, ours = [], set()
    for i, tx in enumerate(block.txs):
        keys = [outpoint_key(t.prevout.hash, t.prevout.n) for t in tx.vin]
        if any(o.script_pubkey in watched for o in tx.vout) or any(k in owned or k in ours for k in keys):
            found.append(i)
            ours |= {outpoint_key(tx.txid(), n) for n, o in enumerate(tx.vout) if o.script_pubkey in watched}
            ours |= set(keys)
    return found


@pytest.mark.parametrize("seed", range(5))
def test_scan_finds_what_a_full_decode_finds(seed):
    rng = random.Random(seed)
    watched = [b"\x00\x14" + rng.randbytes(20) for _ in range(10)]
    owned = [(rng.randbytes(32), rng.randrange(4)) for _ in range(10)]
    block = _block(rng, watched, owned)
    owned_keys = {outpoint_key(t, n) for t, n in owned}
    sparse = scan_block(block.serialize(), set(watched), owned_keys)
    expected = _expected(block, set(watched), owned_keys)
    assert len(expected) > 12                            # payments, spends and same-block chains
    assert [i for i, _ in sparse.indexed] == expected
    assert [tx.wtxid() for _, tx in sparse.indexed] == [block.txs[i].wtxid() for i in expected]
    assert sparse.hash() == block.hash() and sparse.n_tx == len(block.txs)
    # several wallets' sets, looked up without a union
    split = scan_block(block.serialize(), AnyOf([set(watched[:5]), set(watched[5:])]), AnyOf([owned_keys, set()]))
    assert [i for i, _ in split.indexed] == expected


def test_malformed_blocks_are_refused():
    rng = random.Random(9)
    watched = [b"\x00\x14" + rng.randbytes(20)]
    raw = _block(rng, watched, [(bytes(32), 0)]).serialize()
    for bad in (raw[:-1], raw + b"\x00", raw[:200], raw[:81]):
        with pytest.raises(DeserializationError):
            scan_block(bad, set(watched), set())
