"""Run every benchmark (tests/bench/bench_*.py) one after another; each prints its table.

    .venv/bin/python -m tests.bench.run_all

Each benchmark runs as ``python -m tests.bench.<name>`` from the repository root,
so it imports its helpers as the package tests.
"""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

failed = []
for script in sorted(HERE.glob("bench_*.py")):
    print(f"\n=== {script.stem} ===", flush=True)
    if subprocess.run([sys.executable, "-m", f"tests.bench.{script.stem}"], cwd=REPO).returncode != 0:
        failed.append(script.name)
if failed:
    print("failed:", ", ".join(failed))
    sys.exit(1)
