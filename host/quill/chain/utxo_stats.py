"""UTXO set statistics and hashes (Core's kernel/coinstats.cpp, crypto/muhash.cpp):
gettxoutsetinfo's txouts, bogosize, total amount, transaction count, and the set's
hash_serialized_3 (double SHA256 over every coin) or MuHash3072 digest.
"""
from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from quill.tx.serialize import compact_size

HASH_SERIALIZED = "hash_serialized_3"
MUHASH = "muhash"
NONE = "none"

MUHASH_PRIME = 2 ** 3072 - 1103717


@dataclass
class UtxoStats:
    txouts: int = 0
    bogosize: int = 0
    total_amount: int = 0
    transactions: int = 0
    digest: bytes | None = None   # internal byte order; None for hash type "none"


def _coin_bytes(txid: bytes, n: int, value: int, script: bytes, height: int, coinbase: bool) -> bytes:
    """Core's TxOutSer: outpoint, height*2 + coinbase, the output."""
    return (txid + struct.pack("<II", n, (height << 1) + int(coinbase)) + struct.pack("<q", value)
            + compact_size(len(script)) + script)


def _quarter_round(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] ^= s[a]
    s[d] = ((s[d] << 16) | (s[d] >> 16)) & 0xFFFFFFFF
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] ^= s[c]
    s[b] = ((s[b] << 12) | (s[b] >> 20)) & 0xFFFFFFFF
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] ^= s[a]
    s[d] = ((s[d] << 8) | (s[d] >> 24)) & 0xFFFFFFFF
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] ^= s[c]
    s[b] = ((s[b] << 7) | (s[b] >> 25)) & 0xFFFFFFFF


def chacha20_keystream(key: bytes, length: int) -> bytes:
    """ChaCha20 (nonce 0, counter from 0) keystream, as Core's ChaCha20Aligned::Keystream."""
    constants = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)
    key_words = struct.unpack("<8I", key)
    out = bytearray()
    counter = 0
    while len(out) < length:
        state = [*constants, *key_words, counter & 0xFFFFFFFF, counter >> 32, 0, 0]
        work = list(state)
        for _ in range(10):
            _quarter_round(work, 0, 4, 8, 12)
            _quarter_round(work, 1, 5, 9, 13)
            _quarter_round(work, 2, 6, 10, 14)
            _quarter_round(work, 3, 7, 11, 15)
            _quarter_round(work, 0, 5, 10, 15)
            _quarter_round(work, 1, 6, 11, 12)
            _quarter_round(work, 2, 7, 8, 13)
            _quarter_round(work, 3, 4, 9, 14)
        out += struct.pack("<16I", *((w + s) & 0xFFFFFFFF for w, s in zip(work, state, strict=True)))
        counter += 1
    return bytes(out[:length])


def _muhash_element(data: bytes) -> int:
    """MuHash3072::ToNum3072: SHA256 of the data keys ChaCha20; 384 bytes, little-endian."""
    return int.from_bytes(chacha20_keystream(hashlib.sha256(data).digest(), 384), "little")


def utxo_stats(coins: Iterable[tuple[bytes, int, int, bytes, int, bool]], hash_type: str) -> UtxoStats:
    """Statistics of the coins (txid, n, value, script, height, coinbase) given in outpoint order."""
    stats = UtxoStats()
    hasher = hashlib.sha256() if hash_type == HASH_SERIALIZED else None
    numerator = 1
    last_txid = None
    for txid, n, value, script, height, coinbase in coins:
        stats.txouts += 1
        stats.bogosize += 32 + 4 + 4 + 8 + 2 + len(script)  # Core's GetBogoSize
        stats.total_amount += value
        if txid != last_txid:
            stats.transactions += 1
            last_txid = txid
        if hash_type == NONE:
            continue
        serialized = _coin_bytes(txid, n, value, script, height, coinbase)
        if hasher is not None:
            hasher.update(serialized)
        else:
            numerator = numerator * _muhash_element(serialized) % MUHASH_PRIME
    if hasher is not None:
        stats.digest = hashlib.sha256(hasher.digest()).digest()
    elif hash_type == MUHASH:
        stats.digest = hashlib.sha256((numerator % MUHASH_PRIME).to_bytes(384, "little")).digest()
    return stats
