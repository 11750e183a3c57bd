"""PSBT and wallet-coin benchmark, Quill beside the real Bitcoin Core in the same run:

* decodepsbt of a 500-input PSBT (witness UTXO and a BIP32 derivation on every input);
* listunspent and getbalance of a watch-only wallet holding 1k and 10k UTXOs (100k with
  QUILL_BENCH_BIG=1), Core's watch-only wallet and Quill's (following Core) holding the same
  descriptor;
* walletcreatefundedpsbt with automatic coin selection from those wallets (0.01 BTC from
  0.0001 BTC coins at 5 sat/vB: about a hundred inputs, every algorithm runs).

Times are the best of 3 calls over HTTP JSON-RPC, client included.

    .venv/bin/python -m tests.bench.bench_psbt_coins
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from coincurve import PrivateKey

from quill.tx.psbt import PSBT, KeyOrigin, PSBTInput, PSBTOutput, encode_base64_psbt
from quill.tx.transaction import TxOut
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

OUTPUTS_PER_TX = 2000


def best(call: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


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


def wait_synced(core: BitcoinD, quill: QuillDaemon, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while quill.rpc("getbestblockhash") != core.rpc("getbestblockhash"):
        if time.monotonic() > deadline:
            raise TimeoutError("the follower did not catch up")
        time.sleep(0.2)


def fund(core: BitcoinD, desc: str, start: int, count: int) -> None:
    addresses = core.rpc("deriveaddresses", desc, [start, start + count - 1])
    for i in range(0, count, OUTPUTS_PER_TX):
        chunk = {a: "0.0001" for a in addresses[i:i + OUTPUTS_PER_TX]}
        core.rpc("sendmany", "", chunk, wallet="miner")
        core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))


def main() -> None:
    sizes = [1_000, 10_000] + ([100_000] if os.environ.get("QUILL_BENCH_BIG") else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="quill-bench-psbt-") as tmp, \
            BitcoinD(Path(tmp) / "core") as core:
        quill = QuillDaemon(Path(tmp) / "quill", f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
        try:
            psbt = big_psbt(500)
            q_decode = best(lambda: quill.rpc("decodepsbt", psbt))
            c_decode = best(lambda: core.rpc("decodepsbt", psbt))
            rows.append(("decodepsbt, 500 inputs", "-", c_decode, q_decode))

            core.rpc("createwallet", "miner")
            core.rpc("generatetoaddress", 200 + sum(sizes) // OUTPUTS_PER_TX,
                     core.rpc("getnewaddress", wallet="miner"))
            desc = [d["desc"] for d in core.rpc("listdescriptors", wallet="miner")["descriptors"]
                    if d["desc"].startswith("tr(") and not d.get("internal")][0]  # the miner never receives there
            total = sum(sizes)
            change = core.rpc("getnewaddress", wallet="miner")  # the funding calls' recipient and change
            fund_args = ([], [{change: "0.01"}], 0, {"fee_rate": 5, "changeAddress": change})
            wait_synced(core, quill)
            for node in (core, quill):
                node.rpc("createwallet", "wo", True, True)
                request = [{"desc": desc, "timestamp": "now", "range": [0, total + 10]}]
                if node is core:
                    core.rpc("importdescriptors", request, wallet="wo")
                else:
                    quill.rpc("importdescriptors", request, path="/wallet/wo")
            funded = 0
            for size in sizes:
                fund(core, desc, funded, size - funded)
                funded = size
                wait_synced(core, quill)
                deadline = time.monotonic() + 1800
                want = core.rpc("getbalance", wallet="wo")
                while quill.rpc("getbalance", path="/wallet/wo") != want:
                    if time.monotonic() > deadline:
                        raise TimeoutError("Quill's wallet did not see every output")
                    time.sleep(0.5)
                count = len(core.rpc("listunspent", wallet="wo"))
                assert count == len(quill.rpc("listunspent", path="/wallet/wo"))
                for method in ("listunspent", "getbalance"):
                    c = best(lambda m=method: core.rpc(m, wallet="wo"))
                    q = best(lambda m=method: quill.rpc(m, path="/wallet/wo"))
                    rows.append((f"{method}", f"{count:,} UTXOs", c, q))
                if count <= 10_000:
                    c = best(lambda: core.rpc("walletcreatefundedpsbt", *fund_args, wallet="wo"))
                    q = best(lambda: quill.rpc("walletcreatefundedpsbt", *fund_args, path="/wallet/wo"))
                    rows.append(("walletcreatefundedpsbt", f"{count:,} UTXOs", c, q))
        finally:
            quill.stop()
    print(f"{'call':<26}{'wallet':>14}{'Core ms':>12}{'Quill ms':>12}{'Quill/Core':>12}")
    for name, size, c, q in rows:
        print(f"{name:<26}{size:>14}{c * 1000:>12.1f}{q * 1000:>12.1f}{q / c:>12.1f}")


if __name__ == "__main__":
    main()
