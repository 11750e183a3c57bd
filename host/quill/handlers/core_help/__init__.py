"""Bitcoin Core's `help <method>` texts, verbatim, one file per method.

Each file is the exact string the real bitcoind answers to `help <method>` (the
reference is Core at the version in ../shared/toolchains); tests compare them with
it. Quill's own differences are documented in docs/rpc.md, never in these texts.
Every method Core also has answers `help` and arity errors with Core's text: the
daemon gives each registered method its file (`with_cores_help`), so a new method
needs only its file here. Quill's own methods (no file) keep their generated help.
"""
import dataclasses
import functools
import os
from collections.abc import Sequence

from quill.rpc.registry import Method

# The files beside this module (read with os, not importlib.resources: its readers cost quilld's
# start-up a few milliseconds, and the package is always installed as files).
FOLDER = os.path.dirname(os.path.abspath(__file__))


def core_help(method: str) -> str:
    """Core's help text for ``method``."""
    with open(os.path.join(FOLDER, f"{method}.txt"), encoding="utf-8") as f:
        return f.read()


def with_cores_help(methods: Sequence[Method]) -> list[Method]:
    """``methods``, each Core also has carrying Core's help text (the folder is listed once: the
    daemon gives every method its text at start-up)."""
    texts = _text_files()
    return [dataclasses.replace(m, core_help=core_help(m.name))
            if not m.core_help and f"{m.name}.txt" in texts else m
            for m in methods]


@functools.cache
def _text_files() -> frozenset[str]:
    return frozenset(name for name in os.listdir(FOLDER) if name.endswith(".txt"))
