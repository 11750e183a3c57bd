"""One pass over a stored block's bytes that builds no transaction objects.

getblock at verbosity 1 needs each transaction's txid, the transaction count and the block's sizes
(Core's blockToJSON with TxVerbosity::SHOW_TXID), and its coinbase. Parsing all of a block into
Transaction objects costs far more than that: here each transaction is walked once, its
non-witness serialization (BIP144: version, inputs, outputs, locktime, without the marker, flag and
witnesses) hashed from slices of the block, and its witness skipped.

The block must be one the chain accepted (it is read from Quill's own store): the walk checks no
limits beyond what reading needs, and malformed bytes raise DeserializationError.
"""
from __future__ import annotations

from dataclasses import dataclass
from hashlib import sha256

from quill.tx.serialize import DeserializationError

HEADER_SIZE = 80


@dataclass(frozen=True)
class BlockScan:
    txids: list[bytes]          # internal byte order
    size: int                   # with witnesses
    stripped_size: int          # without (BIP141)
    first_tx: int               # where the coinbase transaction starts

    @property
    def weight(self) -> int:
        """BIP141 block weight: stripped size * 3 + total size."""
        return self.stripped_size * 3 + self.size


def _compact_size(data: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the CompactSize at `pos`."""
    first = data[pos]
    if first < 0xFD:
        return first, pos + 1
    width = 2 if first == 0xFD else 4 if first == 0xFE else 8
    return int.from_bytes(data[pos + 1:pos + 1 + width], "little"), pos + 1 + width


def first_tx_offset(raw: bytes) -> int:
    """Where a serialized block's first transaction starts: after the header and the count."""
    return _compact_size(raw, HEADER_SIZE)[1]


def scan_block(raw: bytes) -> BlockScan:
    try:
        return _scan(raw)
    except IndexError:
        raise DeserializationError("block data ends inside a transaction") from None


def _scan(raw: bytes) -> BlockScan:
    view = memoryview(raw)
    count, pos = _compact_size(raw, HEADER_SIZE)
    first_tx = pos
    stripped = pos
    txids: list[bytes] = []
    append = txids.append
    for _ in range(count):
        start = pos
        pos += 4
        # BIP144: a zero marker where the input count would be, then a non-zero flag
        segwit = raw[pos] == 0 and raw[pos + 1] != 0
        if segwit:
            pos += 2
        body = pos
        n_in = raw[pos]
        if n_in < 0xFD:
            pos += 1
        else:
            n_in, pos = _compact_size(raw, pos)
        for _ in range(n_in):
            pos += 36                       # outpoint
            length = raw[pos]
            pos += (1 + length) if length < 0xFD else _skip_long(raw, pos)
            pos += 4                        # sequence
        n_out = raw[pos]
        if n_out < 0xFD:
            pos += 1
        else:
            n_out, pos = _compact_size(raw, pos)
        for _ in range(n_out):
            pos += 8                        # value
            length = raw[pos]
            pos += (1 + length) if length < 0xFD else _skip_long(raw, pos)
        body_end = pos
        if segwit:
            for _ in range(n_in):
                items, pos = _compact_size(raw, pos)
                for _ in range(items):
                    length = raw[pos]
                    pos += (1 + length) if length < 0xFD else _skip_long(raw, pos)
            h = sha256(view[start:start + 4])
            h.update(view[body:body_end])
            h.update(view[pos:pos + 4])
            stripped += body_end - body + 8
        else:
            h = sha256(view[start:pos + 4])
            stripped += pos + 4 - start
        pos += 4
        if pos > len(raw):
            raise IndexError
        append(sha256(h.digest()).digest())
    if pos != len(raw):
        raise DeserializationError("trailing bytes after block")
    return BlockScan(txids, len(raw), stripped, first_tx)


def _skip_long(raw: bytes, pos: int) -> int:
    """The length of a CompactSize of 3 bytes or more at `pos` plus the bytes it counts."""
    length, after = _compact_size(raw, pos)
    return after - pos + length
