"""The absent-vectors rule itself: a vector test skips locally and fails when
QUILL_REQUIRE_TOOLCHAINS is set (as CI sets it), through each way tests read them:
tests.kit.vectors on the host, tests.firmware.fwtest under CPython and under
MicroPython, and Core's reference files."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quill.emulator.launcher import micropython_binary
from tests.kit.toolchains import REQUIRE_ENV

REPO = Path(__file__).resolve().parents[2]
# One test per way of reading the shared files (each fails at once when they are absent).
VECTOR_TESTS = [
    "tests/tx/test_address.py::test_base58_encode_decode",            # tests.kit.vectors
    "tests/firmware/test_secp256k1.py::test_public_keys_from_vectors",  # tests.firmware.fwtest
    "tests/interpreter/test_api.py::test_error_strings_match_core_script_error_string",  # reference
]


def _environment(tmp_path, required):
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ENV}
    env["QUILL_VECTORS"] = str(tmp_path / "no-vectors")
    env["QUILL_REFERENCE"] = str(tmp_path / "no-reference")
    if required:
        env[REQUIRE_ENV] = "1"
    return env


def _pytest(tmp_path, required):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rsf", "-p", "no:cacheprovider", *VECTOR_TESTS],
                          cwd=REPO, env=_environment(tmp_path, required), capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_absent_vectors_skip_locally(tmp_path):
    code, out = _pytest(tmp_path, required=False)
    assert code == 0, out
    assert f"{len(VECTOR_TESTS)} skipped" in out, out
    assert "shared test vectors not found at" in out and "reference file core-rpc.md not found" in out, out


def test_absent_vectors_fail_when_required(tmp_path):
    code, out = _pytest(tmp_path, required=True)
    assert code == 1, out
    assert f"{len(VECTOR_TESTS)} failed" in out, out
    assert f"({REQUIRE_ENV} is set, so this cannot be skipped)" in out, out


@pytest.mark.parametrize("required", [False, True], ids=["local", "required"])
def test_absent_vectors_under_micropython(tmp_path, required):
    proc = subprocess.run(
        [micropython_binary(), "-X", "heapsize=4M", str(REPO / "tests" / "firmware" / "mp_runner.py"),
         str(REPO / "firmware"), str(REPO), "tests.firmware.test_secp256k1", "test_public_keys_from_vectors"],
        env=_environment(tmp_path, required), capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    if required:
        assert proc.returncode == 1 and "0 passed, 1 failed, 0 skipped" in out, out
        assert "cannot be skipped" in out, out
    else:
        assert proc.returncode == 0 and "0 passed, 0 failed, 1 skipped" in out, out
