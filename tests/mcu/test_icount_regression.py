"""The firmware's instruction counts on the Cortex-M0+ target stay within 10 % of the
committed baseline (tests/bench/mcu_icount_baseline.json). QEMU's -icount makes the
counts independent of the machine's load, so this can fail a build without flaking.
Faster is welcome: update the baseline with
`python -m tests.bench.bench_mcu_icount --update-baseline`."""
import json
from pathlib import Path

from quill.emulator import mcu_bench, natmod
from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.toolchains import unavailable

BASELINE = Path(__file__).resolve().parents[1] / "bench" / "mcu_icount_baseline.json"
ALLOWED = 1.10


def test_no_hot_path_regresses_more_than_ten_percent():
    qemu_target(MCU_TARGET)
    base = json.loads(BASELINE.read_text())
    assert base["target"] == MCU_TARGET
    counts = mcu_bench.counts(MCU_TARGET)
    assert set(counts) == set(base["counts"]) == set(mcu_bench.CASES)
    slower = {name: f"{counts[name]:,} vs {base['counts'][name]:,}"
              for name in counts if counts[name] > base["counts"][name] * ALLOWED}
    assert not slower, f"more than 10 % more instructions than the baseline: {slower}"
    assert all(count > 0 for count in counts.values())


def test_the_native_module_signs_within_ten_percent_of_its_baseline():
    """The signing cases with the Pico's native module (the ARMv6-M field code and tables
    of boards/rpi_pico), against native_counts: ~10 s."""
    qemu_target(MCU_TARGET)
    base = json.loads(BASELINE.read_text())["native_counts"]
    try:
        counts = mcu_bench.native_counts(MCU_TARGET)
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")
    assert set(counts) == set(base) == set(mcu_bench.NATIVE_CASES)
    slower = {name: f"{counts[name]:,} vs {base[name]:,}"
              for name in counts if counts[name] > base[name] * ALLOWED}
    assert not slower, f"more than 10 % more instructions than the baseline: {slower}"
    assert all(count > 0 for count in counts.values())
