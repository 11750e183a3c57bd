"""Run every benchmark (tests/bench/bench_*.py) one after another; each prints its table."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

failed = []
for script in sorted(HERE.glob("bench_*.py")):
    print(f"\n=== {script.stem} ===", flush=True)
    if subprocess.run([sys.executable, str(script)]).returncode != 0:
        failed.append(script.name)
if failed:
    print("failed:", ", ".join(failed))
    sys.exit(1)
