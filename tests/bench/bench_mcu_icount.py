"""Instruction counts of the firmware's hot paths on the Cortex-M0+ and Cortex-M4
targets (QEMU -icount shift=0), and milliseconds on an RP2040 at 125 MHz and an
STM32F405 at 168 MHz (each board's clock_hz in board.json; CPI assumptions and ECDSA's
grinding rate in quill.emulator.mcu_bench).

    .venv/bin/python tests/bench/bench_mcu_icount.py [--update-baseline]

--update-baseline rewrites mcu_icount_baseline.json (the Cortex-M0+ counts that
tests/mcu/test_icount_regression.py holds the firmware to, within 10 %: the pure
arithmetic's, and the signing cases with the Pico's native module, native_counts).
"""
import json
import sys
from pathlib import Path

from quill.emulator import mcu_bench, qemu

BASELINE = Path(__file__).resolve().parent / "mcu_icount_baseline.json"


def main(argv):
    try:
        results = {t: mcu_bench.counts(t) for t in ("qemu-m0plus", "qemu-m4")}
    except qemu.Unavailable as e:
        print(f"skipped: {e}")
        return 0
    print(mcu_bench.table(results))
    base = json.loads(BASELINE.read_text())["counts"]
    native = mcu_bench.native_counts("qemu-m0plus")
    print("\nCortex-M0+ with the native module (rpi_pico's):")
    for name, count in native.items():
        print(f"  {name:22} {count:>12,} {mcu_bench.milliseconds('qemu-m0plus', count):8.2f} ms")
    native_base = json.loads(BASELINE.read_text()).get("native_counts", {})
    print("\nCortex-M0+ against the committed baseline:")
    for name, count in results["qemu-m0plus"].items():
        print(f"  {name:22} " + (f"{count / base[name] - 1:+.1%}" if name in base else "new"))
    for name, count in native.items():
        print(f"  native {name:15} "
              + (f"{count / native_base[name] - 1:+.1%}" if name in native_base else "new"))
    if "--update-baseline" in argv:
        data = json.loads(BASELINE.read_text())
        data["counts"] = results["qemu-m0plus"]
        data["native_counts"] = native
        BASELINE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print(f"wrote {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
