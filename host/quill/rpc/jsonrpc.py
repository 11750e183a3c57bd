"""JSON-RPC 1.x/2.0 request handling exactly as Core's httprpc.cpp and
rpc/request.cpp (core-rpc.md §5.3-5.5): request parsing, named parameters,
argument checks, envelopes, batches and the HTTP status of each reply.

`process_body` is the whole pipeline from request body to (status, body);
it never raises. RPCError values are turned into error objects here and
nowhere else.
"""

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quill.rpc import univalue, univalue_sliced
from quill.rpc.errors import (
    RPC_INVALID_PARAMETER,
    RPC_INVALID_REQUEST,
    RPC_METHOD_NOT_FOUND,
    RPC_MISC_ERROR,
    RPC_OUT_OF_MEMORY,
    RPC_PARSE_ERROR,
    RPC_TYPE_ERROR,
    RPCError,
)
from quill.rpc.registry import DEVICE, INLINE, POOL, Method, Registry

log = logging.getLogger("quill.rpc")

HTTP_OK = 200
HTTP_NO_CONTENT = 204
HTTP_BAD_REQUEST = 400
HTTP_NOT_FOUND = 404
HTTP_INTERNAL_SERVER_ERROR = 500

_ABSENT = object()
_DEBUG = logging.DEBUG
_monotonic = time.monotonic


_NO_PARAMS: list = []  # never changed: check_args copies a handler's arguments out of it


class Request:
    """One request's id, method, params and version (1 = legacy 1.x, 2 = JSON-RPC 2.0)."""

    __slots__ = ("id", "method", "params", "version")

    def __init__(self, id: object = _ABSENT, method: str = "", params: object = _NO_PARAMS,
                 version: int = 1) -> None:
        self.id = id
        self.method = method
        self.params = params
        self.version = version

    @property
    def is_notification(self) -> bool:
        return self.version == 2 and self.id is _ABSENT

    @property
    def json_id(self) -> object:
        """The id as JSON has it (null when absent)."""
        return None if self.id is _ABSENT else self.id


class Args(list):
    """A handler's arguments, one per declared parameter (None when absent or
    null); `given` is how many the client actually sent (echo needs it), set by
    Dispatcher.check_args. A slot, not a class default: no instance dict per call."""

    __slots__ = ("given",)
    given: int


_NO_ARGS = Args()  # what every method without parameters receives when called without any
_NO_ARGS.given = 0


@dataclass
class CallContext:
    """What a handler may know of the call: the node, the wallet URI, the user."""
    node: object
    wallet_name: str | None = None
    user: str | None = None


def parse_request(obj, req: Request) -> None:
    """Fill `req` from a request object; raise RPCError as JSONRPCRequest::parse."""
    if not isinstance(obj, dict):
        # before anything is reset: in a batch, Core answers with the previous
        # element's id and version (one JSONRPCRequest is reused for the batch)
        raise RPCError(RPC_INVALID_REQUEST, "Invalid Request object")
    req.id = obj["id"] if "id" in obj else _ABSENT
    req.version = 1
    if "jsonrpc" in obj and obj["jsonrpc"] is not None:
        version = obj["jsonrpc"]
        if not isinstance(version, str):
            raise RPCError(RPC_INVALID_REQUEST, "jsonrpc field must be a string")
        if version == "2.0":
            req.version = 2
        elif version != "1.0":
            raise RPCError(RPC_INVALID_REQUEST, "JSON-RPC version not supported")
    method = obj.get("method")
    if method is None:
        raise RPCError(RPC_INVALID_REQUEST, "Missing method")
    if not isinstance(method, str):
        raise RPCError(RPC_INVALID_REQUEST, "Method must be a string")
    req.method = method
    params = obj.get("params")
    if params is None:
        req.params = []
    elif isinstance(params, (list, dict)):
        req.params = params
    else:
        raise RPCError(RPC_INVALID_REQUEST, "Params must be an array or object")


def reply_object(req: Request, result=None, error: RPCError | None = None) -> dict:
    out: dict[str, object]
    if req.version == 2:
        out = {"jsonrpc": "2.0"}
        if error is not None:
            out["error"] = error.to_json()
        else:
            out["result"] = result
        out["id"] = None if req.id is _ABSENT else req.id
        return out
    out = {"result": result if error is None else None,
           "error": None if error is None else error.to_json()}
    if req.id is not _ABSENT:
        out["id"] = req.id
    return out


class ActiveCommands:
    """The commands running now, for getrpcinfo. No lock: one dict item set or
    popped, and a dict copied, are each atomic under the GIL."""

    def __init__(self):
        self.running = {}   # key -> (method, start): Dispatcher.execute sets its call's item and pops it
        self.ids = itertools.count()

    def snapshot(self) -> list:
        now = time.monotonic()
        items = sorted(self.running.copy().items())
        return [{"method": m, "duration": int((now - start) * 1_000_000)} for _, (m, start) in items]


class _Shape:
    """A method's declared parameters as check_args reads them, worked out once."""

    __slots__ = ("count", "required", "typed", "padding")

    def __init__(self, method) -> None:
        self.count = len(method.params)
        self.required = sum(1 for p in method.params if p.required)
        # (position, name, required, JSON type) of each parameter whose type is checked
        self.typed = tuple((i, p.name, p.required, p.expected_json_type)
                           for i, p in enumerate(method.params) if p.expected_json_type)
        self.padding = (None,) * self.count


class Dispatcher:
    def __init__(self, registry: Registry):
        self.registry = registry
        self.active = ActiveCommands()
        self._shapes: dict[str, _Shape] = {}   # method name -> its parameters, as check_args reads them
        # called with each call's context before its handler (-store=postgresql: memory made current)
        self.before_call: Callable[[CallContext], None] | None = None
        # -store=postgresql: (True, the leader's result) for a call a replica passes to the leader
        # (quill.daemon.cluster.forward), (False, None) for one it answers itself
        self.forward: Callable[[Request], tuple[bool, Any]] | None = None

    # -- arguments -------------------------------------------------------

    def positional_args(self, method, params) -> list:
        """Named params mapped to positions, as Core's transformNamedArguments.
        A positional list is returned as it is: check_args copies it."""
        if isinstance(params, list):
            return params
        for name in getattr(params, "duplicate_keys", None) or ():
            raise RPCError(RPC_INVALID_PARAMETER, f"Parameter {name} specified multiple times")
        named = dict(params)
        out: list = []
        hole, initial_hole, initial_param = 0, 0, None
        for p in method.params:
            if p.name in named:
                out.extend([None] * hole)
                hole = 0
                initial_param = initial_param or p.name
                out.append(named.pop(p.name))
            else:
                hole += 1
                if not out:
                    initial_hole = hole
        positional = named.pop("args", None)
        if isinstance(positional, list):
            if initial_hole < len(positional) and initial_param:
                raise RPCError(RPC_INVALID_PARAMETER,
                               f"Parameter {initial_param} specified twice both as positional and named argument")
            out = list(positional) + out[len(positional):]
        if named:
            raise RPCError(RPC_INVALID_PARAMETER, f"Unknown named parameter {next(iter(named))}")
        return out

    def check_args(self, method, args) -> list:
        """Count and top-level types (RPCHelpMan::HandleRequest, v25+); pad with None."""
        shape = self._shapes.get(method.name)
        if shape is None:
            shape = self._shapes[method.name] = _Shape(method)
        given = len(args)
        if given > shape.count or given < shape.required:
            raise RPCError(RPC_MISC_ERROR, method.help_text())
        mismatches = {}
        for i, name, required, expected in shape.typed:
            if i >= given:   # absent arguments are never a mismatch
                break
            value = args[i]
            if value is None:
                # Core's RPCArg::MatchesType: a required null fails only where a JSON type is
                # expected (AMOUNT, RANGE and ANY, or a skip_type_check argument, accept it).
                if required:
                    mismatches[f"Position {i + 1} ({name})"] = \
                        f"JSON value of type null is not of expected type {expected}"
                continue
            if univalue.type_name(value) != expected:
                mismatches[f"Position {i + 1} ({name})"] = \
                    f"JSON value of type {univalue.type_name(value)} is not of expected type {expected}"
        if mismatches:
            raise RPCError(RPC_TYPE_ERROR, "Wrong type passed:\n" + univalue.dumps(mismatches, indent=4))
        if not given and not shape.count:
            return _NO_ARGS
        padded = Args(args)
        padded.given = given
        if given < shape.count:
            padded.extend(shape.padding[given:])
        return padded

    # -- execution -------------------------------------------------------

    def execute(self, req: Request, ctx: CallContext):
        method = self.registry.methods.get(req.method)
        if method is None:
            raise RPCError(RPC_METHOD_NOT_FOUND, "Method not found")
        active = self.active
        key = next(active.ids)
        running = active.running
        # listed by getrpcinfo while it runs, as Core lists each call it executes: a call a replica
        # passes to the leader too, for as long as it waits for the leader's answer
        running[key] = (req.method, _monotonic())
        try:
            if self.forward is not None:
                passed, result = self.forward(req)
                if passed:
                    return result
            return self._run(method, req, ctx)
        finally:
            running.pop(key, None)

    def _run(self, method: Method, req: Request, ctx: CallContext) -> Any:
        params = req.params
        args = self.check_args(method, params if isinstance(params, list) else self.positional_args(method, params))
        if log.isEnabledFor(_DEBUG):
            log.debug("ThreadRPCServer method=%s user=%s", _printable(req.method), _printable(ctx.user))
        try:
            if self.before_call is not None:
                self.before_call(ctx)
            return method.handler(ctx, args)
        except RPCError:
            raise
        except MemoryError:
            raise RPCError(RPC_OUT_OF_MEMORY, "Out of memory") from None
        except Exception as e:
            raise internal_bug(req.method, e) from None

    def exec_one(self, obj, ctx: CallContext, req: Request | None = None):
        """One request object -> (request, reply object, parse failed?). `req` carries
        the previous batch element's id and version, as Core's reused JSONRPCRequest."""
        req = Request() if req is None else req
        try:
            parse_request(obj, req)
        except RPCError as e:
            return req, reply_object(req, error=e), True
        try:
            return req, reply_object(req, result=self.execute(req, ctx)), False
        except RPCError as e:
            return req, reply_object(req, error=e), False

    # -- whole bodies ----------------------------------------------------------------

    def parse_body(self, body: bytes | bytearray):
        """The request value, or (HTTP status, reply bytes) when the body is not a
        JSON object or array."""
        try:
            value = univalue.loads(body)
        except univalue.JSONParseError:
            return HTTP_INTERNAL_SERVER_ERROR, _legacy_error(RPC_PARSE_ERROR, "Parse error")
        if type(value) is not dict and not isinstance(value, (dict, list)):
            return HTTP_INTERNAL_SERVER_ERROR, _legacy_error(RPC_PARSE_ERROR, "Top-level object parse error")
        return value

    def lane(self, value) -> str:
        """Where a parsed request runs (registry.INLINE, POOL or DEVICE): a batch runs
        on the device lane if any call needs the device, inline only if every call is cheap."""
        if type(value) is dict or isinstance(value, dict):
            name = value.get("method")
            method = self.registry.methods.get(name) if isinstance(name, str) else None
            return method.lane if method is not None else INLINE
        lanes = {self._item_lane(item) for item in value}
        if DEVICE in lanes:
            return DEVICE
        return POOL if POOL in lanes else INLINE

    def stateless(self, value) -> bool:
        """Every call of a parsed request (object, or non-empty array of objects) names a
        stateless method (registry.Method.stateless): a stateless worker may answer it whole."""
        methods = self.registry.methods
        if type(value) is dict:
            method = methods.get(value.get("method"))
            return method is not None and method.stateless
        if not isinstance(value, list) or not value or isinstance(value, dict):
            return False
        for item in value:
            method = methods.get(item.get("method")) if type(item) is dict else None
            if method is None or not method.stateless:
                return False
        return True

    def process_value(self, value, ctx: CallContext):
        """A parsed request (object or array) -> (HTTP status, reply bytes or None)."""
        if type(value) is dict or isinstance(value, dict):
            return self._single(value, ctx)
        return self._batch(value, ctx)

    # -- large requests: bounded slices, one reply buffer ---------------------------------

    def parse_large(self, body: bytes | bytearray):
        """parse_body for a large body, read in bounded slices (univalue_sliced); a long batch
        comes back as a univalue_sliced.Batch whose `lane` is set."""
        lanes: set[str] = set()
        try:
            value = univalue_sliced.loads(body, lambda item: lanes.add(self._item_lane(item)))
        except univalue.JSONParseError:
            return HTTP_INTERNAL_SERVER_ERROR, _legacy_error(RPC_PARSE_ERROR, "Parse error")
        if isinstance(value, univalue_sliced.Batch):
            value.lane = DEVICE if DEVICE in lanes else POOL if POOL in lanes else INLINE
            return value
        if not isinstance(value, (dict, list)):
            return HTTP_INTERNAL_SERVER_ERROR, _legacy_error(RPC_PARSE_ERROR, "Top-level object parse error")
        return value

    def _item_lane(self, item) -> str:
        if isinstance(item, dict) and isinstance(item.get("method"), str):
            method = self.registry.methods.get(item["method"])
            return method.lane if method is not None else INLINE
        return INLINE

    def process_large(self, value, ctx: CallContext):
        """process_value for a large request, with the same replies: each reply is written in
        bounded slices into one buffer as soon as it is made, and a batch's requests are dropped
        one by one as they run, so neither the requests nor the replies are ever held twice."""
        if isinstance(value, dict):
            req = Request()
            try:
                parse_request(value, req)
            except RPCError as e:
                return _single_reply(req, reply_object(req, error=e), True)
            del value
            try:
                result = self.execute(req, ctx)
            except RPCError as e:
                return _single_reply(req, reply_object(req, error=e), False)
            if req.is_notification:
                return HTTP_NO_CONTENT, None
            return HTTP_OK, univalue_sliced.encode(reply_object(req, result))
        items = value
        del value
        out = bytearray(b"[")
        answered = 0
        req = Request(id=None)   # Core's JSONRPCRequest starts with a null id
        for i in range(len(items)):
            if isinstance(items, univalue_sliced.Batch):
                obj = items.element(i)   # read now: one request in memory at a time
            else:
                obj, items[i] = items[i], None
            req, reply, _ = self.exec_one(obj, ctx, req)
            del obj
            if not req.is_notification:
                if answered:
                    out += b","
                univalue_sliced.write(reply, out)
                answered += 1
        if items and not answered:
            return HTTP_NO_CONTENT, None
        out += b"]\n"
        return HTTP_OK, out

    def process_body(self, body: bytes, ctx: CallContext):
        """Request body -> (HTTP status, reply bytes or None); never raises."""
        value = self.parse_body(body)
        if isinstance(value, tuple):
            return value
        return self.process_value(value, ctx)

    def _single(self, obj, ctx):
        req = Request()
        try:
            parse_request(obj, req)
        except RPCError as e:
            return _single_reply(req, reply_object(req, error=e), True)
        try:
            result = self.execute(req, ctx)
        except RPCError as e:
            return _single_reply(req, reply_object(req, error=e), False)
        if req.version == 2:
            if req.id is _ABSENT:
                return HTTP_NO_CONTENT, None
            return HTTP_OK, univalue.encode_reply(univalue.dumps(reply_object(req, result)) + "\n")
        if req.id is _ABSENT:
            return HTTP_OK, univalue.encode_reply(univalue.dumps({"result": result, "error": None}) + "\n")
        method = self.registry.methods.get(req.method)
        if method is not None and method.float_free:
            return HTTP_OK, b"".join((b'{"result":', univalue.encode(result), b',"error":null,"id":',
                                      univalue.encode_reply(univalue.dumps(req.id)), b"}\n"))
        # reply_object's {"result": ..., "error": null, "id": ...}, written around the two values
        return HTTP_OK, univalue.encode_reply(
            f'{{"result":{univalue.dumps(result)},"error":null,"id":{univalue.dumps(req.id)}}}\n')

    def _batch(self, items, ctx):
        replies = []
        req = Request(id=None)   # Core's JSONRPCRequest starts with a null id
        for obj in items:
            req, reply, _ = self.exec_one(obj, ctx, req)
            if not req.is_notification:
                replies.append(reply)
        if items and not replies:
            return HTTP_NO_CONTENT, None
        return HTTP_OK, univalue.encode_reply(univalue.dumps(replies) + "\n")


def _single_reply(req: Request, reply: dict, parse_failed: bool):
    """(HTTP status, body) of a single request's error reply, as Core's HTTPReq_JSONRPC."""
    if req.is_notification and not parse_failed:
        return HTTP_NO_CONTENT, None
    error = reply["error"]
    if req.version == 2:
        status = HTTP_BAD_REQUEST if parse_failed else HTTP_OK
    elif error["code"] == RPC_INVALID_REQUEST:
        status = HTTP_BAD_REQUEST
    elif error["code"] == RPC_METHOD_NOT_FOUND:
        status = HTTP_NOT_FOUND
    else:
        status = HTTP_INTERNAL_SERVER_ERROR
    return status, univalue.encode_reply(univalue.dumps(reply) + "\n")


def _legacy_error(code, message) -> bytes:
    return (univalue.dumps({"result": None, "error": {"code": code, "message": message}, "id": None})
            + "\n").encode()


INTERNAL_BUG = "Internal bug detected: {method} did not complete; the details are in debug.log"


def internal_bug(method: str, error: BaseException) -> RPCError:
    """The answer to an exception no boundary mapped (a bug), in the form of Core's
    NonFatalCheckError (RPC_MISC_ERROR, "Internal bug detected: ..."), never naming a
    Python class. debug.log gets the traceback's frames and the exception's type, not
    its text nor any local value: either may quote the request (a key, say)."""
    # the frames and the type only: quill.daemon.logging_setup.CoreFormatter formats exc_info
    log.error("Internal bug detected in RPC method %s: %s", _printable(method), type(error).__name__,
              exc_info=error)
    return RPCError(RPC_MISC_ERROR, INTERNAL_BUG.format(method=_printable(method)))


def _printable(text) -> str:
    """Method and user names are client-supplied: keep log lines single and short."""
    if text is None:
        return ""
    return "".join(c if c.isprintable() else "?" for c in str(text))[:64]
