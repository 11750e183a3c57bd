"""A satoshi amount as Core shows it: ValueFromAmount's fixed 8 decimals (core_io.cpp), never a float.

Domain code returns Amount values inside the JSON-shaped results it builds; the RPC layer's JSON
writer (quill.rpc.univalue) prints them as bare numbers.
"""
from quill.consensus import COIN


def format_amount(sats: int) -> str:
    """ValueFromAmount's text: `-0.00000001`, `21000000.00000000`."""
    sign = "-" if sats < 0 else ""
    whole, frac = divmod(abs(sats), COIN)
    return "%s%d.%08d" % (sign, whole, frac)


class Amount:
    """A satoshi amount rendered as Core's ValueFromAmount: `-0.00000001`."""

    __slots__ = ("sats",)

    def __init__(self, sats: int):
        self.sats = sats

    @property
    def text(self) -> str:
        return format_amount(self.sats)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Amount) and other.sats == self.sats

    def __hash__(self) -> int:
        return hash(self.sats)

    def __repr__(self) -> str:
        return f"Amount({self.text})"
