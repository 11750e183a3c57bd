"""Bitcoin Core's `help <method>` texts, verbatim, one file per method.

Each file is the exact string the real bitcoind answers to `help <method>` (the
reference is Core at the version in ../shared/toolchains); tests compare them with
it. Quill's own differences are documented in the README, never in these texts.
"""
from importlib import resources


def core_help(method: str) -> str:
    """Core's help text for ``method``."""
    return resources.files(__name__).joinpath(f"{method}.txt").read_text(encoding="utf-8")
