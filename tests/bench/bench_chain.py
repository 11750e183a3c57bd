"""Block-connect rate of the built-in chain: empty blocks and blocks of 100 transactions.

    .venv/bin/python -m tests.bench.bench_chain [n_blocks]

Blocks are built first (not timed), then handed to ChainService.submit_block
on a chain in a temporary datadir: the time covers the full acceptance of
each block — context-free and contextual checks, script verification through
quill.tx.verify, and ONE SQLite transaction for the UTXO, undo, txindex and
tip changes. The 100-transaction blocks spend the previous block's 100
P2WSH(OP_TRUE) outputs, one input and one output each.
"""
import os
import sys
import tempfile
import time

from quill.chain import miner  # noqa: E402
from quill.chain.params import COIN  # noqa: E402
from quill.chain.service import ChainService  # noqa: E402
from tests.chain.chain_testkit import spend  # noqa: E402
from tests.kit.anyone import ANYONE_SCRIPT  # noqa: E402

TXS_PER_BLOCK = 100
FEE = 1000


def _build(service, txs):
    block = miner.new_block(service.state, ANYONE_SCRIPT, txs, FEE * len(txs), service.clock())
    miner.grind(block, service.params.pow_limit, 10**6)
    return block


def bench_empty(n):
    with tempfile.TemporaryDirectory() as d:
        source = ChainService("regtest", os.path.join(d, "a")).start()
        source.generate(ANYONE_SCRIPT, n, 10**9)
        blocks = [source.block(source.block_hash(h)) for h in range(1, n + 1)]
        source.close()
        target = ChainService("regtest", os.path.join(d, "b")).start()
        start = time.perf_counter()
        for block in blocks:
            assert target.submit_block(block) is None
        elapsed = time.perf_counter() - start
        target.close()
    return n, 0, elapsed


def bench_full(n):
    with tempfile.TemporaryDirectory() as d:
        service = ChainService("regtest", os.path.join(d, "a")).start()
        service.generate(ANYONE_SCRIPT, 101, 10**9)
        fan = spend(service.block(service.block_hash(1)).txs[0].txid(), 0, 50 * COIN, outputs=TXS_PER_BLOCK)
        assert service.submit_block(_build(service, [fan])) is None
        outputs = [(fan.txid(), i, fan.vout[i].value) for i in range(TXS_PER_BLOCK)]
        elapsed = 0.0
        for _ in range(n):
            txs = [spend(txid, i, value, FEE) for txid, i, value in outputs]
            block = _build(service, txs)
            start = time.perf_counter()
            assert service.submit_block(block) is None
            elapsed += time.perf_counter() - start
            outputs = [(tx.txid(), 0, tx.vout[0].value) for tx in txs]
        service.close()
    return n, n * TXS_PER_BLOCK, elapsed


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 200
    rows = [("empty blocks", *bench_empty(n)), (f"{TXS_PER_BLOCK}-tx blocks", *bench_full(max(1, n // 10)))]
    print(f"{'scenario':<16} {'blocks':>7} {'txs':>7} {'seconds':>9} {'blocks/s':>10} {'tx/s':>9}")
    for name, blocks, txs, secs in rows:
        print(f"{name:<16} {blocks:>7} {txs:>7} {secs:>9.3f} {blocks / secs:>10.1f} {txs / secs:>9.0f}")


if __name__ == "__main__":
    main(sys.argv)
