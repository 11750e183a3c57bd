"""listsinceblock("") and listtransactions beside the real Bitcoin Core, in the same run, for watch-only
wallets of 1k, 10k and 100k transactions holding the same descriptor in Core and in Quill.

    .venv/bin/python -m tests.bench.bench_wallet_core [sizes...]      (default 1000 10000 100000)

Core mines coinbases to an anyone-can-spend P2WSH(OP_TRUE) output; those are fanned out into
1,000-output transactions and each output pays one of 1,000 addresses of a wallet's wpkh descriptor,
one transaction per payment, in blocks made here and handed to Core's submitblock. Core then holds
the wallets (importdescriptors, timestamp 0) and quilld
follows it (-chainsource) and imports the same descriptors. Times are the best of three calls over
HTTP (one kept-alive connection each), JSON decoding included, Core's and Quill's calls alternating
round by round, with the CPU time each server process used per listsinceblock call (its own cost on a
shared machine); the first Quill call after its rescan is shown too (transactions not yet decoded),
and the load average with the table.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from quill.chain.upstream import UpstreamRPC
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.follow.corekit import wait_for
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.utxo_chain import submit_block, wpkh_descriptor

FAN = 1000
FEE = 2000
FANS_PER_BLOCK = 20             # 20 x 43 kB: under the 1 MB base size
PAYMENTS_PER_BLOCK = 5000       # 5,000 x ~420 weight units


def fan_out(coinbase_txid: bytes, value: int) -> Transaction:
    each = (value - 100_000) // FAN
    tx = Transaction(2, [TxIn(OutPoint(coinbase_txid, 0), b"", 0xFFFFFFFE)], [TxOut(each, ANYONE_SCRIPT)] * FAN, 0)
    tx.vin[0].witness = list(ANYONE_WITNESS)
    return tx


def payment(prev: Transaction, n: int, script: bytes) -> Transaction:
    tx = Transaction(2, [TxIn(OutPoint(prev.txid(), n), b"", 0xFFFFFFFE)],
                     [TxOut(prev.vout[n].value - FEE, script)], 0)
    tx.vin[0].witness = list(ANYONE_WITNESS)
    return tx


def build(core: BitcoinD, sizes: list[int]) -> dict[int, str]:
    node = UpstreamRPC(core.url_for_follower, timeout=600)
    needed = sum((n + FAN - 1) // FAN for n in sizes)
    hashes = node.call("generatetoaddress", needed, ANYONE_ADDRESS)
    node.call("generatetoaddress", 101, ANYONE_ADDRESS)
    coinbases = []
    for h in hashes:
        cb = node.call("getblock", h, 2)["tx"][0]
        coinbases.append((bytes.fromhex(cb["txid"])[::-1], round(float(cb["vout"][0]["value"]) * 1e8)))
    fans = [fan_out(*c) for c in coinbases]
    for i in range(0, len(fans), FANS_PER_BLOCK):
        submit_block(node, fans[i:i + FANS_PER_BLOCK])
    descs = {}
    k = 0
    for n in sizes:
        desc = wpkh_descriptor(f"bench-{n}".encode())
        descs[n] = desc
        scripts = [bytes.fromhex(a) for a in _scripts(node, desc)]
        payments: list[Transaction] = []
        for start in range(0, n, FAN):
            fan = fans[k]
            k += 1
            payments += [payment(fan, i, scripts[(start + i) % len(scripts)]) for i in range(min(FAN, n - start))]
        for i in range(0, len(payments), PAYMENTS_PER_BLOCK):
            submit_block(node, payments[i:i + PAYMENTS_PER_BLOCK])
    return descs


def _scripts(node: UpstreamRPC, desc: str) -> list[str]:
    addresses = node.call("deriveaddresses", desc, [0, 999])
    return [a["scriptPubKey"] for a in node.batch([("validateaddress", a) for a in addresses])]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def best_of(core_call, quill_call, pids, repeat: int = 3) -> tuple[float, float, float, float]:
    """The best time of each call (Core's, Quill's), Core's and Quill's alternating round by round
    (the same load for both), then the CPU seconds per call each server process used (Core's,
    Quill's): on a shared machine, each side's own cost."""
    best = [float("inf"), float("inf")]
    cpu = [0.0, 0.0]
    for _ in range(repeat):
        for i, fn in enumerate((core_call, quill_call)):
            before = cpu_seconds(pids[i])
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
            cpu[i] += cpu_seconds(pids[i]) - before
    return best[0], best[1], cpu[0] / repeat, cpu[1] / repeat


def watched_wallets(core: BitcoinD, sizes: list[int]) -> dict[int, str]:
    """The chain of `build` on Core, and one watch-only wallet w<size> per size holding its
    descriptor; the descriptors by size."""
    t = time.monotonic()
    descs = build(core, sizes)
    print(f"chain built in {time.monotonic() - t:.0f} s ({core.rpc('getblockcount')} blocks)", flush=True)
    for n, desc in descs.items():
        core.rpc("createwallet", f"w{n}", True, True)
        core.rpc("importdescriptors", [{"desc": desc, "timestamp": 0, "range": [0, 999]}], wallet=f"w{n}",
                 timeout=3600)
    return descs

def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    tmp = Path(tempfile.mkdtemp(prefix="bench_wallet_core"))
    # -unsafesqlitesync: Core's import writes each of the wallet's transactions with a disk sync, which
    # made the setup take most of the run; the listings measured read only.
    core = BitcoinD(tmp / "core", "-blockfilterindex=1", "-maxmempool=1000", "-unsafesqlitesync=1").start()
    try:
        descs = watched_wallets(core, sizes)
        q = QuillDaemon(tmp / "quill", f"-chainsource={core.url_for_follower}", "-rpcthreads=4",
                        "-rpcuser=bench", "-rpcpassword=bench").start()
        try:
            best = core.rpc("getbestblockhash")
            wait_for(lambda: q.rpc("getbestblockhash") == best, timeout=600)
            rows = []
            loads = [os.getloadavg()]
            assert core.proc is not None and q.proc is not None
            pids = (core.proc.pid, q.proc.pid)
            for n, desc in descs.items():
                qw = UpstreamRPC(f"http://bench:bench@127.0.0.1:{q.port}/wallet/w{n}", timeout=3600)
                cw = UpstreamRPC(f"{core.url_for_follower}/wallet/w{n}", timeout=3600)
                q.rpc("createwallet", f"w{n}", True, True)
                t = time.monotonic()
                qw.call("importdescriptors", [{"desc": desc, "timestamp": 0, "range": [0, 999]}])
                rescan = time.monotonic() - t
                t = time.perf_counter()
                got = qw.call("listsinceblock", "")
                first = time.perf_counter() - t
                theirs = cw.call("listsinceblock", "")
                assert len(got["transactions"]) == len(theirs["transactions"]) == n, (len(got["transactions"]), n)
                loads.append(os.getloadavg())
                t_core, t_quill, cpu_core, cpu_quill = best_of(lambda cw=cw: cw.call("listsinceblock", ""),
                                                               lambda qw=qw: qw.call("listsinceblock", ""), pids)
                lt_core, lt_quill, _, _ = best_of(lambda cw=cw, n=n: cw.call("listtransactions", "*", n),
                                                  lambda qw=qw, n=n: qw.call("listtransactions", "*", n), pids)
                loads.append(os.getloadavg())
                rows.append((n, t_core, t_quill, t_quill / t_core, cpu_core, cpu_quill, cpu_quill / cpu_core, first,
                             lt_core, lt_quill, lt_quill / lt_core, rescan))
            heads = ("wallet txs", 'Core lsb("") s', 'Quill lsb("") s', 'lsb("") Quill/Core', "Core CPU s",
                     "Quill CPU s", "CPU Quill/Core", "Quill 1st call s", "Core listtx s", "Quill listtx s",
                     "listtx Quill/Core", "Quill rescan s")
            print(" | ".join(f"{h:>10}" for h in heads))
            for r in rows:
                print(" | ".join([f"{r[0]:>{len(heads[0])}}"] + [f"{v:>{len(h)}.3f}" for h, v in zip(heads[1:], r[1:],
                                                                                                strict=True)]))
            print("load average (1 min) during the run: " + ", ".join(f"{load[0]:.2f}" for load in loads))
        finally:
            q.stop()
    finally:
        core.stop()


if __name__ == "__main__":
    main()
