"""Blocks and block headers on the wire (Core's primitives/block.h).

    BlockHeader(version, prev_hash, merkle_root, time, bits, nonce)   80 bytes
    Block(header, txs)                                                header, CompactSize count, transactions
Hashes are bytes in internal order (quill.tx.hashes.hash_to_hex for display).
"""
import struct

from quill.tx.hashes import sha256d
from quill.tx.serialize import BufferReader, DeserializationError, compact_size
from quill.tx.transaction import Transaction

HEADER_SIZE = 80
_HEADER = struct.Struct("<I32s32sIII")
# The smallest transaction: version, two empty counts... bounds a hostile tx count.
_MIN_TX_SIZE = 10


class BlockHeader:
    __slots__ = ("version", "prev_hash", "merkle_root", "time", "bits", "nonce")

    def __init__(self, version, prev_hash, merkle_root, time, bits, nonce):
        self.version = version
        self.prev_hash = prev_hash
        self.merkle_root = merkle_root
        self.time = time
        self.bits = bits
        self.nonce = nonce

    def serialize(self) -> bytes:
        return _HEADER.pack(self.version, self.prev_hash, self.merkle_root, self.time, self.bits, self.nonce)

    def hash(self) -> bytes:
        return sha256d(self.serialize())

    @classmethod
    def from_bytes(cls, data: bytes) -> "BlockHeader":
        if len(data) != HEADER_SIZE:
            raise DeserializationError("block header must be 80 bytes")
        return cls(*_HEADER.unpack(data))

    @classmethod
    def read_from(cls, r: BufferReader) -> "BlockHeader":
        return cls(*_HEADER.unpack(r.read(HEADER_SIZE)))


class Block:
    __slots__ = ("header", "txs")

    def __init__(self, header: BlockHeader, txs=None):
        self.header = header
        self.txs = [] if txs is None else txs

    def hash(self) -> bytes:
        return self.header.hash()

    def indexed_txs(self):
        """(position, tx) of every transaction (chain.scan.SparseBlock gives only some)."""
        return enumerate(self.txs)

    def serialize(self, with_witness: bool = True) -> bytes:
        parts = [self.header.serialize(), compact_size(len(self.txs))]
        parts += [tx.serialize(with_witness) for tx in self.txs]
        return b"".join(parts)

    def size(self) -> int:
        return len(self.serialize(True))

    def stripped_size(self) -> int:
        return len(self.serialize(False))

    def weight(self) -> int:
        """BIP141 block weight: stripped size * 3 + total size."""
        return self.stripped_size() * 3 + self.size()

    def has_witness(self) -> bool:
        return any(tx.has_witness() for tx in self.txs)

    @classmethod
    def from_bytes(cls, data: bytes, allow_trailing: bool = False) -> "Block":
        """Parse a block with BIP144 transactions; DeserializationError on malformed data.

        Core's DecodeHexBlk ignores bytes after the block; `allow_trailing` does the same.
        """
        r = BufferReader(data)
        header = BlockHeader.read_from(r)
        count = r.compact_size()
        if count * _MIN_TX_SIZE > r.remaining():
            raise DeserializationError("transaction count larger than the data")
        txs = [Transaction.read_from(r, allow_witness=True) for _ in range(count)]
        if r.remaining() and not allow_trailing:
            raise DeserializationError("trailing bytes after block")
        return cls(header, txs)
