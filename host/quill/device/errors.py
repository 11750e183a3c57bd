"""Device failures.

DeviceError is an error reply from the device (code from the protocol's table,
quillfw.wire.errors); DeviceUnavailable is everything on the host side of the link
(no device configured, port cannot be opened, disconnected, no answer).
handlers/errors.py is the only place where either becomes an RPC error.
"""


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


class DeviceRestarted(DeviceUnavailable):
    """The firmware started again (a new boot_id) while a call was in flight."""

    def __init__(self, message="Device restarted during signing", before_session=False):
        super().__init__(message)
        # the restart came before this call's session began (between two calls):
        # nothing of it reached the firmware, so it may simply be made again
        self.before_session = before_session
