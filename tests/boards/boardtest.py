"""Shared helpers of the board tests and benchmarks (tests/bench/bench_board_*.py)."""
import sys
from pathlib import Path

from quill.emulator.launcher import micropython_binary  # noqa: F401  (re-exported for the board tests)

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "tests"):  # the boards package; tests/vectors.py
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
