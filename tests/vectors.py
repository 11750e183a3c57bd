"""Where the shared public test vectors live: $QUILL_VECTORS or ../shared/vectors.

Host tests use `vectors_dir()` / `load_json()`; a missing folder skips the test
with a clear reason. Never copy the vector files into this project.
"""
import json
import os
from decimal import Decimal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def vectors_dir() -> Path:
    env = os.environ.get("QUILL_VECTORS")
    path = Path(env) if env else REPO.parent / "shared" / "vectors"
    if not path.is_dir():
        pytest.skip(f"shared test vectors not found at {path} (set QUILL_VECTORS)")
    return path


def vector_path(relative: str) -> Path:
    path = vectors_dir() / relative
    if not path.exists():
        pytest.skip(f"vector file {relative} not found in {path.parent}")
    return path


def load_json(relative: str, exact_numbers: bool = False):
    with open(vector_path(relative), encoding="utf-8") as f:
        if exact_numbers:
            return json.load(f, parse_float=Decimal)
        return json.load(f)
