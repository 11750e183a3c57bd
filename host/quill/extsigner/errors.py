"""The external signer's failures, in Core's words. handlers/errors.py maps them to RPC codes."""
from __future__ import annotations


class ExternalSignerError(Exception):
    """Core's std::runtime_error from running or reading the signer (RPC_MISC_ERROR)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NoSingleSigner(ExternalSignerError):
    """GetExternalSigner's own failures: no -signer, no signer, or several (RPC_MISC_ERROR)."""


class SignRefused(ExternalSignerError):
    """SignTransaction's own failures (the signer answered, but with no usable PSBT)."""


class SignerNotFound(ExternalSignerError):
    """Core's PSBTError::EXTERNAL_SIGNER_NOT_FOUND: no single signer to sign with."""

    def __init__(self) -> None:
        super().__init__("External signer not found")


class SignerFailed(ExternalSignerError):
    """Core's PSBTError::EXTERNAL_SIGNER_FAILED: the signer did not sign (its reason is logged)."""

    def __init__(self) -> None:
        super().__init__("External signer failed to sign")


class DisplayAddressError(ExternalSignerError):
    """walletdisplayaddress's util::Error (RPC_MISC_ERROR)."""
