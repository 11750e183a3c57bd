"""Unspent outputs ("coins") and the undo record of a connected block (Core's coins.h, undo.h)."""
import struct

from quill.tx.serialize import BufferReader, var_bytes

_COIN = struct.Struct("<qIB")


class Coin:
    """An unspent output with the height of its block and whether a coinbase made it."""

    __slots__ = ("value", "script_pubkey", "height", "coinbase")

    def __init__(self, value: int, script_pubkey: bytes, height: int, coinbase: bool):
        self.value = value
        self.script_pubkey = script_pubkey
        self.height = height
        self.coinbase = coinbase

    def __eq__(self, other):
        return (isinstance(other, Coin) and self.value == other.value and self.script_pubkey == other.script_pubkey
                and self.height == other.height and self.coinbase == other.coinbase)

    def __repr__(self):
        return f"Coin({self.value}, {self.script_pubkey.hex()}, height={self.height}, coinbase={self.coinbase})"


def serialize_undo(spent) -> bytes:
    """The coins a block spent, in the order its inputs spent them."""
    return b"".join(_COIN.pack(c.value, c.height, c.coinbase) + var_bytes(c.script_pubkey) for c in spent)


def deserialize_undo(data: bytes):
    r = BufferReader(data)
    out = []
    while r.remaining():
        value, height, coinbase = _COIN.unpack(r.read(_COIN.size))
        out.append(Coin(value, r.var_bytes(), height, bool(coinbase)))
    return out
