"""Reading a raw block for a few wallets without decoding all of it.

A mainnet block holds ~3,000 transactions, of which a wallet needs a handful. `scan_block` walks
the serialized block (BIP144 layout: version, [marker, flag], inputs, outputs, [witnesses],
locktime) and only looks at two things per transaction: each input's outpoint (36 bytes: txid,
index) against the outpoints the wallets own or spend, and each output's script against the
scripts they watch. Only the transactions that match are decoded (Transaction.from_bytes); their
own outputs to a watched script and their inputs are added to the outpoints looked for, so a
later transaction of the same block spending them is found too.

The result is a SparseBlock: the header, the block's transaction count, and (index, tx) of the
matching transactions, which is what a wallet's block_connected needs.
"""
from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any

from quill.tx.serialize import DeserializationError
from quill.tx.transaction import Transaction

from .block import HEADER_SIZE, BlockHeader


def outpoint_key(txid: bytes, n: int) -> bytes:
    """An outpoint as serialized in a transaction input: txid (internal order), index (uint32 LE)."""
    return txid + n.to_bytes(4, "little")


class SparseBlock:
    """A block of which only some transactions were decoded (`indexed`: (position, tx))."""
    __slots__ = ("header", "n_tx", "indexed", "_hash")

    def __init__(self, header: BlockHeader, n_tx: int, indexed: list[tuple[int, Transaction]]) -> None:
        self.header = header
        self.n_tx = n_tx
        self.indexed = indexed
        self._hash: bytes | None = None

    def hash(self) -> bytes:
        if self._hash is None:
            self._hash = self.header.hash()
        return self._hash

    @property
    def txs(self) -> list[Transaction]:
        return [tx for _, tx in self.indexed]

    def indexed_txs(self) -> Iterable[tuple[int, Transaction]]:
        return self.indexed


class AnyOf:
    """Membership in any of several sets (several wallets), without building their union."""
    __slots__ = ("sets",)

    def __init__(self, sets: list[Container[Any]]) -> None:
        self.sets = sets

    def __contains__(self, item: object) -> bool:
        return any(item in s for s in self.sets)


def _varint(data: bytes, p: int) -> tuple[int, int]:
    b = data[p]
    if b < 0xFD:
        return b, p + 1
    if b == 0xFD:
        return data[p + 1] | data[p + 2] << 8, p + 3
    if b == 0xFE:
        return int.from_bytes(data[p + 1:p + 5], "little"), p + 5
    return int.from_bytes(data[p + 1:p + 9], "little"), p + 9


def block_count(raw: bytes) -> int:
    """The number of transactions of serialized block `raw`."""
    return _varint(raw, HEADER_SIZE)[0]


def scan_block(raw: bytes, scripts: Container[bytes], outpoints: Container[bytes]) -> SparseBlock:
    """The transactions of serialized block `raw` that pay one of `scripts` or spend one of
    `outpoints` (36-byte keys, see outpoint_key). DeserializationError on a malformed block."""
    try:
        return _scan(raw, scripts, outpoints)
    except (IndexError, ValueError) as e:
        raise DeserializationError(f"malformed block: {e}") from None


def _scan(raw: bytes, scripts: Container[bytes], outpoints: Container[bytes]) -> SparseBlock:  # noqa: C901 (one pass over BIP144)
    # The hot loop of following a chain: every input and output of every transaction passes here.
    # CompactSize lengths below 0xFD (almost all of them) are read inline; _varint does the rest.
    header = BlockHeader.from_bytes(raw[:HEADER_SIZE])
    count, p = _varint(raw, HEADER_SIZE)
    found: list[tuple[int, Transaction]] = []
    ours: set[bytes] = set()            # outpoints created or spent by matches in this block
    varint = _varint
    for index in range(count):
        start = p
        p += 4
        segwit = raw[p] == 0
        if segwit:
            p += 2
        n_in = raw[p]
        if n_in < 0xFD:
            p += 1
        else:
            n_in, p = varint(raw, p)
        hit = False
        for _ in range(n_in):
            if not hit:
                key = raw[p:p + 36]
                hit = key in outpoints or key in ours
            size = raw[p + 36]
            if size < 0xFD:
                p += size + 41
            else:
                size, p = varint(raw, p + 36)
                p += size + 4
        n_out = raw[p]
        if n_out < 0xFD:
            p += 1
        else:
            n_out, p = varint(raw, p)
        for _ in range(n_out):
            size = raw[p + 8]
            if size < 0xFD:
                p += 9
            else:
                size, p = varint(raw, p + 8)
            if not hit and raw[p:p + size] in scripts:
                hit = True
            p += size
        if segwit:
            for _ in range(n_in):
                items = raw[p]
                if items < 0xFD:
                    p += 1
                else:
                    items, p = varint(raw, p)
                for _ in range(items):
                    size = raw[p]
                    if size < 0xFD:
                        p += size + 1
                    else:
                        size, p = varint(raw, p)
                        p += size
        p += 4
        if p > len(raw):
            raise DeserializationError("block ends inside a transaction")
        if hit:
            tx = Transaction.from_bytes(raw[start:p])
            found.append((index, tx))
            txid = tx.txid()
            for n, out in enumerate(tx.vout):
                if out.script_pubkey in scripts:
                    ours.add(outpoint_key(txid, n))
            for txin in tx.vin:
                ours.add(outpoint_key(txin.prevout.hash, txin.prevout.n))
    if p != len(raw):
        raise DeserializationError("trailing bytes after block")
    return SparseBlock(header, count, found)
