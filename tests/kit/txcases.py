"""Shared helpers for the decode tests: Core's golden RPC cases and a handler context.

The golden file lives next to the vectors, in ../shared/reference; it is found
through tests/kit/toolchains.py (skip locally, fail in CI when absent).
"""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from quill.amount import Amount
from quill.rpc import univalue
from quill.rpc.univalue import Number
from tests.kit.toolchains import reference_location, reference_path

DECODE_METHODS = ("decoderawtransaction", "decodescript")


def golden_path() -> Path:
    return reference_path("core-rpc-golden.json")


def golden_cases(methods=DECODE_METHODS):
    """The golden cases of these methods, parsed with numbers kept as written."""
    path = golden_path()
    with open(path, encoding="utf-8") as f:
        cases = univalue.loads(f.read())["cases"]
    return [c for c in cases if c["method"] in methods]


def golden_case_ids(methods=DECODE_METHODS):
    """Case ids for parametrization (loaded without skipping: ids only)."""
    path = reference_location() / "core-rpc-golden.json"
    if not path.exists():
        return ["golden-file-missing"]  # golden_case() then skips, or fails in CI
    with open(path, encoding="utf-8") as f:
        return [c["id"] for c in json.load(f)["cases"] if c["method"] in methods]


def golden_case(case_id):
    for c in golden_cases():
        if c["id"] == case_id:
            return c
    pytest.skip(f"golden case {case_id} not available")


def chain_of(case) -> str:
    return "main" if case["network"] == "any" else case["network"]


def make_ctx(chain="main", deprecated=()):
    return SimpleNamespace(node=SimpleNamespace(chain_name=chain, deprecated_rpc=frozenset(deprecated)),
                           wallet_name=None)


def lookup(obj, path: str):
    """Resolve a golden check path like vin[0].scriptSig.asm or vout.length."""
    want_length = path.endswith(".length")
    if want_length:
        path = path[:-len(".length")]
    for part in path.replace("]", "").split("."):
        name, _, index = part.partition("[")
        if name:
            obj = obj[name]
        if index:
            obj = obj[int(index)]
    return len(obj) if want_length else obj


def plain(value):
    """A checked value as comparable text/int: amounts and numbers as their literal text."""
    if isinstance(value, (Amount, Number)):
        return value.text
    return value


def assert_matches_golden(case, result=None, error=None):
    """Assert a handler outcome against a golden case under its match mode."""
    expected = case.get("expected")
    if expected is not None and "error" in expected:
        assert error is not None, f"{case['id']}: expected error {expected['error']}, got a result"
        assert {"code": error.code, "message": error.message} == expected["error"]
        return
    assert error is None, f"{case['id']}: unexpected error {error!r}"
    mode = case["match"]
    if mode == "exact":
        if "expected_compact" in case:
            assert univalue.dumps(result) == case["expected_compact"]
        else:
            assert univalue.dumps(result) == univalue.dumps(expected["result"])
    elif mode == "unordered":
        assert univalue.loads(univalue.dumps(result)) == expected["result"]
    elif mode == "partial":
        assert case["checks"], "a partial case without checks proves nothing"
        for check in case["checks"]:
            assert plain(lookup(result, check["path"])) == plain(check["equals"]), check["path"]
    else:
        raise AssertionError(f"unknown match mode {mode}")
