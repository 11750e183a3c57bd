"""quill.chain.prescan: the `re` searches that let a follower skip walking a block never miss a block the
walk (quill.chain.scan) would find something in.

* ScriptPatterns on a corpus of blocks paying scripts of every shape (the standard templates, P2PK, bare
  multisig, empty, one-byte, self-overlapping and >= 253-byte scripts) at whatever offsets they fall,
  with scriptSigs and witnesses that carry watched scripts' bytes (false alarms, which are allowed): a
  block in which the full parse finds a paid watched script is always flagged.
* Follower.read_block over a chain of blocks against a wallet that takes in what it is given: spends of
  its coins (seen in the spent outputs), of outpoints it never saw created (searched one by one, or
  the block walked when there are many), of outpoints settled in an earlier block, and without the
  spent outputs (JSON-RPC): every block gives exactly the transactions scan_block finds.
"""
from __future__ import annotations

import logging
import random
import threading
from typing import Any

import pytest

from quill.chain import follower as follower_mod
from quill.chain import prescan
from quill.chain.block import Block, BlockHeader
from quill.chain.follower import Follower, ScanHint
from quill.chain.prescan import MAX_FIND, ScriptPatterns, serialized
from quill.chain.scan import AnyOf, outpoint_key, scan_block
from quill.tx.serialize import compact_size
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut


def _shapes(rng: random.Random) -> list[bytes]:
    rb = rng.randbytes
    return [
        b"\x00\x14" + rb(20),                                   # P2WPKH
        b"\x00\x20" + rb(32),                                   # P2WSH
        b"\x51\x20" + rb(32),                                   # P2TR
        b"\xa9\x14" + rb(20) + b"\x87",                         # P2SH
        b"\x76\xa9\x14" + rb(20) + b"\x88\xac",                 # P2PKH
        b"\x21" + b"\x02" + rb(32) + b"\xac",                   # P2PK
        b"\x51\x21\x02" + rb(32) + b"\x21\x03" + rb(32) + b"\x52\xae",   # bare 1-of-2
        b"",                                                    # empty
        rb(1),                                                  # one byte
        b"\x02\x02" + rb(rng.randrange(3)),                     # ser(s) 02 02 02 / 03 02 02 ...
        b"\x01\x03" + rb(1),                                   # ser(s) 03 01 03 ..: overlaps itself
        rb(300),                                                # CompactSize fd 2c 01
        b"\x6a\x04" + rb(4),                                    # OP_RETURN
    ]


def _corpus_block(rng: random.Random, watched: list[bytes], others: list[bytes]) -> Block:
    txs = [Transaction(1, [TxIn(OutPoint(), rng.randbytes(8), 0xFFFFFFFF)], [TxOut(50, rng.choice(others))], 0)]
    for k in range(120):
        vin = [TxIn(OutPoint(rng.randbytes(32), rng.randrange(5)), rng.randbytes(rng.choice((0, 1, 23, 107))),
                    0xFFFFFFFD) for _ in range(rng.randrange(1, 4))]
        if k % 3:
            for i in vin:
                i.witness = [rng.randbytes(rng.choice((0, 1, 33, 72, 300))) for _ in range(rng.randrange(1, 4))]
        if k % 17 == 5:         # a witness carrying a watched script's bytes: a false alarm at most
            vin[0].witness = [rng.randbytes(rng.randrange(5)) + serialized(rng.choice(watched))]
        if k % 19 == 7:
            vin[0].script_sig = rng.randbytes(rng.randrange(3)) + serialized(rng.choice(watched))
        vout = [TxOut(rng.randrange(10**8), rng.choice(others)) for _ in range(rng.randrange(1, 5))]
        if rng.random() < 0.03:
            script = rng.choice(watched)
            # the value's top bytes repeat the script's first ones: 03 01 | 03 01 03 .. has the prefix twice
            top = serialized(script)[:2]
            value = int.from_bytes(rng.randbytes(6) + top, "little") if top[-1:] < b"\x80" else 1000
            vout[rng.randrange(len(vout))] = TxOut(value, script)
        txs.append(Transaction(2, vin, vout, rng.randrange(2)))
    return Block(BlockHeader(0x20000000, rng.randbytes(32), bytes(32), 0, 0x207FFFFF, 0), txs)


@pytest.mark.parametrize("seed", range(4))
def test_script_searches_flag_every_block_that_pays_a_watched_script(seed, monkeypatch):
    monkeypatch.setattr(prescan, "MAX_GROUPS", 1000)         # every shape at once (a wallet has a few)
    rng = random.Random(seed)
    watched = [s for _ in range(6) for s in _shapes(rng)]
    others = [s for _ in range(20) for s in _shapes(rng)]
    patterns = ScriptPatterns()
    patterns.update(frozenset(watched[: len(watched) // 2]))
    patterns.update(frozenset(watched))                      # grown: the new scripts join their groups
    assert patterns.usable and len(patterns.searches) > 5
    paying = quiet = 0
    for _ in range(60):
        block = _corpus_block(rng, watched, others)
        raw = block.serialize()
        pays = bool(scan_block(raw, frozenset(watched), set()).indexed)
        flagged = patterns.found_in(raw)
        assert flagged or not pays
        for out in (o for tx in block.txs for o in tx.vout if o.script_pubkey in patterns.scripts):
            assert patterns.found_in(out.serialize())        # each paying output alone, its value before it
        paying += pays
        quiet += not flagged
    assert paying > 10 and quiet == 0      # every block carries watched bytes somewhere (witness/scriptSig)
    # no false alarm where nothing watched is anywhere
    plain = ScriptPatterns()
    plain.update(frozenset(b"\x00\x14" + rng.randbytes(20) for _ in range(50)))
    raw = _corpus_block(rng, [b"\x00\x14" + bytes(20)], others).serialize()
    assert not plain.found_in(raw) and not scan_block(raw, plain.scripts, set()).indexed


def test_too_many_groups_leaves_the_block_to_the_walk():
    rng = random.Random(5)
    patterns = ScriptPatterns()
    patterns.update(frozenset(rng.randbytes(rng.randrange(1, 40)) for _ in range(200)))
    assert not patterns.usable


# -- Follower.read_block over a chain, against a wallet taking in what it is given ----------------------

class _Index:
    def __init__(self) -> None:
        self.active: set[bytes] = set()

    def get(self, block_hash: bytes) -> Any:
        return block_hash if block_hash in self.active else None

    def contains(self, entry: Any) -> bool:
        return entry in self.active


class _Service:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.state = type("State", (), {"index": _Index()})()


class _Chain:
    """Blocks spending the coins of earlier ones: the wallet's, strangers', and outpoints never created."""

    def __init__(self, rng: random.Random, mine: list[bytes]) -> None:
        self.rng = rng
        self.mine = mine
        self.coins: dict[tuple[bytes, int], bytes] = {}      # unspent: outpoint -> script

    def block(self, pay: int, spend_mine: int, spend: list[tuple[bytes, int]]) -> tuple[Block, bytes]:
        rng, rb = self.rng, self.rng.randbytes
        txs = [Transaction(1, [TxIn(OutPoint(), rb(8), 0xFFFFFFFF)], [TxOut(50, b"\x00\x14" + rb(20))], 0)]
        spent_outputs = [b"\x00"]
        mine_coins = [c for c, s in self.coins.items() if s in self.mine]
        strangers = [c for c, s in self.coins.items() if s not in self.mine]
        wanted = rng.sample(mine_coins, min(spend_mine, len(mine_coins))) + list(spend)
        for k in range(80):
            picks = [wanted.pop()] if wanted and k % 7 == 3 else []
            picks += [rng.choice(strangers)] if strangers and rng.random() < 0.5 else [(rb(32), 0)]
            vin = [TxIn(OutPoint(*c), rb(rng.choice((0, 107))), 0xFFFFFFFD, [rb(72), rb(33)]) for c in picks]
            outs = [TxOut(1000, rng.choice((b"\x00\x14" + rb(20), b"\x51\x20" + rb(32))))
                    for _ in range(rng.randrange(1, 4))]
            if pay and k % 11 == 4:
                outs.append(TxOut(2000, rng.choice(self.mine)))
                pay -= 1
            tx = Transaction(2, vin, outs, 0)
            txs.append(tx)
            spent_outputs.append(compact_size(len(picks)) + b"".join(
                TxOut(1000, self.coins.pop(c, b"\x51\x20" + rb(32))).serialize() for c in picks))
            self.coins.update({(tx.txid(), n): o.script_pubkey for n, o in enumerate(outs)})
        assert not wanted
        block = Block(BlockHeader(0x20000000, rb(32), bytes(32), 0, 0x207FFFFF, 0), txs)
        return block, compact_size(len(txs)) + b"".join(spent_outputs)


@pytest.mark.parametrize("with_spent,wallets", [(True, 1), (False, 1), (True, 2)])
def test_read_block_finds_what_the_walk_finds_block_after_block(with_spent, wallets, monkeypatch):
    rng = random.Random(21)
    mine = [b"\x00\x14" + rng.randbytes(20) for _ in range(40)]
    scripts = frozenset(mine + [b"\x00\x14" + rng.randbytes(20) for _ in range(2000)])
    outpoints: set[bytes] = set()
    service = _Service()
    follower = Follower(service, "http://u:p@127.0.0.1:1", 1.0, logging.getLogger("test"))
    follower._rest = False              # the spent outputs come with the block or not at all
    follower.ask_utxos = lambda keys: follower.book.record(dict.fromkeys(keys))     # no UTXO set to ask
    chain = _Chain(rng, mine)
    # a stretch of strangers' coins, then the wallet's history: payments, spends, foreign outpoints
    plan = [(0, 0, 0)] * 3 + [(8, 0, 0), (8, 0, 0), (0, 0, 0), (0, 1, 0), (2, 1, 0), (0, 0, 1), (0, 0, 0),
                              (0, 2, 0), (0, 0, MAX_FIND + 2), (0, 0, 0), (1, 0, 0)]
    walked: list[int] = []
    monkeypatch.setattr(follower_mod, "scan_block", lambda *a: walked.append(len(plan_done)) or scan_block(*a))
    plan_done: list[int] = []
    read = []
    for pay, spend_mine, n_foreign in plan:
        if len(read) == 10:     # block 8 read again finds the spend that settled an outpoint there
            again = [i for i, _ in follower.read_block(*read[8], ScanHint(0, scripts, 1, outpoints)).indexed]
            again_expected = [i for i, _ in scan_block(read[8][1][0], scripts, set(outpoints)).indexed]
            walked.pop()
        if n_foreign:       # outpoints the wallet holds but Quill never saw created (a mempool spend's inputs)
            foreign = [(rng.randbytes(32), rng.randrange(3)) for _ in range(n_foreign)]
            outpoints |= {outpoint_key(t, n) for t, n in foreign}
            chain.coins.update({c: b"\x51\x20" + rng.randbytes(32) for c in foreign})
        block, spent = chain.block(pay, spend_mine, foreign[:1] if n_foreign else [])
        raw = block.serialize()
        read.append((block.hash(), (raw, spent if with_spent else None)))
        expected = scan_block(raw, scripts, set(outpoints))
        # two wallets: the outpoints as hint_union gives them (the second wallet holds none)
        hint = ScanHint(0, scripts, 1, outpoints if wallets == 1 else AnyOf([outpoints, set()]))
        got = follower.read_block(block.hash(), (raw, spent if with_spent else None), hint)
        assert [(i, tx.wtxid()) for i, tx in got.indexed] == [(i, tx.wtxid()) for i, tx in expected.indexed]
        assert got.hash() == block.hash() and got.n_tx == len(block.txs)
        plan_done.append(1)
        service.state.index.active.add(block.hash())          # connected: its spends settle
        for _, tx in got.indexed:                              # the wallet takes in its transactions
            outpoints |= {outpoint_key(tx.txid(), n) for n, o in enumerate(tx.vout) if o.script_pubkey in scripts}
            outpoints |= {outpoint_key(i.prevout.hash, i.prevout.n) for i in tx.vin}
    # walked: the blocks with wallet transactions, and those after many unknown outpoints came (which a
    # block spends one of, or not); without the spent outputs, also those after the wallet held many coins
    assert walked == ([3, 4, 6, 7, 8, 10, 11, 12, 13] if with_spent else [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    assert again == again_expected != []


def test_an_outpoint_counts_as_covered_only_while_its_script_is_watched():
    rng = random.Random(8)
    mine, other = b"\x00\x14" + rng.randbytes(20), b"\x00\x14" + rng.randbytes(20)
    tx = Transaction(2, [TxIn(OutPoint(rng.randbytes(32), 0), b"", 0xFFFFFFFD)], [TxOut(1000, mine)], 0)
    book = prescan.OutpointBook()
    book.learn(b"B" * 32, [tx], {mine})
    coin, spent = outpoint_key(tx.txid(), 0), outpoint_key(tx.vin[0].prevout.hash, 0)
    held = {coin, spent}
    assert book.risky(held, {mine}, 1, b"C" * 32, True) == [spent]            # not settled until B is active
    book.confirm(lambda h: h == b"B" * 32)
    assert book.risky(held, {mine}, 1, b"C" * 32, True) == []
    assert book.risky(held, {mine}, 1, b"B" * 32, True) == [spent]            # but in B itself
    assert book.risky(held, {mine}, 1, b"C" * 32, False) == [coin]           # no spent outputs to search
    assert book.risky(held, {other}, 2, b"C" * 32, True) == [coin]           # its script no longer watched
    theirs = Transaction(2, [TxIn(OutPoint(rng.randbytes(32), 0), b"", 0xFFFFFFFD)], [TxOut(1000, other)], 0)
    book.learn(b"D" * 32, [theirs], {other})                                 # another wallet's coin
    assert book.risky(held, {mine}, 3, b"C" * 32, True) == []                # does not spoil this one's
    book.forget_settled()
    assert sorted(book.risky(held, {mine}, 1, b"C" * 32, True)) == [spent]
