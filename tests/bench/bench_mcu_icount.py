"""Instruction counts of the firmware's hot paths on the Cortex-M0+ and Cortex-M4
targets (QEMU -icount shift=0), and milliseconds on an RP2040 at 125 MHz and an
STM32F405 at 168 MHz (each board's clock_hz in board.json; CPI assumptions and ECDSA's
grinding rate in quill.emulator.mcu_bench).

    .venv/bin/python -m tests.bench.bench_mcu_icount [--update-baseline | --update-native-baseline]

The native module's ECDSA signature at 2 nonces is also given in Cortex-M0+ cycles:
one such signature traced on qemu-m0plus and each executed instruction weighed with
the core's documented cycles for its class (tests/bench/m0plus_cycles.py, with the
table and its sources), beside the flat-CPI figure.

--update-baseline rewrites mcu_icount_baseline.json (the Cortex-M0+ counts that
tests/mcu/test_icount_regression.py holds the firmware to, within 10 %: the pure
arithmetic's, and the signing cases with the Pico's native module, native_counts);
--update-native-baseline only native_counts (a branch that changes only the module).
"""
import json
import sys
from pathlib import Path

from quill.emulator import mcu_bench, qemu
from tests.bench import m0plus_cycles

BASELINE = Path(__file__).resolve().parent / "mcu_icount_baseline.json"


def print_cycles(icount_two_nonces):
    """One native ECDSA signature at 2 nonces in Cortex-M0+ cycles (class-weighted) and
    its milliseconds at the Pico's clock, beside the flat-CPI figure."""
    hist = m0plus_cycles.native_signature(mcu_bench.pairs_taking(2, 1))
    target, hz = "qemu-m0plus", mcu_bench.clock_hz("qemu-m0plus")
    instr, cycles = hist.total(), hist.total("cycles")
    print(f"\nnative ECDSA at 2 nonces, one signature traced on {target}: {instr:,} instructions, "
          f"{cycles:,} Cortex-M0+ cycles (CPI {cycles / instr:.3f}, zero wait states)")
    for region in ("module", "firmware"):
        i, c = hist.total(region=region), hist.total("cycles", region)
        print(f"  {region:8} {i:>10,} instr {c:>11,} cycles (CPI {c / i:.3f})")
    for name, (i, c) in hist.classes().items():
        print(f"  {name:16} {i:>10,} instr {c:>11,} cycles")
    print(f"RP2040 at {hz / 1e6:g} MHz: {1000 * cycles / hz:.2f} ms class-weighted; "
          f"{mcu_bench.milliseconds(target, icount_two_nonces):.2f} ms at the flat CPI "
          f"{mcu_bench.CHIPS[target][1]} ({icount_two_nonces:,} instructions, -icount mean of 4 signatures); "
          f"the mean at the traced CPI: {1000 * icount_two_nonces * cycles / instr / hz:.2f} ms")


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
    print_cycles(native["ecdsa_sign_2_nonces"])
    native_base = json.loads(BASELINE.read_text()).get("native_counts", {})
    print("\nCortex-M0+ against the committed baseline:")
    for name, count in results["qemu-m0plus"].items():
        print(f"  {name:22} " + (f"{count / base[name] - 1:+.1%}" if name in base else "new"))
    for name, count in native.items():
        print(f"  native {name:15} "
              + (f"{count / native_base[name] - 1:+.1%}" if name in native_base else "new"))
    if "--update-baseline" in argv or "--update-native-baseline" in argv:
        data = json.loads(BASELINE.read_text())
        if "--update-baseline" in argv:
            data["counts"] = results["qemu-m0plus"]
        data["native_counts"] = native
        BASELINE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print(f"wrote {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
