"""quill-signer's failures, with HWI's error codes (hwilib.errors): printed as
{"error": ..., "code": ...} with exit status 1, as HWI does."""
from __future__ import annotations

NO_DEVICE_TYPE = -3
DEVICE_CONN_ERROR = -6
DEVICE_NOT_READY = -7
BAD_ARGUMENT = -8
UNKNOWN_ERROR = -13


class SignerError(Exception):
    def __init__(self, message: str, code: int = UNKNOWN_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
