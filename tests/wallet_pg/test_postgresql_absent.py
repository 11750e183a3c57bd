"""Without PostgreSQL's binaries, a test that needs the server skips with the reason locally and
fails when QUILL_REQUIRE_TOOLCHAINS is set (CI), as every other toolchain (tests.kit.toolchains)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit.toolchains import REQUIRE_ENV

REPO = Path(__file__).resolve().parents[2]
NEEDS_SERVER = "tests/wallet_pg/test_postgresql_store.py::test_the_wallets_live_in_the_database"


@pytest.mark.parametrize("required", [False, True])
def test_absent_postgresql_skips_locally_and_fails_in_ci(tmp_path, required):
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ENV}
    env["PG_BINDIR"] = str(tmp_path / "no-postgresql")
    if required:
        env[REQUIRE_ENV] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rsfE", "-p", "no:cacheprovider", NEEDS_SERVER],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert "PostgreSQL's initdb/pg_ctl not found" in out, out
    if required:
        assert proc.returncode == 1 and "cannot be skipped" in out, out
    else:
        assert proc.returncode == 0 and "1 skipped" in out, out
