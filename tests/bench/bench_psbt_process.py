"""walletprocesspsbt and descriptorprocesspsbt, Quill beside the real Bitcoin Core in the same run,
on the scenario of tests/psbt/test_process_vs_core.py (one coin of each kind: P2WPKH, P2TR,
P2SH-P2WPKH, P2PKH, 2-of-3 wsh(sortedmulti()), 2-of-2 sh(multi())):

* walletprocesspsbt of the 6-input PSBT, unsigned, and signed elsewhere (finalized);
* descriptorprocesspsbt with the 6 public descriptors at Core's default range (0 to 1000);
* descriptorprocesspsbt with the private descriptors (range 0 to 2): 9 signatures, made on the
  emulated device for Quill.

Times are the median of 5 calls (3 for descriptorprocesspsbt) over HTTP JSON-RPC, client included.

    .venv/bin/python -m tests.bench.bench_psbt_process
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.psbt import test_process_vs_core as scenario


def median_ms(repeat: int, call: Any, *params: Any) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call(*params)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, BitcoinD(Path(tmp) / "core", "-fallbackfee=0") as core:
        quill = QuillDaemon(Path(tmp) / "quill", f"-chainsource={core.url_for_follower}", "-chainpollinterval=100",
                            "-device=emulator", "-emuboard=rpi_pico").start()
        try:
            s = scenario._build(core, quill)
            kinds = scenario.ALL_KINDS
            psbt = scenario._psbt(s, kinds)
            signed = scenario._core_signed(s, psbt, kinds)
            public = [s["public"][k] for k in kinds]
            private = scenario._ranged([s["private"][k] for k in kinds])
            table = []
            for label, text in (("unsigned", psbt), ("signed elsewhere: finalized", signed)):
                table.append((f"walletprocesspsbt, {len(kinds)} inputs, {label}",
                              median_ms(5, s["c"].rpc, "walletprocesspsbt", text),
                              median_ms(5, s["q"].rpc, "walletprocesspsbt", text)))
            for label, descriptors in (("6 public descriptors, range 0-1000", public),
                                       ("6 private descriptors, range 0-2, 9 signatures", private)):
                table.append((f"descriptorprocesspsbt, {label}",
                              median_ms(3, core.rpc, "descriptorprocesspsbt", psbt, descriptors),
                              median_ms(3, quill.rpc, "descriptorprocesspsbt", psbt, descriptors)))
        finally:
            quill.stop()
    print("| call | Core ms | Quill ms |\n|---|---|---|")
    for label, theirs, ours in table:
        print(f"| {label} | {theirs:.1f} | {ours:.1f} |")


if __name__ == "__main__":
    main()
