"""The emulated device's heap with the key and PSBT methods registered (quill-emu
--test-mnemonic), at the smallest board's 97K: the default ROMFS image (the firmware's
.mpy files in place; every loaded module's names and function objects on the heap,
as where a board loads .mpy files into RAM) beside the firmware frozen into the port
(quill-emu --frozen: as the pyboard, the smallest board, runs it from flash). After
each step: the free heap after a collection and the largest block that can still be
allocated (debug_heap), or the step's error.

    .venv/bin/python -m tests.bench.bench_keys_heap [--heap 97K] [--inputs 500]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quill.device.client import DeviceClient
from quill.emulator import frozen, qemu
from quill.emulator.launcher import Emulator, confirmation_options
from quill.emulator.main import write_test_seed
from quill.signing.psbt_own_keys import sign_psbt_with_device
from tests.keys.emulated import TEST_MNEMONIC
from tests.keys.p2wpkh_psbt import FINGERPRINT, p2wpkh_psbt


def steps(client: DeviceClient, inputs: int) -> list[tuple[str, Callable[[], Any]]]:
    def sign(n: int, version: int = 0) -> Callable[[], Any]:
        psbt = p2wpkh_psbt(n, version)      # built here: the step times the device's work
        return lambda: sign_psbt_with_device(client, client.get_info(), psbt, FINGERPRINT, "regtest")
    return [
        ("boot (key methods registered)", lambda: None),
        ("get_xpub m/84h/1h/0h", lambda: client.call("get_xpub", {"path": "m/84h/1h/0h", "network": "test"})),
        ("1-input P2WPKH PSBT", sign(1)),
        (f"{inputs}-input P2WPKH PSBT", sign(inputs)),
        (f"{inputs}-input P2WPKH PSBT, v2", sign(inputs, 2)),
        ("display_address m/84h/1h/0h/0/0", lambda: client.call(
            "display_address", {"path": "m/84h/1h/0h/0/0", "script_type": "p2wpkh", "network": "regtest"})),
    ]


def run(heap: str, frozen_port: bool, inputs: int) -> list[tuple[str, int, int, str, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as datadir:
        write_test_seed(datadir, TEST_MNEMONIC)
        options = [*confirmation_options("auto", Path(datadir)), "--keys"]
        with Emulator(heapsize=heap, confirmation=options, crypto="python", frozen=frozen_port) as emu, \
                DeviceClient(emu.port, short_timeout=60) as client:
            for name, action in steps(client, inputs):
                started = time.monotonic()
                try:
                    action()
                    outcome = "ok"
                except Exception as e:  # noqa: BLE001 (a row of the table, not a crash)
                    outcome = f"{type(e).__name__}: {e}"
                seconds = time.monotonic() - started
                free, largest = client.call("debug_heap")
                rows.append((name, free, largest, outcome, seconds))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heap", default="97K")
    parser.add_argument("--inputs", type=int, default=500)
    args = parser.parse_args(argv)
    ok = True
    for firmware, frozen_port in (("ROMFS image (.mpy)", False), ("frozen (quill-emu --frozen)", True)):
        try:
            rows = run(args.heap, frozen_port, args.inputs)
        except qemu.Unavailable as e:
            print(f"{firmware}: skipped ({e})")
            ok = False
            continue
        print(f"\nKey and PSBT methods at {args.heap}, firmware {firmware} "
              f"(free and largest block after a collection, bytes)")
        print("| after | free | largest | s | outcome |")
        print("|---|---:|---:|---:|---|")
        for name, free, largest, outcome, seconds in rows:
            print(f"| {name} | {free} | {largest} | {seconds:.1f} | {outcome} |")
        ok = ok and (not frozen_port or all(r[3] == "ok" for r in rows))
    print(f"\n(frozen build cached in {frozen.cache_dir()})")
    return 0 if ok else 1


if __name__ == "__main__":
    import sys
    sys.exit(main())
