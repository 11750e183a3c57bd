"""BIP158 basic block filters and BIP157 filter headers (Core's blockfilter.cpp).

    basic_filter(block, spent_scripts)   the filter bytes: CompactSize(N) || Golomb-Rice set
    filter_header(filter, prev_header)   double-SHA256(filter hash || previous header)

A block's elements are its output scripts (except empty and OP_RETURN ones) and the scripts
of the outputs it spends, each once.
"""
from __future__ import annotations

import struct
from typing import Any

from quill.tx.hashes import sha256d
from quill.tx.serialize import compact_size

BASIC_P = 19
BASIC_M = 784931
OP_RETURN = 0x6A
_MASK64 = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK64


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 with the 128-bit key (k0, k1)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(n: int) -> None:
        nonlocal v0, v1, v2, v3
        for _ in range(n):
            v0 = (v0 + v1) & _MASK64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)

    tail = len(data) % 8
    for (m,) in struct.iter_unpack("<Q", data[:len(data) - tail]):
        v3 ^= m
        rounds(2)
        v0 ^= m
    last = (len(data) & 0xFF) << 56 | int.from_bytes(data[len(data) - tail:], "little")
    v3 ^= last
    rounds(2)
    v0 ^= last
    v2 ^= 0xFF
    rounds(4)
    return v0 ^ v1 ^ v2 ^ v3


class _BitWriter:
    """Bits written most significant first, as Core's BitStreamWriter."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.count = 0

    def write(self, value: int, nbits: int) -> None:
        self.acc = (self.acc << nbits) | (value & ((1 << nbits) - 1))
        self.count += nbits
        while self.count >= 8:
            self.count -= 8
            self.out.append((self.acc >> self.count) & 0xFF)
        self.acc &= (1 << self.count) - 1

    def flush(self) -> bytes:
        if self.count:
            self.out.append((self.acc << (8 - self.count)) & 0xFF)
            self.acc = self.count = 0
        return bytes(self.out)


def elements(block: Any, spent_scripts: list[bytes]) -> set[bytes]:
    """Core's BasicFilterElements."""
    found = {out.script_pubkey for tx in block.txs for out in tx.vout
             if out.script_pubkey and out.script_pubkey[0] != OP_RETURN}
    found.update(script for script in spent_scripts if script)
    return found


def basic_filter(block_hash: bytes, items: set[bytes]) -> bytes:
    """The GCS filter of `items` keyed by the block hash (internal byte order)."""
    n = len(items)
    k0, k1 = struct.unpack_from("<QQ", block_hash)
    f = n * BASIC_M
    values = sorted((siphash24(k0, k1, item) * f) >> 64 for item in items)
    writer = _BitWriter()
    last = 0
    for value in values:
        delta = value - last
        last = value
        q = delta >> BASIC_P
        for _ in range(q):
            writer.write(1, 1)
        writer.write(0, 1)
        writer.write(delta, BASIC_P)
    return compact_size(n) + writer.flush()


def filter_header(filter_bytes: bytes, prev_header: bytes) -> bytes:
    """BIP157: double-SHA256 of the filter's hash and the previous header (internal order)."""
    return sha256d(sha256d(filter_bytes) + prev_header)


class FilterIndex:
    """Basic filters and headers of the active chain, computed on demand and remembered
    (Core keeps them in -blockfilterindex). `chain` is a ChainService; call under its lock."""

    def __init__(self, chain: Any) -> None:
        self.chain = chain
        self.headers: dict[bytes, bytes] = {}

    def filter_of(self, block_hash: bytes) -> bytes:
        block = self.chain.block(block_hash)
        spent = self.chain.block_undo(block_hash) or []
        return basic_filter(block_hash, elements(block, [coin.script_pubkey for coin in spent]))

    def header_of(self, height: int) -> bytes:
        """The filter header at `height` of the active chain (headers below it computed once)."""
        start = height
        while start > 0 and self.chain.block_hash(start - 1) not in self.headers:
            start -= 1
        prev = bytes(32) if start == 0 else self.headers[self.chain.block_hash(start - 1)]
        for h in range(start, height + 1):
            block_hash = self.chain.block_hash(h)
            header = self.headers.get(block_hash)
            if header is None:
                header = self.headers[block_hash] = filter_header(self.filter_of(block_hash), prev)
            prev = header
        return prev
