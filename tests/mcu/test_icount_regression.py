"""The firmware's instruction counts on the Cortex-M0+ target stay within 10 % of the
committed baseline (tests/bench/mcu_icount_baseline.json). QEMU's -icount makes the
counts independent of the machine's load, so this can fail a build without flaking.
Faster is welcome: update the baseline with tests/bench/bench_mcu_icount.py
--update-baseline."""
import json
from pathlib import Path

from quill.emulator import mcu_bench
from tests.kit.qemu import MCU_TARGET, qemu_target

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
