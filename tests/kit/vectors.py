"""Reading the shared public test vectors ($QUILL_VECTORS or ../shared/vectors).

Where they are, and what happens when they are absent (skip locally, fail with
QUILL_REQUIRE_TOOLCHAINS=1), is decided in tests/kit/toolchains.py only.
Never copy the vector files into this project.
"""
import json
from decimal import Decimal

from tests.kit.toolchains import vector_path, vectors_dir

__all__ = ["load_json", "vector_path", "vectors_dir"]


def load_json(relative: str, exact_numbers: bool = False):
    with open(vector_path(relative), encoding="utf-8") as f:
        if exact_numbers:
            return json.load(f, parse_float=Decimal)
        return json.load(f)
