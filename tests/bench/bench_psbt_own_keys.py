"""PSBT signing with the device's own keys (protocol/SPEC.md §11), the way
`quill-signer signtx` does it: pyserial -> quill-emu (real MicroPython) started
with the BIP39 test mnemonic and the firmware frozen as the smallest board runs
it (tests/keys/emulated.py), for P2WPKH PSBTs of several sizes whose inputs
pay m/84h/1h/0h/0/i, each with its previous transaction (tests/keys/p2wpkh_psbt.py). Prints total and
per-input time and the bytes sent to the device per input, for each heap;
bench_signing_e2e prints signrawtransactionwithkey's figures beside which to
read them (the same streamed session underneath, plus the previous
transactions and a key derivation per input).

    .venv/bin/python -m tests.bench.bench_psbt_own_keys [--heap 97K] [--heap 120K] [--quick]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.signing.psbt_own_keys import sign_psbt_with_device
from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, EmulatedDevice
from tests.keys.p2wpkh_psbt import FINGERPRINT, p2wpkh_psbt

SIZES = (1, 10, 100, 500)
QUICK = (1, 10)


def run(heap: str, sizes: tuple[int, ...], work: Path) -> list[tuple[str, int, str, str, str]]:
    rows = []
    with EmulatedDevice(work / heap, f"--test-mnemonic={TEST_MNEMONIC}", f"--heapsize={heap}",
                        board=SMALLEST_BOARD) as device:
        for n in sizes:
            psbt = p2wpkh_psbt(n)
            stats: dict[str, int] = {}
            with DeviceClient(device.port) as client:
                try:
                    info = client.get_info()
                    started = time.perf_counter()
                    signed = sign_psbt_with_device(client, info, psbt, FINGERPRINT, "regtest", stats)
                except DeviceError as e:
                    rows.append((heap, n, f"failed: {e.message}", "", ""))
                    continue
                seconds = time.perf_counter() - started
            assert signed == n
            rows.append((heap, n, f"{seconds:.2f}", f"{seconds * 1000 / n:.1f}",
                         f"{stats['bytes_sent'] / n:.0f}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--heap", action="append")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    heaps = args.heap or ["97K"]
    sizes = QUICK if args.quick else SIZES
    print("| heap | P2WPKH inputs | seconds | ms per input | bytes to the device per input |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for heap in heaps:
            for row in run(heap, sizes, Path(tmp)):
                print("| " + " | ".join(str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main()
