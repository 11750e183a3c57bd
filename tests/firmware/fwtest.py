"""Helpers for firmware unit tests that run under CPython (pytest) AND under
the MicroPython unix port (tests/firmware/mp_runner.py). Plain MicroPython:
no pathlib, no f-string tricks, no pytest at import time.
"""
import os
import sys

try:
    import pytest  # only under CPython
except ImportError:
    pytest = None

IS_MICROPYTHON = sys.implementation.name == "micropython"


class Skipped(Exception):
    pass


def skip(reason):
    if pytest is not None:
        pytest.skip(reason)
    raise Skipped(reason)


def unavailable(reason):
    """A vector is absent: skip, or fail with QUILL_REQUIRE_TOOLCHAINS set (CI).
    MicroPython's copy of tests/kit/toolchains.py's rule, which needs pathlib and pytest."""
    if os.getenv("QUILL_REQUIRE_TOOLCHAINS") not in (None, "", "0"):
        raise AssertionError(reason + " (QUILL_REQUIRE_TOOLCHAINS is set, so this cannot be skipped)")
    skip(reason)


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _here():
    f = __file__
    i = f.rfind("/")
    return f[:i] if i >= 0 else "."


def vectors_dir():
    if pytest is not None:  # CPython: the one rule in tests/kit/toolchains.py
        from tests.kit import toolchains
        return str(toolchains.vectors_dir())
    env = os.getenv("QUILL_VECTORS") if hasattr(os, "getenv") else None
    if env:
        path = env
    elif _exists("/rom/vectors"):
        path = "/rom/vectors"       # on a Cortex-M target: the vectors in its ROMFS
    else:
        # tests/firmware -> repo -> repo's parent / shared / vectors
        path = _here() + "/../../../shared/vectors"
    if not _exists(path):
        unavailable("shared test vectors not found at " + path + " (set QUILL_VECTORS)")
    return path


def vector_path(relative):
    path = vectors_dir() + "/" + relative
    if not _exists(path):
        unavailable("vector file " + relative + " not found")
    return path


def load_json(relative):
    import json
    with open(vector_path(relative)) as f:
        return json.load(f)


class raises:
    """`with raises(SomeError) as r:` for both interpreters; r.value is the exception."""

    def __init__(self, exc_type, match=None):
        self.exc_type = exc_type
        self.match = match
        self.value = None

    def __enter__(self):
        return self

    def __exit__(self, et, ev, _tb):
        if et is None:
            raise AssertionError("did not raise " + self.exc_type.__name__)
        if not issubclass(et, self.exc_type):
            return False
        self.value = ev
        if self.match is not None and self.match not in str(ev):
            raise AssertionError("raised %r, expected message containing %r" % (ev, self.match))
        return True
