"""Shared helpers of the board tests and benchmarks (tests/bench/bench_board_*.py)."""
from pathlib import Path

from quill.emulator.launcher import micropython_binary  # noqa: F401  (re-exported for the board tests)

REPO = Path(__file__).resolve().parents[2]
