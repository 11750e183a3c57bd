"""RPC method table: names, declared parameters, handlers, help.

Handler modules (quill.handlers.*) each export `METHODS`, a list of Method.
The dispatcher checks argument counts and top-level types from the declared
parameters (as Core's RPCHelpMan does since v25) before a handler runs, so a
handler receives `args`: a list as long as its parameter list, with None for
every argument that was absent or null.
"""

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

# Declared parameter types, as Core's RPCArg::Type. STR_HEX checks as a string;
# AMOUNT, RANGE and ANY are not type-checked before the handler runs.
STR = "string"
STR_HEX = "hex"
NUM = "number"
BOOL = "bool"
ARR = "array"
OBJ = "object"
AMOUNT = "amount"
RANGE = "range"
ANY = "any"

# Where a method runs (Method.lane). INLINE: on the event loop itself, for cheap
# calls that never block (the dispatcher still sends large bodies to the pool).
# POOL: the -rpcthreads workers, for anything that may block (SQLite, locks).
# DEVICE: the device's own queue, one call at a time, so that calls waiting for
# the signing device never hold an RPC worker (quill.device.queue).
# The category Core leaves out of `help`'s overview (test-only and internal methods).
HIDDEN = "hidden"

INLINE = "inline"
POOL = "pool"
DEVICE = "device"

_CHECKED_AS = {STR: "string", STR_HEX: "string", NUM: "number", BOOL: "bool",
               ARR: "array", OBJ: "object"}


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    required: bool = False
    help: str = ""
    # Shown in the usage line, e.g. '"hexstring"' or '( iswitness )'
    placeholder: str = ""

    @property
    def expected_json_type(self):
        """The JSON type name checked before the handler runs, or None."""
        return _CHECKED_AS.get(self.type)


@dataclass(frozen=True)
class Method:
    name: str
    category: str
    handler: Callable[[Any, list], Any]
    params: Sequence[Param] = ()
    description: str = ""
    result: str = ""
    examples: str = ""
    # Wallet methods resolve /wallet/<name> (or the only loaded wallet).
    wallet: bool = False
    lane: str = POOL
    # Core's own help text, verbatim (quill.handlers.core_help), when the method has one:
    # it is what `help <method>` and an arity error answer.
    core_help: str = ""
    # Needs nothing of the node but its chain name and -deprecatedrpc, changes nothing, and its answer
    # depends on its arguments alone: it may be answered by a stateless worker process (rpc/stateless).
    stateless: bool = False
    # Its answer never holds a Python float (amounts are Amount, other numbers int or Number): the
    # reply is written by orjson (univalue.encode), which writes floats in its own form, not Core's.
    float_free: bool = False

    def usage(self) -> str:
        if self.core_help:
            return self.core_help.split("\n", 1)[0]
        return self._usage()

    def _usage(self) -> str:
        parts = [self.name]
        optional_open = False
        for p in self.params:
            shown = p.placeholder or (f'"{p.name}"' if p.type in (STR, STR_HEX) else p.name)
            if not p.required and not optional_open:
                parts.append("(")
                optional_open = True
            parts.append(shown)
        if optional_open:
            parts.append(")")
        return " ".join(parts)

    def help_text(self) -> str:
        if self.core_help:
            return self.core_help
        lines = [self.usage()]
        if self.description:
            lines += ["", self.description.strip()]
        if self.params:
            lines += ["", "Arguments:"]
            for i, p in enumerate(self.params, 1):
                req = "required" if p.required else "optional"
                lines.append(f"{i}. {p.name}    ({p.type}, {req}) {p.help}".rstrip())
        if self.result:
            lines += ["", "Result:", self.result.strip()]
        if self.examples:
            lines += ["", "Examples:", self.examples.strip()]
        return "\n".join(lines) + "\n"


Handler = Callable[[Any, list], Any]


class LazyHandler:
    """A method's handler, its module imported at the method's first call: the daemon answers
    sooner when it imports, at start, only the code of the calls it is given (issue 28, start-up).
    `wrap` is applied once to the real handler (the error boundary)."""

    __slots__ = ("module", "name", "_wrap", "_handler")

    def __init__(self, module: str, name: str, wrap: Callable[[Handler], Handler]) -> None:
        self.module = module
        self.name = name
        self._wrap = wrap
        self._handler: Handler | None = None

    def __call__(self, ctx: Any, args: list) -> Any:
        handler = self._handler
        if handler is None:
            handler = self._handler = self.resolve()
        return handler(ctx, args)

    def resolve(self) -> Handler:
        """The module's own handler of this method, wrapped (two threads may both resolve it
        at once: the import lock makes that one import, and both results are the same)."""
        for method in importlib.import_module(self.module).METHODS:
            if method.name == self.name:
                return self._wrap(method.handler)
        raise LookupError(f"{self.module} has no RPC method {self.name}")


@dataclass
class Registry:
    methods: dict = field(default_factory=dict)

    def add(self, methods: Sequence[Method]) -> None:
        for m in methods:
            if m.name in self.methods:
                raise ValueError(f"RPC method {m.name} registered twice")
            self.methods[m.name] = m

    def get(self, name: str):
        return self.methods.get(name)

    def by_category(self):
        cats = {}
        for m in sorted(self.methods.values(), key=lambda m: m.name):
            cats.setdefault(m.category, []).append(m)
        return dict(sorted(cats.items()))
