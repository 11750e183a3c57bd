"""Mainnet-shaped blocks, valid, given to the real Bitcoin Core with submitblock (bench_follow_mainnet).

    chain = MainnetShapedChain(core, watched)     # watched: scripts a wallet watches
    chain.build(40)                               # 40 blocks of ~3,000 transactions on top of a funding stretch
    chain.first, chain.last                       # heights of the mainnet-shaped blocks

Each block has ~3,000 transactions (the coinbase, ~2,999 spends), ~6,400 inputs and ~7,600 outputs,
and is ~1.5 MB (weight ~3.9M), as mainnet's were in 2020-2024. The inputs spend coins anyone can
spend, so no key is needed, but they are shaped like mainnet's (script sizes of a legacy, a
nested-segwit, a native P2WPKH, a taproot key-path and a 2-of-3 P2WSH spend):

    legacy-like      P2SH(<8> OP_DROP OP_2DROP OP_TRUE)          scriptSig <72> <33> <redeem>
    nested segwit    P2SH(P2WSH(<8> OP_DROP OP_2DROP OP_TRUE))   scriptSig <P2WSH>, witness <72> <33> <ws>
    native segwit    P2WSH(<8> OP_DROP OP_2DROP OP_TRUE)         witness <72> <33> <ws>
    taproot-sized    P2WSH(<8> OP_DROP OP_DROP OP_TRUE)          witness <64> <ws>
    2-of-3-sized     P2WSH(OP_2DROP OP_DROP <100> OP_DROP OP_TRUE)   witness <> <72> <72> <ws>

(<8>, <100>: random bytes, so that every output script is unique and block filters are as large as
mainnet's.)

Outputs: as many spendable ones as inputs on average (the coins stay in circulation), plus, in two
transactions out of five, one to a stranger's P2PKH, P2WPKH or P2TR, and three payments per block
to `watched`.
"""
from __future__ import annotations

import random
import time
from typing import Any

from quill.chain.block import Block, BlockHeader
from quill.chain.miner import add_witness_commitment, coinbase_tx, grind
from quill.chain.params import POW_LIMIT_REGTEST, block_subsidy, chain_params
from quill.chain.upstream import UpstreamRPC
from quill.tx.script import p2sh_of, p2wsh_of, push_data
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

TXS = 3000
PAYMENTS = 3                        # wallet payments per block
FEE = 400
OP_TRUE, OP_DROP, OP_2DROP = b"\x51", b"\x75", b"\x6d"
SPACING = 600
LEGACY, NESTED, NATIVE, TAPROOT_SIZED, MULTISIG_SIZED = range(5)


def witness_script(kind: int, nonce: bytes) -> bytes:
    """The coin's script: drops what its spend pushes and leaves OP_TRUE. `nonce` (8 bytes; 100 for
    the 2-of-3-sized) makes every output script unique, as on mainnet, so block filters are as large."""
    if kind == TAPROOT_SIZED:
        return push_data(nonce) + OP_DROP + OP_DROP + OP_TRUE                 # drops <schnorr sig>
    if kind == MULTISIG_SIZED:
        return OP_2DROP + OP_DROP + push_data(nonce) + OP_DROP + OP_TRUE      # 106 bytes, as a 2-of-3
    return push_data(nonce) + OP_DROP + OP_2DROP + OP_TRUE                    # drops <sig> <pubkey>


def output_script(kind: int, ws: bytes) -> bytes:
    if kind == LEGACY:
        return p2sh_of(ws)
    if kind == NESTED:
        return p2sh_of(p2wsh_of(ws))
    return p2wsh_of(ws)


class MainnetShapedChain:
    def __init__(self, core: Any, watched: list[bytes], seed: int = 2020) -> None:
        self.node = UpstreamRPC(core.url_for_follower, timeout=600)
        self.watched = watched
        self.rng = random.Random(seed)
        self.pool: list[tuple[OutPoint, int, int, bytes]] = []     # (outpoint, value, kind, witness script)
        self.first = self.last = 0
        self.coinbase_ws = witness_script(NATIVE, bytes(8))

    def _coin_script(self, kind: int) -> tuple[bytes, bytes]:
        """(witness script, output script) of a new coin of `kind`."""
        ws = witness_script(kind, self.rng.randbytes(100 if kind == MULTISIG_SIZED else 8))
        return ws, output_script(kind, ws)

    def _spend(self, coin: tuple[OutPoint, int, int, bytes]) -> TxIn:
        rb = self.rng.randbytes
        outpoint, _, kind, ws = coin
        if kind == LEGACY:
            return TxIn(outpoint, push_data(rb(72)) + push_data(rb(33)) + push_data(ws), 0xFFFFFFFD)
        if kind == NESTED:
            return TxIn(outpoint, push_data(p2wsh_of(ws)), 0xFFFFFFFD, [rb(72), rb(33), ws])
        if kind == NATIVE:
            return TxIn(outpoint, b"", 0xFFFFFFFD, [rb(72), rb(33), ws])
        if kind == TAPROOT_SIZED:
            return TxIn(outpoint, b"", 0xFFFFFFFD, [rb(64), ws])
        return TxIn(outpoint, b"", 0xFFFFFFFD, [b"", rb(72), rb(72), ws])

    def _stranger(self) -> bytes:
        rb, k = self.rng.randbytes, self.rng.randrange(3)
        return (b"\x76\xa9\x14" + rb(20) + b"\x88\xac", b"\x00\x14" + rb(20), b"\x51\x20" + rb(32))[k]

    def _block(self, height: int, prev: bytes, when: int, txs: list[Transaction]) -> Block:
        params = chain_params("regtest")
        reward = block_subsidy(height, params) + FEE * len(txs)
        cb = coinbase_tx(height, output_script(NATIVE, self.coinbase_ws), reward)
        block = Block(BlockHeader(0x20000000, prev, bytes(32), when, 0x207FFFFF, 0), [cb] + txs)
        add_witness_commitment(block)
        grind(block, POW_LIMIT_REGTEST, 1 << 20)
        return block

    def build(self, nblocks: int) -> None:
        node, rng = self.node, self.rng
        start = int(node.call("getblockcount"))
        prev = bytes.fromhex(node.call("getbestblockhash"))[::-1]
        t0 = int(time.time()) - (nblocks + 120) * SPACING
        coinbases = []
        pending: list[str] = []
        height = start

        def submit(block: Block) -> None:
            nonlocal prev, height
            pending.append(block.serialize().hex())
            prev, height = block.hash(), height + 1
            if len(pending) >= 4:
                flush()

        def flush() -> None:
            refused = [r for r in node.batch([("submitblock", b) for b in pending]) if r is not None]
            if refused:
                raise RuntimeError(f"Core refused a block: {refused[0]}")
            pending.clear()

        # 104 coinbases, then four of them fanned out into ~10,000 coins of every kind
        for _ in range(104):
            block = self._block(height + 1, prev, t0 + (height + 1) * SPACING, [])
            coinbases.append((block.txs[0].txid(), block.txs[0].vout[0].value))
            submit(block)
        fan = []
        for txid, value in coinbases[:4]:
            n = 2500
            each = (value - FEE) // n
            spend = TxIn(OutPoint(txid, 0), b"", 0xFFFFFFFD, [bytes(72), bytes(33), self.coinbase_ws])
            scripts = [self._coin_script(i % 5) for i in range(n)]
            tx = Transaction(2, [spend], [TxOut(each, out) for _, out in scripts], 0)
            fan.append(tx)
            self.pool += [(OutPoint(tx.txid(), i), each, i % 5, ws) for i, (ws, _) in enumerate(scripts)]
        rng.shuffle(self.pool)
        submit(self._block(height + 1, prev, t0 + (height + 1) * SPACING, fan))
        self.first = height + 1
        for _ in range(nblocks):
            txs = []
            created: list[tuple[OutPoint, int, int, bytes]] = []
            for k in range(TXS - 1):
                n_in = min(rng.choice((1, 1, 2, 2, 2, 3, 4)), len(self.pool))
                coins = [self.pool.pop() for _ in range(n_in)]
                total = sum(c[1] for c in coins) - FEE
                outs: list[TxOut] = []
                if k < PAYMENTS and total > 100_000:
                    outs.append(TxOut(50_000, rng.choice(self.watched)))
                if rng.random() < 0.4 and total > 20_000:
                    outs.append(TxOut(1_000, self._stranger()))
                total -= sum(o.value for o in outs)
                n_keep = rng.choice((1, 1, 2, 2, 2, 3, 4))
                while n_keep > 1 and total // n_keep < 2_000:      # no dust: every coin stays spendable
                    n_keep -= 1
                kept = {}
                for _ in range(n_keep):
                    kind = rng.randrange(5)
                    ws, out = self._coin_script(kind)
                    kept[out] = (kind, ws)
                    outs.append(TxOut(total // n_keep, out))
                rng.shuffle(outs)
                tx = Transaction(2, [self._spend(c) for c in coins], outs, 0)
                txs.append(tx)
                txid = tx.txid()
                created += [(OutPoint(txid, n), o.value, *kept[o.script_pubkey])
                            for n, o in enumerate(outs) if o.script_pubkey in kept]
            self.pool = created + self.pool
            rng.shuffle(self.pool)
            submit(self._block(height + 1, prev, t0 + (height + 1) * SPACING, txs))
        flush()
        self.last = int(node.call("getblockcount"))
        assert self.last == height, (self.last, height)

