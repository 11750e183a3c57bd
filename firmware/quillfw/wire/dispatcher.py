"""Method table and dispatch: a decoded request in, a reply map out (no I/O).

The table starts with the core methods (ping, get_info) and is extended with
register(): the signing integration adds its methods, the script and sighash
types they support (reported by get_info), and a reset hook. Every error reply
resets the session state through those hooks, so a failed or malformed message
never leaves a half-done session behind.
"""
import gc

from quillfw.wire import envelope
from quillfw.wire.errors import BUSY, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, OUT_OF_MEMORY, DeviceError

# Device states, as answered by ping.
IDLE = "idle"
BUSY_STATE = "busy"
AWAITING_USER = "awaiting_user"

# Parameter types a Method declares; checked before its handler runs.
UINT = "uint"
INT = "int"
BOOL = "bool"
TEXT = "text"
BYTES = "bytes"
MAP = "map"
ARRAY = "array"
ANY = "any"

SESSION = "session"


def _copies(value):
    """value with every memoryview in it replaced by a bytes copy."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        for i in range(len(value)):
            value[i] = _copies(value[i])
    elif isinstance(value, dict):
        for key in value:
            value[key] = _copies(value[key])
    return value


def _is_type(value, kind):
    if kind == ANY:
        return True
    if kind == BOOL:
        return value is True or value is False
    if kind in (UINT, INT):
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        return kind == INT or value >= 0
    if kind == TEXT:
        return isinstance(value, str)
    if kind == BYTES:
        # long byte strings arrive as views of the request's frame (quillfw.wire.cbor)
        return isinstance(value, (bytes, memoryview))
    if kind == MAP:
        return isinstance(value, dict)
    if kind == ARRAY:
        return isinstance(value, list)
    return False


class Method:
    """A protocol method.

    params: {name: (type, required)} (kept as a flat tuple: heap).
    handler(ctx, params) returns the result;
    ctx is the server (ctx.state, ctx.poll_link(), ctx.awaiting_user(), ctx.log()).
    out_of_band methods are cheap and read-only: they are answered even while
    another request is in progress. views: the handler takes byte strings longer
    than cbor.VIEW_ABOVE as memoryviews of the request's frame, valid until it
    returns (the signing methods: no copy of a large script); every other handler
    gets bytes.
    """

    def __init__(self, name, handler, params=None, out_of_band=False, views=False):
        self.name = name
        self.handler = handler
        # kept flat, (name, type, required, name, ...): a dict of tuples per method cost
        # the 64-bit emulator's heap ~125 bytes more per method, for good
        flat = []
        for key in params or ():
            flat.append(key)
            flat.extend(params[key])
        self.params = tuple(flat)
        self.out_of_band = out_of_band
        self.views = views

    def check_params(self, params):
        spec = self.params
        for key in params:
            # "session" (text) may name the signing session a request belongs to: the
            # signing methods check it; no table entry per method (heap)
            if key == SESSION and isinstance(params[key], str):
                continue
            for i in range(0, len(spec), 3):
                if spec[i] == key:
                    break
            else:
                raise DeviceError(INVALID_PARAMS, "Unknown parameter '%s'" % key)
        for i in range(0, len(spec), 3):
            key = spec[i]
            if key not in params:
                if spec[i + 2]:
                    raise DeviceError(INVALID_PARAMS, "Missing parameter '%s'" % key)
            elif not _is_type(params[key], spec[i + 1]):
                raise DeviceError(INVALID_PARAMS, "Parameter '%s' must be %s" % (key, spec[i + 1]))


class Dispatcher:
    def __init__(self):
        self.methods = {}
        self.script_types = []
        self.sighash_types = []
        self._reset_hooks = []
        self.info_hooks = []
        # the boot self-test's status, "ok" or "failed: <check>" (set by the board's
        # start-up, quillfw.board.info); None: never run, so nothing may sign
        self.selftest = None
        # random hex chosen at start-up (get_info's boot_id): a request naming
        # another one comes from before a restart
        self.boot_id = None
        # the link's frame buffers, allocated first at boot (quillfw.board.runtime)
        self.link_buffers = None

    def register(self, methods, script_types=(), sighash_types=(), reset=None, info=None):
        """Add methods (and what they can sign) to the table; info() returns
        fields that get_info adds to its answer."""
        for method in methods:
            if method.name in self.methods:
                raise ValueError("method registered twice: " + method.name)
            self.methods[method.name] = method
        for name in script_types:
            if name not in self.script_types:
                self.script_types.append(name)
        for value in sighash_types:
            if value not in self.sighash_types:
                self.sighash_types.append(value)
        if reset is not None:
            self._reset_hooks.append(reset)
        if info is not None:
            self.info_hooks.append(info)

    def method_names(self):
        return sorted(self.methods)

    def reset_session(self):
        for hook in self._reset_hooks:
            hook()

    def dispatch(self, ctx, request, busy=False):
        """The reply map for a decoded request; busy: another request is in progress."""
        rid = envelope.request_id(request)
        try:
            rid, name, params = envelope.parse_request(request)
            method = self.methods.get(name)
            if method is None:
                raise DeviceError(METHOD_NOT_FOUND, "Unknown method")
            if not method.views:
                params = _copies(params)
            method.check_params(params)
            if not method.out_of_band:
                if busy:
                    raise DeviceError(BUSY, "Device busy with another request")
                ctx.state = BUSY_STATE
            return envelope.result_reply(rid, method.handler(ctx, params))
        except DeviceError as e:
            return envelope.error_reply(rid, e.code, e.message, e.data)
        except MemoryError:
            gc.collect()
            return envelope.error_reply(rid, OUT_OF_MEMORY, "Out of memory")
        except Exception as e:  # a bug must cost one error reply, not the device
            # only the type name: exception texts might carry data from the session
            return envelope.error_reply(rid, INTERNAL_ERROR, "Internal error (%s)" % type(e).__name__)
