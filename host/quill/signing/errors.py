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


class SighashMismatch(SigningError):
    """A PSBT input asks for a sighash type other than the one being used (Core's
    PSBTError::SIGHASH_MISMATCH)."""

    def __init__(self, message: str = "Specified sighash value does not match value stored in PSBT") -> None:
        super().__init__(message)


class InputsMissing(SigningError):
    """A PSBT input's previous transaction lacks the output it spends (Core's PSBTError::MISSING_INPUTS)."""

    def __init__(self, message: str = "Inputs missing or spent") -> None:
        super().__init__(message)
