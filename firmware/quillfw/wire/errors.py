"""The protocol's one error-code table (protocol/SPEC.md §4): JSON-RPC codes
plus the device range -32000..-32099 (Jade's assignments for -32000..-32003).

Messages are short, fixed English text plus counts or names the host sent;
they never carry key material, nonces or exception texts from crypto code.
"""
from quillfw.compat import const

# JSON-RPC 2.0
PARSE_ERROR = const(-32700)        # the body is not canonical CBOR
INVALID_REQUEST = const(-32600)    # framing rejects; not a valid request envelope
METHOD_NOT_FOUND = const(-32601)
INVALID_PARAMS = const(-32602)
INTERNAL_ERROR = const(-32603)

# device range
USER_CANCELLED = const(-32000)     # the user declined on the device
PROTOCOL_ERROR = const(-32001)     # a message out of sequence for the session
LOCKED = const(-32002)             # the device needs unlocking first
NETWORK_MISMATCH = const(-32003)
BUSY = const(-32004)               # another request is in progress
OUT_OF_MEMORY = const(-32005)      # allocation failed; the device keeps serving
LIMIT_EXCEEDED = const(-32006)     # a limit declared in get_info was exceeded
CONFIRM_TIMEOUT = const(-32007)    # the user did not answer on the device in time
STALE_SESSION = const(-32008)      # a request of a previous boot or signing session

# The id of replies to requests whose own id could not be read.
RESERVED_ID = "00"


class DeviceError(Exception):
    """An error reply: raised anywhere in the firmware, encoded once by the dispatcher."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
