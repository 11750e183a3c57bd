"""PSBT and wallet-coin benchmark, Quill beside the real Bitcoin Core in the same run:

* decodepsbt and analyzepsbt of 100- and 500-input PSBTs (witness UTXO and a BIP32 derivation on
  every input);
* listunspent, getbalance and getbalances of watch-only wallets holding 1k, 10k and 100k UTXOs;
* walletcreatefundedpsbt with automatic coin selection from the 1k and 10k wallets (0.01 BTC
  from 1,000-20,000 sat coins at 5 sat/vB: tens of inputs, every algorithm runs).

The UTXO sets are built on the real Core (tests.kit.utxo_chain: 2,000-output transactions in
blocks given to submitblock); Core's watch-only wallets and Quill's (quilld following Core with
-chainsource) hold the same descriptors, and each call's answer is checked to be the same size on
both before it is timed. Core's data directory (chain and wallets) is cached in
~/.cache/quill/bench/ between runs. Times are the median of 5 calls over HTTP JSON-RPC (one
kept-alive connection per wallet, JSON decoding included), Core's and Quill's calls alternating
round by round so that both see the same load; the load average is printed with them, and the CPU
time each server process used per call (what the call costs it, whatever else runs on the machine).

    .venv/bin/python -m tests.bench.bench_psbt_coins [sizes...]     (default 1000 10000 100000)
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from coincurve import PrivateKey

from quill.chain.upstream import UpstreamRPC
from quill.tx.psbt import PSBT, KeyOrigin, PSBTInput, PSBTOutput, encode_base64_psbt
from quill.tx.transaction import TxOut
from tests.kit import utxo_chain
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quill" / "bench"
REPEAT = 5
FUND_MAX = 10_000     # walletcreatefundedpsbt at these sizes and below
FUND_ARGS = ([], [{ANYONE_ADDRESS: "0.01"}], 0, {"fee_rate": 5, "changeAddress": ANYONE_ADDRESS})


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def side_by_side(core_call: Any, quill_call: Any, pids: tuple[int, int]) -> tuple[float, float, float, float]:
    """Each call's median ms (Core's, Quill's), then the CPU ms per call each server process used
    over its rounds (Core's, Quill's); Core's and Quill's calls alternate round by round. On a
    machine shared with other work the median is what a client waits, the CPU time each side's
    own cost (clock-tick resolution: 10 ms over REPEAT calls)."""
    times: tuple[list[float], list[float]] = ([], [])
    cpu = [0.0, 0.0]
    for _ in range(REPEAT):
        for side, call in enumerate((core_call, quill_call)):
            before = cpu_seconds(pids[side])
            start = time.perf_counter()
            call()
            times[side].append((time.perf_counter() - start) * 1000)
            cpu[side] += cpu_seconds(pids[side]) - before
    return (statistics.median(times[0]), statistics.median(times[1]),
            cpu[0] * 1000 / REPEAT, cpu[1] * 1000 / REPEAT)


def big_psbt(n_inputs: int) -> str:
    psbt = PSBT(version=None, tx_version=2, fallback_locktime=0)
    for i in range(n_inputs):
        pubkey = PrivateKey((i + 1).to_bytes(32, "big")).public_key.format()
        txin = PSBTInput(0, i.to_bytes(32, "little"), i % 3, 0xFFFFFFFD)
        txin.witness_utxo = TxOut(100_000 + i, b"\x00\x14" + bytes(20))
        txin.hd_keypaths[pubkey] = KeyOrigin(b"\x01\x02\x03\x04", (0x80000054, 0x80000001, 0x80000000, 0, i))
        psbt.inputs.append(txin)
    psbt.outputs.append(PSBTOutput(0, 50_000_000, b"\x00\x14" + b"\x01" * 20))
    return encode_base64_psbt(psbt)


def cached_core(sizes: list[int], workdir: Path) -> tuple[BitcoinD, dict[int, utxo_chain.UtxoWallet]]:
    """Core with the wallets of `sizes` built and imported: from the cache when it has them."""
    binary = BitcoinD(workdir / "probe").binary
    key = hashlib.sha256(json.dumps([sizes, utxo_chain.OUTPUTS_PER_TX, utxo_chain.MAX_ADDRESSES,
                                     str(binary), binary.stat().st_mtime_ns]).encode()).hexdigest()[:16]
    cached = CACHE / f"utxos-{key}"
    if not (cached / "wallets.json").exists():
        shutil.rmtree(cached, ignore_errors=True)
        build = workdir / "build"
        with BitcoinD(build / "core") as core:
            started = time.monotonic()
            wallets = utxo_chain.build_utxo_wallets(core, sizes)
            for n, w in wallets.items():
                core.rpc("createwallet", f"w{n}", True, True)
                core.rpc("importdescriptors", w.import_request(), wallet=f"w{n}", timeout=3600)
            print(f"UTXO sets built and imported into Core in {time.monotonic() - started:.0f} s", flush=True)
        (build / "wallets.json").write_text(json.dumps({n: w.__dict__ for n, w in wallets.items()}))
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(build), str(cached))
    shutil.copytree(cached / "core", workdir / "core")
    wallets = {int(n): utxo_chain.UtxoWallet(**w) for n, w in json.loads((cached / "wallets.json").read_text()).items()}
    core = BitcoinD(workdir / "core").start()
    for n in wallets:
        core.rpc("loadwallet", f"w{n}")
    return core, wallets


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.2)


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [1_000, 10_000, 100_000]
    rows: list[tuple[str, str, float, float, float, float]] = []
    loads = [os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="quill-bench-psbt-") as tmp:
        core, wallets = cached_core(sizes, Path(tmp))
        try:
            quill = QuillDaemon(Path(tmp) / "quill", f"-chainsource={core.url_for_follower}",
                                "-chainpollinterval=100", "-rpcuser=bench", "-rpcpassword=bench").start()
            try:
                assert core.proc is not None and quill.proc is not None
                pids = (core.proc.pid, quill.proc.pid)
                for inputs in (100, 500):
                    psbt = big_psbt(inputs)
                    for method in ("decodepsbt", "analyzepsbt"):
                        assert core.rpc(method, psbt) == quill.rpc(method, psbt), method
                        loads.append(os.getloadavg())
                        rows.append((f"{method}, {inputs} inputs", "-",
                                     *side_by_side(lambda m=method, p=psbt: core.rpc(m, p),
                                                   lambda m=method, p=psbt: quill.rpc(m, p), pids)))
                best = core.rpc("getbestblockhash")
                wait_for(lambda: quill.rpc("getbestblockhash") == best, 600, "the follower did not catch up")
                for n, w in wallets.items():
                    name = f"w{n}"
                    cw = UpstreamRPC(f"{core.url_for_follower}/wallet/{name}", timeout=3600)
                    qw = UpstreamRPC(f"http://bench:bench@127.0.0.1:{quill.port}/wallet/{name}", timeout=3600)
                    quill.rpc("createwallet", name, True, True)
                    started = time.monotonic()
                    qw.call("importdescriptors", w.import_request())
                    print(f"Quill imported and rescanned {n:,} UTXOs in {time.monotonic() - started:.1f} s",
                          flush=True)
                    for method in ("listunspent", "getbalance", "getbalances"):
                        theirs, ours = cw.call(method), qw.call(method)
                        assert (len(ours) == len(theirs) == n) if method == "listunspent" else ours == theirs
                        loads.append(os.getloadavg())
                        rows.append((method, f"{n:,} UTXOs", *side_by_side(lambda m=method, cw=cw: cw.call(m),
                                                                           lambda m=method, qw=qw: qw.call(m), pids)))
                    if n <= FUND_MAX:
                        rows.append(("walletcreatefundedpsbt", f"{n:,} UTXOs",
                                     *side_by_side(lambda cw=cw: cw.call("walletcreatefundedpsbt", *FUND_ARGS),
                                                   lambda qw=qw: qw.call("walletcreatefundedpsbt", *FUND_ARGS), pids)))
                    loads.append(os.getloadavg())
            finally:
                quill.stop()
        finally:
            core.stop()
    print(f"{'call':<26}{'wallet':>16}{'Core ms':>12}{'Quill ms':>12}{'Quill/Core':>12}"
          f"{'Core CPU ms':>13}{'Quill CPU ms':>13}{'CPU ratio':>11}")
    for name, size, c, q, c_cpu, q_cpu in rows:
        ratio = f"{q_cpu / c_cpu:>11.2f}" if c_cpu else f"{'-':>11}"
        print(f"{name:<26}{size:>16}{c:>12.1f}{q:>12.1f}{q / c:>12.2f}{c_cpu:>13.1f}{q_cpu:>13.1f}{ratio}")
    print("load average (1 min) during the run: " + ", ".join(f"{load[0]:.2f}" for load in loads))


if __name__ == "__main__":
    main(sys.argv[1:])
