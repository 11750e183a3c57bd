"""BIP158 basic block filters and BIP157 filter headers (Core's blockfilter.cpp).

    basic_filter(block, spent_scripts)   the filter bytes: CompactSize(N) || Golomb-Rice set
    filter_header(filter, prev_header)   double-SHA256(filter hash || previous header)
    decode_filter(filter)                the N sorted values of the set (Golomb-Rice decoding)
    FilterQuery(scripts).match_any(block_hash, filter)   does any script match? (Core's MatchAny)

A block's elements are its output scripts (except empty and OP_RETURN ones) and the scripts
of the outputs it spends, each once. Each element is hashed to a value in [0, N * M):
SipHash-2-4 keyed by the block hash's first 16 bytes, multiplied by N * M, top 64 bits. The
sorted values are written as their differences, each as a Golomb-Rice code with parameter P:
the quotient (difference >> P) in unary (ones, then a zero) and the remainder in P bits.
"""
from __future__ import annotations

import struct
from array import array
from typing import Any

from quill.tx.hashes import sha256d
from quill.tx.serialize import BufferReader, DeserializationError, compact_size

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


def decode_filter(filter_bytes: bytes) -> list[int]:
    """The sorted values of a basic filter (Core's GCSFilter constructor, which decodes it whole).
    DeserializationError when it is truncated or has bytes past its N codes."""
    reader = BufferReader(filter_bytes)
    n = reader.compact_size()
    data = filter_bytes[reader.pos:]
    if n == 0:
        return []
    # The bit stream as text ("0"/"1", most significant bit first): str.find locates each
    # unary terminator and int(..., 2) reads each remainder, both in C.
    bits = bin(int.from_bytes(data, "big") | 1 << (8 * len(data)))[3:]
    values = []
    value = pos = 0
    find = bits.find
    for _ in range(n):
        stop = find("0", pos)
        end = stop + 1 + BASIC_P
        if stop < 0 or end > len(bits):
            raise DeserializationError("block filter ends inside a code")
        value += (stop - pos) << BASIC_P | int(bits[stop + 1:end], 2)
        values.append(value)
        pos = end
    if len(bits) - pos >= 8:
        raise DeserializationError("block filter has bytes after its codes")
    return values


class FilterQuery:
    """A set of scripts to match against many blocks' basic filters (Core's GCSFilter::MatchAny).

    Per block, every script is hashed with the block's key. To do that at C speed in Python, the
    scripts' SipHash states are packed side by side into one big integer per state word, a lane of
    LANE bits per script (64 bits of value, 64 of room for carries, rotated-out bits and the range
    product), so each step of SipHash is a handful of big-integer operations for all scripts at once
    (SWAR). Scripts are grouped by their number of message words (the packed rounds must agree),
    LANES to an integer."""

    def __init__(self, scripts: Any) -> None:
        by_words: dict[int, list[tuple[int, ...]]] = {}
        for script in scripts:
            words = _message_words(script)
            by_words.setdefault(len(words), []).append(words)
        self.size = sum(len(rows) for rows in by_words.values())
        self.groups = []
        for n_words, rows in by_words.items():
            for i in range(0, len(rows), LANES):
                part = rows[i:i + LANES]
                ones = _pack([1] * len(part))
                self.groups.append((len(part), ones, ones * _MASK64,
                                    [_pack([row[j] for row in part]) for j in range(n_words)]))

    def hashed(self, block_hash: bytes, n: int) -> list[int]:
        """The scripts' values in a block whose filter holds `n` elements (grouped, not in given order)."""
        k0, k1 = struct.unpack_from("<QQ", block_hash)
        f = n * BASIC_M
        out: list[int] = []
        for count, ones, mask, words in self.groups:
            h = _siphash_packed(k0, k1, ones, mask, words)
            ranged = ((h * f) >> 64) & mask
            lanes = array("Q", ranged.to_bytes(count * LANE // 8, "little"))
            out.extend(lanes[::2])
        return out

    def match_any(self, block_hash: bytes, filter_bytes: bytes) -> bool:
        values = decode_filter(filter_bytes)
        if not values or not self.size:
            return False
        return not set(values).isdisjoint(self.hashed(block_hash, len(values)))


LANE = 128
LANES = 4096        # lanes per packed integer (64 KB): larger ones cost more per lane (allocation, cache)


def _pack(values: list[int]) -> int:
    """`values` (each < 2**64) as one integer, value i at bit LANE * i."""
    return int.from_bytes(b"".join(v.to_bytes(LANE // 8, "little") for v in values), "little")


def _message_words(data: bytes) -> tuple[int, ...]:
    """SipHash's 64-bit message words of `data`, the last one carrying the length (byte 7)."""
    tail = len(data) % 8
    words = [m for (m,) in struct.iter_unpack("<Q", data[:len(data) - tail])]
    words.append((len(data) & 0xFF) << 56 | int.from_bytes(data[len(data) - tail:], "little"))
    return tuple(words)


def _siphash_packed(k0: int, k1: int, ones: int, mask: int, words: list[int]) -> int:
    """SipHash-2-4 in every lane at once (see FilterQuery): `words` are the packed message words,
    `ones` has 1 in each lane, `mask` 2**64 - 1 in each lane. A rotation is (x << r | x >> 64 - r)
    masked: what leaves a lane's 64 bits lands in the room above it or above the lane below, and
    the mask drops it; a sum's carry lands in that room too."""
    v0 = (k0 ^ 0x736F6D6570736575) * ones
    v1 = (k1 ^ 0x646F72616E646F6D) * ones
    v2 = (k0 ^ 0x6C7967656E657261) * ones
    v3 = (k1 ^ 0x7465646279746573) * ones
    rounds = [2] * len(words) + [4]
    for i, n in enumerate(rounds):
        if i < len(words):
            v3 ^= words[i]
        else:
            v2 ^= 0xFF * ones
        for _ in range(n):
            v0 = (v0 + v1) & mask
            v1 = ((v1 << 13 | v1 >> 51) & mask) ^ v0
            v0 = (v0 << 32 | v0 >> 32) & mask
            v2 = (v2 + v3) & mask
            v3 = ((v3 << 16 | v3 >> 48) & mask) ^ v2
            v0 = (v0 + v3) & mask
            v3 = ((v3 << 21 | v3 >> 43) & mask) ^ v0
            v2 = (v2 + v1) & mask
            v1 = ((v1 << 17 | v1 >> 47) & mask) ^ v2
            v2 = (v2 << 32 | v2 >> 32) & mask
        if i < len(words):
            v0 ^= words[i]
    return v0 ^ v1 ^ v2 ^ v3


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
