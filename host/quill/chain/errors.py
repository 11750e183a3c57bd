"""The chain's failures. handlers/errors.py gives each its RPC code; the chain never names one."""


class ChainUnavailable(Exception):
    """The operation needs the built-in chain (or a chain at all) and this node has none."""


class AlreadyInUtxoSet(Exception):
    """broadcast_transaction: outputs of this txid are unspent in the chain."""


class FeeExceeded(Exception):
    """broadcast_transaction: the fee is above the caller's maximum."""


class UpstreamError(Exception):
    """The upstream node (-chainsource) could not be reached or answered something unusable."""


class UpstreamRejected(UpstreamError):
    """The upstream node answered with a JSON-RPC error: its code and message, passed on as they are."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ChainSourceUnavailable(UpstreamError):
    """A call that must reach the upstream node (relaying a transaction) could not."""


class BadHeader(UpstreamError):
    """The upstream node sent a header that fails proof of work, difficulty or linkage."""


class FeeAboveMaximum(UpstreamError):
    """Relaying: the upstream node computed a fee above the caller's maximum."""
