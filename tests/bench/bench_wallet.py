"""Wallet benchmark: listsinceblock(tip-6), listsinceblock(""), gettransaction and
block-connect rate for wallets of 1k, 10k and 100k transactions. The store is
filled directly (one tx per block height spread over the chain); the point is
that the incremental listsinceblock stays flat as the wallet grows.

    .venv/bin/python -m tests.bench.bench_wallet [sizes...]
"""
import os
import sys
import tempfile
import time
import types

from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet import results
from quill.wallet import store as st
from quill.wallet.descriptors import parse
from quill.wallet.wallet import Wallet

DESC = "addr(" + __import__("quill.tx.address", fromlist=["x"]).encode_segwit_address("bcrt", 0, b"\x07" * 20) + ")"
TXS_PER_BLOCK = 10


class StubChain:
    def __init__(self, height):
        self.height = height

    def block_hash(self, h):
        return h.to_bytes(32, "little")

    def mempool_txs(self):
        return []


def build(path, n):
    s = st.Store(path, create=True)
    w = Wallet("bench", s, "regtest", keypool=1)
    desc = parse(DESC, "regtest")
    script = desc.script(0)
    with s.batch():
        w.add_descriptor(desc, 0, 0, 1, 0, False, False, None)
        height = n // TXS_PER_BLOCK + 1
        for i in range(n):
            tx = Transaction(2, [TxIn(OutPoint(i.to_bytes(32, "little"), 0), b"", 0xFFFFFFFE)],
                             [TxOut(10_000 + i, script)], 0)
            txid = tx.txid()
            h = i // TXS_PER_BLOCK + 1
            s.insert_tx(txid, i + 1, tx.serialize(), False, 1_700_000_000, 1_700_000_000)
            s.add_txout(txid, 0, 10_000 + i, script)
            s.set_state(txid, st.CONFIRMED, False, h.to_bytes(32, "little"), h, i % TXS_PER_BLOCK, 1_700_000_000)
        s.set_meta("tip_height", height)
        s.set_meta("tip_hash", height.to_bytes(32, "little"))
    return w, script, height, txid


def timed(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _returning(value):
    return lambda: value


def bench(n, tmp):
    w, script, height, last_txid = build(os.path.join(tmp, f"w{n}.sqlite"), n)
    chain = StubChain(height)

    def view():
        return results.View(w, chain)

    t_inc, out = timed(lambda: results.listsinceblock(view(), (height - 6, []), 1, True, False, None))
    n_inc = len(out["transactions"])
    t_all, out = timed(lambda: results.listsinceblock(view(), None, 1, True, False, None), repeat=1)
    n_all = len(out["transactions"])
    t_get, _ = timed(lambda: results.gettransaction(view(), w.store.get_tx(last_txid), False))
    blocks = []
    for b in range(20):
        txs = [Transaction(2, [TxIn(OutPoint((10 ** 9 + b * 100 + k).to_bytes(32, "little"), 0))],
                           [TxOut(5_000, script)], 0) for k in range(TXS_PER_BLOCK)]
        header = types.SimpleNamespace(time=1_700_000_000, prev_hash=b"\x00" * 32)
        blocks.append(types.SimpleNamespace(txs=txs, header=header,
                                            hash=_returning((height + 1 + b).to_bytes(32, "little"))))
    t = time.perf_counter()
    for b, blk in enumerate(blocks):
        w.block_connected(blk, height + 1 + b)
    rate = len(blocks) / (time.perf_counter() - t)
    w.store.close()
    return n, n_inc, t_inc * 1000, n_all, t_all * 1000, t_get * 1000, rate


def main(argv):
    sizes = [int(a) for a in argv] or [1_000, 10_000, 100_000]
    print(f"{'wallet txs':>10} | {'lsb(tip-6) entries':>18} | {'lsb(tip-6) ms':>13} | {'lsb() entries':>13} | "
          f"{'lsb() ms':>9} | {'gettx ms':>8} | {'blocks/s (10 wallet tx each)':>28}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            r = bench(n, tmp)
            print(f"{r[0]:>10} | {r[1]:>18} | {r[2]:>13.2f} | {r[3]:>13} | {r[4]:>9.0f} | {r[5]:>8.2f} | {r[6]:>28.1f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
