"""The signing pipeline's own failures, each with Core's (or Quill's) text; handlers/errors.py
gives each its RPC code. Device failures are quill.device.errors'."""


class SigningError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DeviceCannotSign(SigningError):
    """The device's get_info does not offer a method, script type or sighash type the transaction needs."""


class DeviceLimitExceeded(SigningError):
    """The transaction needs more inputs, outputs, keys or bytes than the device's get_info allows."""


class MissingAmount(SigningError):
    """A segwit input whose prevtxs entry gave no amount (Core throws this from SignTransaction)."""
