"""quilld registers its methods from a generated table (quill.handlers.method_table) and imports a
handler module at its first call (issue 28, start-up). The table is derived from the handler
modules' own METHODS, the one home of every method's parameters and help: these tests fail when
it drifts from them, when start-up imports a handler module, or when a lazy handler does not run
the module's own handler behind the error boundary."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from quill.handlers import MODULES
from quill.handlers.lazy import declared, eager_registry, lazy_registry
from quill.rpc.errors import RPCError
from quill.rpc.registry import LazyHandler

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "host" / "quill" / "handlers" / "method_table.py"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_method_table", ROOT / "tools" / "gen_method_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_what_the_handler_modules_declare():
    assert TABLE.read_text(encoding="utf-8") == _generator().render(), \
        "host/quill/handlers/method_table.py is out of date: run tools/gen_method_table.py"


def test_the_lazy_registry_equals_the_handler_modules_registry():
    lazy, eager = lazy_registry(), eager_registry()
    assert list(lazy.methods) == list(eager.methods)
    for name, method in lazy.methods.items():
        assert declared(method) == declared(eager.methods[name]), name
    assert [m.help_text() for m in lazy.methods.values()] == [m.help_text() for m in eager.methods.values()]


def test_every_handler_module_is_in_the_list():
    on_disk = {p.stem for p in (ROOT / "host" / "quill" / "handlers").glob("*.py")}
    declares = re.compile(r"^METHODS\b.*=", re.MULTILINE)
    with_methods = {name for name in on_disk if declares.search((TABLE.parent / f"{name}.py").read_text())}
    assert with_methods == set(MODULES)


def test_the_daemon_starts_without_importing_a_handler_module():
    code = ("import sys; from quill.daemon.main import build_registry; build_registry(); "
            "print(sorted(m for m in sys.modules if m.rpartition('.')[2] in "
            f"{list(MODULES)!r} and m.startswith('quill.handlers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_a_lazy_handler_runs_the_modules_handler_behind_the_error_boundary():
    handler = lazy_registry().get("decodescript").handler
    assert isinstance(handler, LazyHandler)
    with pytest.raises(RPCError) as e:     # the real handler's answer
        handler(None, ["zz"])
    assert (e.value.code, e.value.message) == (-8, "argument must be hexadecimal string (not 'zz')")
    from quill.handlers import rawtransactions
    own = next(m.handler for m in rawtransactions.METHODS if m.name == "decodescript")
    assert handler.resolve().__wrapped__ is own     # functools.wraps of handlers.errors.with_error_boundary


def test_a_lazy_handler_of_an_unknown_method_says_so():
    with pytest.raises(LookupError, match="quill.handlers.control has no RPC method nosuch"):
        LazyHandler("quill.handlers.control", "nosuch", lambda h: h)(None, [])
