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
~/.cache/quill/bench/ between runs. Times are the median of at least 5 calls over HTTP JSON-RPC
(one kept-alive connection per wallet, JSON decoding included), more for quick calls (rounds go on
until each side has spent a second, up to 51), Core's and Quill's calls alternating round by round
so that both see the same load; the load average is printed with them, and the median CPU time each
server process used per call (what the call costs it, whatever else runs on the machine), read in
nanoseconds from the scheduler's account of each of its threads.

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
MIN_CALLS, MAX_CALLS = 5, 51   # per side: more calls for quick ones, until each side has spent
MIN_SECONDS = 1.0              # MIN_SECONDS waiting (a 1 ms call is noise-prone at 5 calls)
FUND_MAX = 10_000     # walletcreatefundedpsbt at these sizes and below
FUND_ARGS = ([], [{ANYONE_ADDRESS: "0.01"}], 0, {"fee_rate": 5, "changeAddress": ANYONE_ADDRESS})


def cpu_seconds(pid: int) -> float:
    """CPU time a process's threads have run, in seconds at nanosecond resolution: the sum of each
    thread's /proc/<pid>/task/<tid>/schedstat (the scheduler's run time; /proc/<pid>/stat counts
    clock ticks of 10 ms, coarser than one call of a millisecond)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass   # a thread that ended between the listing and the read
    return total / 1e9


def side_by_side(core_call: Any, quill_call: Any,
                 pids: tuple[int, int]) -> tuple[float, float, float, float, int]:
    """Each call's median ms (Core's, Quill's), then the median CPU ms per call each server
    process used (Core's, Quill's), and the number of calls per side; Core's and Quill's calls
    alternate round by round. On a machine shared with other work the median is what a client
    waits, the CPU time each side's own cost. At least MIN_CALLS rounds, and more (up to
    MAX_CALLS) until each side has waited MIN_SECONDS in all: the same rule for every call, so
    quick calls get the rounds that make their medians steady."""
    times: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    while len(times[0]) < MIN_CALLS or (len(times[0]) < MAX_CALLS and min(map(sum, times)) < MIN_SECONDS * 1000):
        for side, call in enumerate((core_call, quill_call)):
            before = cpu_seconds(pids[side])
            start = time.perf_counter()
            call()
            times[side].append((time.perf_counter() - start) * 1000)
            cpu[side].append((cpu_seconds(pids[side]) - before) * 1000)
    return (statistics.median(times[0]), statistics.median(times[1]),
            statistics.median(cpu[0]), statistics.median(cpu[1]), len(times[0]))


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
    rows: list[tuple[str, str, float, float, float, float, int]] = []
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
          f"{'Core CPU ms':>13}{'Quill CPU ms':>13}{'CPU ratio':>11}{'calls':>7}")
    for name, size, c, q, c_cpu, q_cpu, calls in rows:
        ratio = f"{q_cpu / c_cpu:>11.2f}" if c_cpu else f"{'-':>11}"
        print(f"{name:<26}{size:>16}{c:>12.1f}{q:>12.1f}{q / c:>12.2f}{c_cpu:>13.2f}{q_cpu:>13.2f}{ratio}{calls:>7}")
    print("load average (1 min) during the run: " + ", ".join(f"{load[0]:.2f}" for load in loads))


if __name__ == "__main__":
    main(sys.argv[1:])
