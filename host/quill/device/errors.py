"""Device failures, and their one mapping to Core-style RPC errors.

DeviceError is an error reply from the device (code from the protocol's table,
quillfw.wire.errors); DeviceUnavailable is everything on the host side of the link
(no device configured, port cannot be opened, disconnected, no answer).
to_rpc_error() is the only place where either becomes an RPCError.
"""
from quill.errors import (
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_OUT_OF_MEMORY,
    RPC_WALLET_ERROR,
    RPC_WALLET_UNLOCK_NEEDED,
    RPCError,
)
from quillfw.wire import errors as wire


class DeviceError(Exception):
    """An error reply {code, message, data?} from the device."""

    def __init__(self, code, message, data=None):
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class DeviceUnavailable(Exception):
    """The device cannot be reached or did not answer; the message says which."""


class DeviceTimeout(DeviceUnavailable):
    pass


class DeviceDisconnected(DeviceUnavailable):
    pass


_RPC_CODE = {
    wire.INVALID_PARAMS: RPC_INVALID_PARAMETER,
    wire.NETWORK_MISMATCH: RPC_INVALID_PARAMETER,
    wire.LIMIT_EXCEEDED: RPC_INVALID_PARAMETER,
    wire.LOCKED: RPC_WALLET_UNLOCK_NEEDED,
    wire.OUT_OF_MEMORY: RPC_OUT_OF_MEMORY,
}
# The user's answer on the device (quillfw.signing.confirm): a refusal or no answer in time
# is the wallet's signing failing (Core's RPC_WALLET_ERROR), told in the device's
# own words: "Signing refused on the device", "Confirmation timed out on the device".
_USER_ANSWERS = (wire.USER_CANCELLED, wire.CONFIRM_TIMEOUT)


def to_rpc_error(exc: Exception) -> RPCError:
    """The RPCError the JSON-RPC layer reports for a device failure."""
    if isinstance(exc, DeviceError) and exc.code in _USER_ANSWERS:
        return RPCError(RPC_WALLET_ERROR, exc.message)
    if isinstance(exc, DeviceError):
        return RPCError(_RPC_CODE.get(exc.code, RPC_MISC_ERROR), f"Device error: {exc.message}")
    if isinstance(exc, DeviceUnavailable):
        return RPCError(RPC_MISC_ERROR, str(exc))
    raise TypeError(f"not a device failure: {type(exc).__name__}")
