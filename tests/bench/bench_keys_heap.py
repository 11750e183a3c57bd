"""The emulated device's heap with the key and PSBT methods registered (quill-emu
--test-mnemonic), at the smallest board's 97K: the default ROMFS image (the firmware's
.mpy files in place; every loaded module's names and function objects on the heap,
as where a board loads .mpy files into RAM) beside the firmware frozen into the port
(quill-emu --frozen: as the pyboard, the smallest board, runs it from flash). After
each step: the free heap after a collection and the largest block that can still be
allocated (debug_heap), or the step's error. With --qemu-m4, the same steps on the
Cortex-M4 target too (the pyboard's heap, 32-bit, firmware frozen; its seed in RAM, restored
over the link first; minutes: pure-Python SHA-512 for BIP39, ~0.6 s per input).

    .venv/bin/python -m tests.bench.bench_keys_heap [--heap 97K] [--inputs 500] [--qemu-m4]
"""
from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quill.device.client import DeviceClient
from quill.emulator import frozen, qemu
from quill.emulator.launcher import Emulator, confirmation_options
from quill.emulator.main import write_test_seed
from quill.signing.psbt_own_keys import sign_psbt_with_device
from tests.bench.bench_emulator_heap import heap_rows
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


def run(heap: str | None, firmware: str, inputs: int) -> list[tuple[str, int, int, str, float]]:
    """firmware: "romfs" or "frozen" (the unix port at heap), or "qemu-m4" (its board's heap)."""
    target = "qemu-m4" if firmware == "qemu-m4" else "unix"
    with tempfile.TemporaryDirectory() as datadir:
        if target == "unix":
            write_test_seed(datadir, TEST_MNEMONIC)
        options = [*confirmation_options("auto", Path(datadir)), "--keys"]
        with Emulator(heapsize=heap, confirmation=options, crypto="python",
                      firmware=firmware if target == "unix" else "board",
                      target=target) as emu, DeviceClient(emu.port, short_timeout=120) as client:
            if target != "unix":        # no filesystem to provision: the seed is restored over the link
                client.call("seed_restore", {"mnemonic": TEST_MNEMONIC, "pin": "1234"}, timeout=900)
            return heap_rows(client, steps(client, inputs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heap", default="97K")
    parser.add_argument("--inputs", type=int, default=500)
    parser.add_argument("--qemu-m4", action="store_true", help="also on the Cortex-M4 target")
    args = parser.parse_args(argv)
    ok = True
    runs = [("romfs", "unix port, ROMFS image (.mpy)"), ("frozen", "unix port, frozen (quill-emu --frozen)")]
    if args.qemu_m4:
        runs.append(("qemu-m4", "qemu-m4, frozen"))
    for firmware, title in runs:
        heap = None if firmware == "qemu-m4" else args.heap
        try:
            rows = run(heap, firmware, args.inputs)
        except qemu.Unavailable as e:
            print(f"{title}: skipped ({e})")
            ok = False
            continue
        print(f"\nKey and PSBT methods, {title}, heap {heap or 'of its board'} "
              f"(free and largest block after a collection, bytes)")
        print("| after | free | largest | s | outcome |")
        print("|---|---:|---:|---:|---|")
        for name, free, largest, outcome, seconds in rows:
            print(f"| {name} | {free} | {largest} | {seconds:.1f} | {outcome} |")
        ok = ok and (firmware == "romfs" or all(r[3] == "ok" for r in rows))
    print(f"\n(frozen build cached in {frozen.cache_dir()})")
    return 0 if ok else 1


if __name__ == "__main__":
    import sys
    sys.exit(main())
