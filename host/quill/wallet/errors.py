"""The wallet's failures, each with Core's text; handlers/errors.py gives each its RPC code."""


class WalletError(Exception):
    """A wallet operation failed (Core's RPC_WALLET_ERROR)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WalletNotFound(WalletError):
    """No such wallet loaded, or no such wallet file (RPC_WALLET_NOT_FOUND)."""


class WalletNotSpecified(WalletError):
    """Several wallets are loaded and the request named none (RPC_WALLET_NOT_SPECIFIED)."""


class WalletAlreadyLoaded(WalletError):
    """loadwallet of a loaded wallet (RPC_WALLET_ALREADY_LOADED)."""


class WalletDataUnavailable(WalletError):
    """A block the wallet needs cannot be read from the chain (RPC_INTERNAL_ERROR in Core)."""


class BlockNotFound(WalletError):
    """A block hash the chain does not know (RPC_INVALID_ADDRESS_OR_KEY, "Block not found")."""


class RescanAborted(Exception):
    """A rescan stopped because abortrescan asked it to (Core: RPC_MISC_ERROR "Rescan aborted by user.")."""


class WalletSetupFailed(Exception):
    """Core's std::runtime_error while setting a new wallet up, e.g. an external signer's
    descriptors that do not parse (RPC_MISC_ERROR)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
