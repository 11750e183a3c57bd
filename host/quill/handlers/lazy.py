"""The daemon's method registry without the handler modules: names, parameters and help from the
generated method_table, each handler imported at its method's first call (issue 28, start-up)."""
from __future__ import annotations

import dataclasses
import importlib

from quill.handlers import MODULES
from quill.handlers.core_help import with_cores_help
from quill.handlers.errors import guarded_methods, with_error_boundary
from quill.handlers.method_table import TABLE
from quill.rpc.registry import LazyHandler, Method, Registry


def lazy_registry() -> Registry:
    """Every method, its handler behind the error boundary once imported, with Core's help."""
    registry = Registry()
    for module, methods in TABLE:
        registry.add(with_cores_help([Method(handler=LazyHandler(module, fields["name"], with_error_boundary),
                                             **fields) for fields in methods]))
    return registry


def eager_registry() -> Registry:
    """The same registry from the handler modules themselves (what the table is checked against)."""
    registry = Registry()
    for name in MODULES:
        module = importlib.import_module(f"quill.handlers.{name}")
        registry.add(with_cores_help(guarded_methods(module.METHODS)))
    return registry


def declared(method: Method) -> Method:
    """A method as declared, its handler left out: what the table must hold."""
    return dataclasses.replace(method, handler=None)   # type: ignore[arg-type]
