"""The one boundary where domain failures become Core's RPC errors.

Domain packages (tx, signing, chain, wallet, device) raise their own exceptions and never name an
RPC code. Each handler is registered through `with_error_boundary`, which maps what escapes it with
the tables below, one per domain: an exception's class (or its nearest listed base) gives the code,
and its text is the message. A handler that needs a different message for one call catches the
domain error itself and raises RPCError.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from quill import atomic_store
from quill.chain import errors as chain
from quill.device import errors as device
from quill.extsigner import errors as extsigner
from quill.rpc import errors as rpc
from quill.rpc.errors import RPCError
from quill.rpc.registry import Method
from quill.signing import errors as signing
from quill.wallet import errors as wallet
from quillfw.wire import errors as wire

WALLET_ERRORS: dict[type[Exception], int] = {
    wallet.WalletNotFound: rpc.RPC_WALLET_NOT_FOUND,
    wallet.WalletNotSpecified: rpc.RPC_WALLET_NOT_SPECIFIED,
    wallet.WalletAlreadyLoaded: rpc.RPC_WALLET_ALREADY_LOADED,
    wallet.BlockNotFound: rpc.RPC_INVALID_ADDRESS_OR_KEY,
    wallet.WalletDataUnavailable: rpc.RPC_INTERNAL_ERROR,
    wallet.WalletError: rpc.RPC_WALLET_ERROR,
    wallet.RescanAborted: rpc.RPC_MISC_ERROR,
    wallet.WalletSetupFailed: rpc.RPC_MISC_ERROR,
}

# Core's runtime errors from running the -signer command are RPC_MISC_ERROR; the wallet's
# PSBTError::EXTERNAL_SIGNER_NOT_FOUND / _FAILED are RPC_TRANSACTION_ERROR (JSONRPCPSBTError).
EXTERNAL_SIGNER_ERRORS: dict[type[Exception], int] = {
    extsigner.ExternalSignerError: rpc.RPC_MISC_ERROR,
    extsigner.SignerNotFound: rpc.RPC_VERIFY_ERROR,
    extsigner.SignerFailed: rpc.RPC_VERIFY_ERROR,
}

CHAIN_ERRORS: dict[type[Exception], int] = {
    chain.ChainUnavailable: rpc.RPC_MISC_ERROR,
    chain.ChainSourceUnavailable: rpc.RPC_CLIENT_NOT_CONNECTED,
    chain.UpstreamError: rpc.RPC_CLIENT_NOT_CONNECTED,     # the upstream node went away mid-call
}

SIGNING_ERRORS: dict[type[Exception], int] = {
    signing.DeviceCannotSign: rpc.RPC_MISC_ERROR,
    signing.DeviceLimitExceeded: rpc.RPC_INVALID_PARAMETER,
    signing.MissingAmount: rpc.RPC_TYPE_ERROR,
    signing.SighashMismatch: rpc.RPC_DESERIALIZATION_ERROR,
    signing.InputsMissing: rpc.RPC_VERIFY_ERROR,          # Core names it RPC_TRANSACTION_ERROR too
}

DEVICE_ERRORS: dict[type[Exception], int] = {
    device.DeviceUnavailable: rpc.RPC_MISC_ERROR,
}
# An error reply from the device: its protocol code (quillfw.errors) gives the RPC code.
DEVICE_REPLY_CODES: dict[int, int] = {
    wire.INVALID_PARAMS: rpc.RPC_INVALID_PARAMETER,
    wire.NETWORK_MISMATCH: rpc.RPC_INVALID_PARAMETER,
    wire.LIMIT_EXCEEDED: rpc.RPC_INVALID_PARAMETER,
    wire.LOCKED: rpc.RPC_WALLET_UNLOCK_NEEDED,
    wire.OUT_OF_MEMORY: rpc.RPC_OUT_OF_MEMORY,
}
# The user's answer on the device (SPEC.md §8): a refusal or no answer in time is the wallet's
# signing failing (Core's RPC_WALLET_ERROR), told in the device's own words.
_USER_ANSWERS = (wire.USER_CANCELLED, wire.CONFIRM_TIMEOUT)

# A write the disk refused (quill.atomic_store), told with its cause and file: Core's
# RPC_DATABASE_ERROR.
STORE_ERRORS: dict[type[Exception], int] = {
    atomic_store.StoreWriteFailed: rpc.RPC_DATABASE_ERROR,
}

_TABLES = (STORE_ERRORS, WALLET_ERRORS, CHAIN_ERRORS, SIGNING_ERRORS, DEVICE_ERRORS, EXTERNAL_SIGNER_ERRORS)


def _message(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or exc)


def to_rpc_error(exc: Exception) -> RPCError | None:
    """The RPCError for a domain failure, or None for anything else (a bug: the dispatcher
    answers it with Core's 'Internal bug detected' form and logs its traceback)."""
    if isinstance(exc, RPCError):
        return exc
    if isinstance(exc, device.DeviceError):
        if exc.code in _USER_ANSWERS:
            return RPCError(rpc.RPC_WALLET_ERROR, exc.message)
        return RPCError(DEVICE_REPLY_CODES.get(exc.code, rpc.RPC_MISC_ERROR), f"Device error: {exc.message}")
    if isinstance(exc, chain.UpstreamRejected):
        return RPCError(exc.code, exc.message)        # the user's own node answered: its words
    for table in _TABLES:
        for cls in type(exc).__mro__:
            if cls in table:
                return RPCError(table[cls], _message(exc))
    return None


def with_error_boundary(handler: Callable[[Any, list], Any]) -> Callable[[Any, list], Any]:
    """The handler, with domain failures mapped to RPC errors as they leave it."""
    @functools.wraps(handler)
    def guarded(ctx: Any, args: list) -> Any:
        try:
            return handler(ctx, args)
        except RPCError:
            raise
        except Exception as exc:
            mapped = to_rpc_error(exc)
            if mapped is None:
                raise
            raise mapped from None
    return guarded


def guarded_methods(methods: Sequence[Method]) -> list[Method]:
    """A handler module's METHODS, each handler behind the error boundary."""
    return [dataclasses.replace(m, handler=with_error_boundary(m.handler)) for m in methods]
