"""Run the whole pytest suite (`python -m tests.run_suite`); fail loudly if nothing was collected.

pytest exits 5 when it collects no test. That must never pass as green.
"""
import sys

import pytest

code = pytest.main(sys.argv[1:])
if code == 5:
    print("error: pytest collected no tests", file=sys.stderr)
    code = 1
sys.exit(int(code))
