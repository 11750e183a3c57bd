"""Which of quill's modules mypyc compiles, and whether the compiled ones are in use (issue 28).

The hot pure-Python modules of the decoding calls are compiled to C extensions by mypyc when the
package is installed (setup.py; `QUILL_PURE_PYTHON=1` at install or run time, or no C compiler,
leaves them pure Python). Their .py files stay the single source: an extension is only a
faster form of the same code, built beside it and never committed.

All or none: mypyc links the compiled modules to each other directly, so one compiled module
must never call an older compiled copy of another whose source has changed. When any of them is
missing, or older than its source (an edit or a checkout since the build), quill/__init__ loads
every one of them from its .py; `make .venv/.installed` builds them again.

This module is read by setup.py at build time without importing the package: standard library only.
"""
from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import spec_from_file_location
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from typing import Sequence

# The decoding path of decoderawtransaction, decodescript and decodepsbt, from the request's parameters to the
# reply's bytes. Each must type-check under mypy (mypyc compiles what mypy infers) and
# must not be monkeypatched: compiled callers call compiled functions directly.
# The Makefile reads this list too (one quoted name a line) for the install's dependencies.
MODULES = (
    "quill.amount",
    "quill.tx.hashes",
    "quill.tx.serialize",
    "quill.tx.transaction",
    "quill.tx.polymod",
    "quill.tx.script",
    "quill.tx.address",
    "quill.tx.descriptor",
    "quill.tx.decode",
    "quill.rpc.errors",
    "quill.rpc.univalue",
    "quill.rpc.args",
    "quill.handlers.rawtransactions",
    # decodepsbt and analyzepsbt: reading the PSBT, its keys' check, and decodepsbt's answer
    "quill.tx.curve_point",
    "quill.tx.psbt",
    "quill.handlers.psbt_render",
)

# mypyc's shared library of the group (build.shared_lib_name of this name): quill/_mypyc__mypyc.*.so
GROUP = "quill._mypyc"
PURE_ENV = "QUILL_PURE_PYTHON"

# Set by select() when the package is imported: why the modules run as pure Python, or None
# when the compiled ones are in use.
PURE_REASON: str | None = None

_HOST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SUFFIX = EXTENSION_SUFFIXES[0]  # the full tag first: .cpython-311-x86_64-linux-gnu.so


def source_path(module: str) -> str:
    return os.path.join(_HOST, *module.split(".")) + ".py"


def extension_path(module: str) -> str:
    return os.path.join(_HOST, *module.split(".")) + _SUFFIX


def pure_reason() -> str | None:
    """Why the modules must be loaded from their .py files, or None when the extensions are good."""
    if os.environ.get(PURE_ENV):
        return f"{PURE_ENV} is set"
    try:
        built = os.stat(extension_path(GROUP + "__mypyc")).st_mtime
    except OSError:
        return "no compiled extensions (installed with QUILL_PURE_PYTHON=1, without mypyc or without a C compiler)"
    for module in MODULES:
        try:
            shim = os.stat(extension_path(module)).st_mtime
            source = os.stat(source_path(module)).st_mtime
        except OSError:
            return f"{module} has no compiled extension"
        if source > built or source > shim:
            return f"{source_path(module)} changed since the build (`make .venv/.installed` compiles it again)"
    return None


class _SourceFinder:
    """Finds the compiled modules' .py files ahead of their extensions (a meta path finder;
    importlib.abc is not imported for it: it costs quilld's start 11 ms)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: object = None) -> ModuleSpec | None:
        if fullname not in MODULES:
            return None
        return spec_from_file_location(fullname, source_path(fullname))


def select() -> None:
    """Called once by quill/__init__, before any compiled module is imported."""
    global PURE_REASON
    PURE_REASON = pure_reason()
    if PURE_REASON is not None:
        sys.meta_path.insert(0, _SourceFinder())



def describe() -> str:
    """What this install runs (the Makefile prints it after the install)."""
    if PURE_REASON is None:
        return f"quill: {len(MODULES)} modules compiled by mypyc"
    return f"quill: pure Python ({PURE_REASON})"
