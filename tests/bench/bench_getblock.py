"""getblock on 2,001-transaction blocks: Bitcoin Core, quilld's built-in chain and quilld following
that Core (-chainsource), side by side in one run (issue 28: Quill's time / Core's <= 1.0 at
verbosity 1 and 2, both modes).

    .venv/bin/python -m tests.bench.bench_getblock [rounds]      (default 15)

The chain is made in-process (quill.chain: 101 blocks, a fan-out, then BLOCKS blocks of a coinbase
and 2,000 one-input, two-output transactions, one output paying a P2WPKH of its own), then given to
Core and to the built-in quilld by submitblock; the follower follows Core. Each client holds one
keep-alive connection and reads the whole answer. Every answer is checked to be Core's, byte for byte.

"first" is the first request for each block (quilld has rendered nothing yet); the rounds then
alternate the three servers, asking for each block in turn, and each server's median is shown with
its ratio to Core's median. The load average is printed: other work on the machine weighs on all alike.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from quill.chain import miner
from quill.chain.params import COIN
from quill.chain.service import ChainService
from quill.tx.hashes import sha256
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.follow.corekit import wait_for
from tests.kit.anyone import ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.bitcoind import RPC_PASSWORD, RPC_USER, BitcoinD, follower
from tests.kit.rpc_daemon import QuillDaemon

TXS = 2000
BLOCKS = 3
FEE = 1000


def build_blocks(datadir: Path) -> list[bytes]:
    """The serialized blocks of the chain, from height 1."""
    service = ChainService("regtest", str(datadir)).start()
    try:
        service.generate(ANYONE_SCRIPT, 101, 10**9)

        def mine(txs: list[Transaction]) -> None:
            block = miner.new_block(service.state, ANYONE_SCRIPT, txs, FEE * len(txs), service.clock())
            miner.grind(block, service.params.pow_limit, 10**6)
            assert service.submit_block(block) is None

        coinbase = service.block(service.block_hash(1)).txs[0]
        each = (50 * COIN - FEE) // TXS
        fan = Transaction(2, [TxIn(OutPoint(coinbase.txid(), 0), b"", 0xFFFFFFFD, list(ANYONE_WITNESS))],
                          [TxOut(each, ANYONE_SCRIPT) for _ in range(TXS)], 0)
        mine([fan])
        coins = [(fan.txid(), i, each) for i in range(TXS)]
        for b in range(BLOCKS):
            txs = []
            for i, (txid, n, value) in enumerate(coins):
                payee = b"\x00\x14" + sha256(b"%d/%d" % (b, i))[:20]
                txs.append(Transaction(2, [TxIn(OutPoint(txid, n), b"", 0xFFFFFFFD, list(ANYONE_WITNESS))],
                                       [TxOut(value - FEE - 1000, ANYONE_SCRIPT), TxOut(1000, payee)], 0))
            mine(txs)
            coins = [(tx.txid(), 0, tx.vout[0].value) for tx in txs]
        height = service.tip()[0]
        return [service.block_raw(service.block_hash(h)) for h in range(1, height + 1)]
    finally:
        service.close()


class Client:
    """One keep-alive JSON-RPC connection; `ask` returns the reply body and the seconds it took."""

    def __init__(self, name: str, port: int, user: str, password: str) -> None:
        self.name = name
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.headers = {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode(),
                        "Content-Type": "application/json"}

    def ask(self, method: str, *params: object) -> tuple[bytes, float]:
        body = json.dumps({"jsonrpc": "1.0", "id": "b", "method": method, "params": list(params)})
        start = time.perf_counter()
        self.conn.request("POST", "/", body, self.headers)
        reply = self.conn.getresponse().read()
        return reply, time.perf_counter() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    tmp = Path(tempfile.mkdtemp(prefix="bench_getblock"))
    t = time.monotonic()
    raw_blocks = build_blocks(tmp / "build")
    print(f"chain built in {time.monotonic() - t:.0f} s: {len(raw_blocks)} blocks, the last {BLOCKS} "
          f"of {TXS + 1} transactions", flush=True)
    core = BitcoinD(tmp / "core").start()
    builtin = QuillDaemon(tmp / "quill").start()
    follow = None
    try:
        for raw in raw_blocks:
            assert core.rpc("submitblock", raw.hex()) is None
            assert builtin.rpc("submitblock", raw.hex()) is None
        follow = follower(core, tmp / "follow").start()
        best = core.rpc("getbestblockhash")
        wait_for(lambda: follow.rpc("getbestblockhash") == best, timeout=600, what="the follower")
        hashes = [core.rpc("getblockhash", h) for h in range(len(raw_blocks) - BLOCKS + 1, len(raw_blocks) + 1)]
        clients = [Client("Core", core.rpc_port, RPC_USER, RPC_PASSWORD),
                   Client("Quill built-in", builtin.port, builtin.user, builtin.password),
                   Client("Quill following", follow.port, follow.user, follow.password)]
        rows = []
        for verbosity in (1, 2):
            firsts: dict[str, list[float]] = {c.name: [] for c in clients}
            times: dict[str, list[float]] = {c.name: [] for c in clients}
            for r in range(rounds + 1):
                for h in hashes:
                    answers = []
                    for c in clients if r % 2 == 0 else reversed(clients):
                        reply, took = c.ask("getblock", h, verbosity)
                        (firsts if r == 0 else times)[c.name].append(took)
                        answers.append(reply)
                    assert all(a == answers[0] for a in answers), f"getblock {h} {verbosity}: answers differ"
            core_median = statistics.median(times["Core"])
            core_first = statistics.median(firsts["Core"])
            for c in clients:
                median = statistics.median(times[c.name])
                first = statistics.median(firsts[c.name])
                rows.append((f"getblock {verbosity}", c.name, first * 1e3, first / core_first,
                             median * 1e3, median / core_median))
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
              f"{rounds} rounds x {BLOCKS} blocks of {TXS + 1} transactions")
        print(f"{'call':<11} {'server':<16} {'first ms':>9} {'/Core':>6} {'median ms':>10} {'/Core':>6}")
        for call, name, first, first_ratio, median, ratio in rows:
            print(f"{call:<11} {name:<16} {first:>9.1f} {first_ratio:>6.2f} {median:>10.1f} {ratio:>6.2f}")
    finally:
        if follow is not None:
            follow.stop()
        builtin.stop()
        core.stop()


if __name__ == "__main__":
    main()
