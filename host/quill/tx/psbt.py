"""Partially Signed Bitcoin Transactions: BIP174 (version 0) and BIP370 (version 2).

The data model and wire codec, read and written as Bitcoin Core's psbt.h does:

    psbt = decode_base64_psbt(text)       # PSBTError with Core's message on any defect
    text = encode_base64_psbt(psbt)       # Core's field order, maps sorted as Core's std::map

Fields keep Core's semantics: a "null" field is absent (None / empty), maps are dicts
whose serialization order is Core's key order (bytes order, which is also the order of
CPubKey, uint160/uint256 and XOnlyPubKey comparisons). A key seen twice in one map is an
error; each key type checks its key length and value as Core does, with Core's messages.
"""
from __future__ import annotations

import binascii
import copy
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from coincurve import PublicKey

from quill.tx.address import base58check_encode
from quill.tx.curve_point import is_valid_compressed_pubkey
from quill.tx.hashes import hash160
from quill.tx.script import is_valid_signature_encoding
from quill.tx.serialize import DeserializationError, compact_size
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

PSBT_MAGIC = b"psbt\xff"
PSBT_HIGHEST_VERSION = 2
LOCKTIME_THRESHOLD = 500_000_000
TAPROOT_CONTROL_MAX_NODE_COUNT = 128
TAPROOT_LEAF_MASK = 0xFE
BIP32_EXTKEY_WITH_VERSION_SIZE = 78
MUSIG2_PUBNONCE_SIZE = 66

# Global types
GLOBAL_UNSIGNED_TX = 0x00
GLOBAL_XPUB = 0x01
GLOBAL_TX_VERSION = 0x02
GLOBAL_FALLBACK_LOCKTIME = 0x03
GLOBAL_INPUT_COUNT = 0x04
GLOBAL_OUTPUT_COUNT = 0x05
GLOBAL_TX_MODIFIABLE = 0x06
GLOBAL_VERSION = 0xFB
GLOBAL_PROPRIETARY = 0xFC

# Input types
IN_NON_WITNESS_UTXO = 0x00
IN_WITNESS_UTXO = 0x01
IN_PARTIAL_SIG = 0x02
IN_SIGHASH = 0x03
IN_REDEEMSCRIPT = 0x04
IN_WITNESSSCRIPT = 0x05
IN_BIP32_DERIVATION = 0x06
IN_SCRIPTSIG = 0x07
IN_SCRIPTWITNESS = 0x08
IN_RIPEMD160 = 0x0A
IN_SHA256 = 0x0B
IN_HASH160 = 0x0C
IN_HASH256 = 0x0D
IN_PREVIOUS_TXID = 0x0E
IN_OUTPUT_INDEX = 0x0F
IN_SEQUENCE = 0x10
IN_REQUIRED_TIME_LOCKTIME = 0x11
IN_REQUIRED_HEIGHT_LOCKTIME = 0x12
IN_TAP_KEY_SIG = 0x13
IN_TAP_SCRIPT_SIG = 0x14
IN_TAP_LEAF_SCRIPT = 0x15
IN_TAP_BIP32_DERIVATION = 0x16
IN_TAP_INTERNAL_KEY = 0x17
IN_TAP_MERKLE_ROOT = 0x18
IN_MUSIG2_PARTICIPANT_PUBKEYS = 0x1A
IN_MUSIG2_PUB_NONCE = 0x1B
IN_MUSIG2_PARTIAL_SIG = 0x1C
IN_PROPRIETARY = 0xFC

# Output types
OUT_REDEEMSCRIPT = 0x00
OUT_WITNESSSCRIPT = 0x01
OUT_BIP32_DERIVATION = 0x02
OUT_AMOUNT = 0x03
OUT_SCRIPT = 0x04
OUT_TAP_INTERNAL_KEY = 0x05
OUT_TAP_TREE = 0x06
OUT_TAP_BIP32_DERIVATION = 0x07
OUT_MUSIG2_PARTICIPANT_PUBKEYS = 0x08
OUT_PROPRIETARY = 0xFC

NULL32 = bytes(32)


class PSBTError(ValueError):
    """A PSBT that cannot be read: ``str(e)`` is Core's message for the same bytes."""


class _Failure(Exception):
    """Core's std::ios_base::failure while reading: rendered with ': iostream error'."""


# -- the data model --------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class KeyOrigin:
    """Core's KeyOriginInfo: master fingerprint (4 bytes) and derivation path."""
    fingerprint: bytes
    path: tuple[int, ...]

    def sort_key(self) -> tuple[bytes, int, tuple[int, ...]]:
        # Core: fingerprint bytes, then the shorter path, then the path itself.
        return (self.fingerprint, len(self.path), self.path)

    def serialize(self) -> bytes:
        return self.fingerprint + b"".join(struct.pack("<I", i) for i in self.path)

    # Immutable (bytes and a tuple of ints): a copy is the same value. Compiled by mypyc, a frozen
    # class's copy by the copy module's default (__setstate__, which assigns) would be refused.
    def __copy__(self) -> KeyOrigin:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> KeyOrigin:
        return self


def format_hd_keypath(path: tuple[int, ...]) -> str:
    """Core's WriteHDKeypath: 'm/84h/1h/0h/0/5'."""
    return "m" + "".join([f"/{i}" if i <= 0x7FFFFFFF else f"/{i & 0x7FFFFFFF}h" for i in path])


@dataclass
class Proprietary:
    identifier: bytes
    subtype: int
    key: bytes
    value: bytes


@dataclass(slots=True)
class PSBTInput:
    version: int
    prev_txid: bytes = NULL32  # internal byte order
    prev_out: int = 0
    sequence: int | None = None
    time_locktime: int | None = None
    height_locktime: int | None = None
    non_witness_utxo: Transaction | None = None
    witness_utxo: TxOut | None = None
    partial_sigs: dict[bytes, tuple[bytes, bytes]] = field(default_factory=dict)  # keyid -> (pubkey, sig)
    sighash_type: int | None = None
    redeem_script: bytes = b""
    witness_script: bytes = b""
    hd_keypaths: dict[bytes, KeyOrigin] = field(default_factory=dict)
    final_script_sig: bytes = b""
    final_script_witness: list[bytes] = field(default_factory=list)
    ripemd160_preimages: dict[bytes, bytes] = field(default_factory=dict)
    sha256_preimages: dict[bytes, bytes] = field(default_factory=dict)
    hash160_preimages: dict[bytes, bytes] = field(default_factory=dict)
    hash256_preimages: dict[bytes, bytes] = field(default_factory=dict)
    tap_key_sig: bytes = b""
    tap_script_sigs: dict[tuple[bytes, bytes], bytes] = field(default_factory=dict)
    tap_scripts: dict[tuple[bytes, int], set[bytes]] = field(default_factory=dict)
    tap_bip32_paths: dict[bytes, tuple[frozenset[bytes], KeyOrigin]] = field(default_factory=dict)
    tap_internal_key: bytes = NULL32
    tap_merkle_root: bytes = NULL32
    musig2_participants: dict[bytes, list[bytes]] = field(default_factory=dict)
    musig2_pubnonces: dict[tuple[bytes, bytes], dict[bytes, bytes]] = field(default_factory=dict)
    musig2_partial_sigs: dict[tuple[bytes, bytes], dict[bytes, bytes]] = field(default_factory=dict)
    unknown: dict[bytes, bytes] = field(default_factory=dict)
    proprietary: dict[bytes, Proprietary] = field(default_factory=dict)

    @property
    def outpoint(self) -> OutPoint:
        return OutPoint(self.prev_txid, self.prev_out)

    def has_witness_utxo(self) -> bool:
        # Core's CTxOut::IsNull: a value of -1 is "no output".
        return self.witness_utxo is not None and self.witness_utxo.value != -1

    def utxo(self) -> TxOut | None:
        """Core's PSBTInput::GetUTXO: the spent output, from either UTXO field."""
        if self.non_witness_utxo is not None:
            if self.prev_out >= len(self.non_witness_utxo.vout):
                return None
            return self.non_witness_utxo.vout[self.prev_out]
        if self.has_witness_utxo():
            return self.witness_utxo
        return None


@dataclass(slots=True)
class PSBTOutput:
    version: int
    amount: int = 0
    script: bytes = b""
    redeem_script: bytes = b""
    witness_script: bytes = b""
    hd_keypaths: dict[bytes, KeyOrigin] = field(default_factory=dict)
    tap_internal_key: bytes = NULL32
    tap_tree: list[tuple[int, int, bytes]] = field(default_factory=list)
    tap_bip32_paths: dict[bytes, tuple[frozenset[bytes], KeyOrigin]] = field(default_factory=dict)
    musig2_participants: dict[bytes, list[bytes]] = field(default_factory=dict)
    unknown: dict[bytes, bytes] = field(default_factory=dict)
    proprietary: dict[bytes, Proprietary] = field(default_factory=dict)


@dataclass
class PSBT:
    """Core's PartiallySignedTransaction. ``version`` None is an implicit version 0."""
    version: int | None
    tx_version: int = 2
    fallback_locktime: int | None = None
    tx_modifiable: int | None = None
    xpubs: dict[KeyOrigin, set[bytes]] = field(default_factory=dict)  # origin -> 78-byte xpubs
    inputs: list[PSBTInput] = field(default_factory=list)
    outputs: list[PSBTOutput] = field(default_factory=list)
    unknown: dict[bytes, bytes] = field(default_factory=dict)
    proprietary: dict[bytes, Proprietary] = field(default_factory=dict)

    @property
    def psbt_version(self) -> int:
        return 0 if self.version is None else self.version

    def compute_locktime(self) -> int | None:
        """Core's ComputeTimeLock: the locktime the v2 inputs require, None if they conflict."""
        if self.psbt_version >= 2:
            time_lock: int | None = 0
            height_lock: int | None = 0
            for txin in self.inputs:
                if txin.time_locktime is not None and txin.height_locktime is None:
                    height_lock = None  # the transaction can no longer have a height locktime
                    if time_lock is None:
                        return None
                elif txin.time_locktime is None and txin.height_locktime is not None:
                    time_lock = None
                    if height_lock is None:
                        return None
                if txin.time_locktime is not None and time_lock is not None:
                    time_lock = max(time_lock, txin.time_locktime)
                if txin.height_locktime is not None and height_lock is not None:
                    height_lock = max(height_lock, txin.height_locktime)
            if height_lock:
                return height_lock
            if time_lock:
                return time_lock
        return self.fallback_locktime or 0

    def unique_id(self) -> bytes | None:
        """Core's GetUniqueID: the unsigned txid, with v2 sequences zeroed."""
        tx = self.unsigned_tx()
        if tx is None:
            return None
        if self.psbt_version >= 2:
            for txin in tx.vin:
                txin.sequence = 0
        return tx.txid()

    def unsigned_tx(self) -> Transaction | None:
        """Core's GetUnsignedTx: the transaction the PSBT describes, without signatures."""
        locktime = self.compute_locktime()
        if locktime is None:
            return None
        vin = [TxIn(OutPoint(i.prev_txid, i.prev_out), b"",
                    0xFFFFFFFF if i.sequence is None else i.sequence, []) for i in self.inputs]
        vout = [TxOut(o.amount, o.script) for o in self.outputs]
        return Transaction(self.tx_version, vin, vout, locktime)


def psbt_from_tx(tx: Transaction, version: int = 0) -> PSBT:
    """Core's PartiallySignedTransaction(CMutableTransaction, version): empty maps."""
    psbt = PSBT(version=None if version == 0 else version, tx_version=tx.version,
                fallback_locktime=tx.locktime)
    for txin in tx.vin:
        psbt.inputs.append(PSBTInput(version, txin.prevout.hash, txin.prevout.n, txin.sequence))
    for txout in tx.vout:
        psbt.outputs.append(PSBTOutput(version, txout.value, txout.script_pubkey))
    return psbt


# -- reading ---------------------------------------------------------------------------------


class _Reader:
    """Core's SpanReader over the PSBT bytes, with Core's failure messages."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def empty(self) -> bool:
        return self.pos >= self.end

    def size(self) -> int:
        return self.end - self.pos

    def read(self, n: int) -> bytes:
        if self.pos + n > self.end:
            raise _Failure("SpanReader::read(): end of data")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self) -> int:
        return self.read(1)[0]

    def u32(self) -> int:
        return int(struct.unpack("<I", self.read(4))[0])

    def u32s(self, count: int) -> tuple[int, ...]:
        """`count` little-endian uint32s in one unpack (a BIP32 path)."""
        return struct.unpack(f"<{count}I", self.read(4 * count))

    def i32(self) -> int:
        return int(struct.unpack("<i", self.read(4))[0])

    def i64(self) -> int:
        return int(struct.unpack("<q", self.read(8))[0])

    def compact_size(self, range_check: bool = True) -> int:
        pos = self.pos
        if pos < self.end and self.data[pos] < 0xFD:   # one byte: nearly every length in a PSBT
            self.pos = pos + 1
            return self.data[pos]
        first = self.u8()
        if first < 0xFD:
            return first
        width = 2 if first == 0xFD else 4 if first == 0xFE else 8
        n = int.from_bytes(self.read(width), "little")
        if (first == 0xFD and n < 0xFD) or (first == 0xFE and n < 0x10000) or (
                first == 0xFF and n < 0x100000000):
            raise _Failure("non-canonical ReadCompactSize()")
        if range_check and n > 0x02000000:
            raise _Failure("ReadCompactSize(): size too large")
        return n

    def var_bytes(self) -> bytes:
        data, pos = self.data, self.pos
        if pos < self.end and data[pos] < 0xFD and pos + 1 + data[pos] <= self.end:
            self.pos = stop = pos + 1 + data[pos]
            return data[pos + 1:stop]
        return self.read(self.compact_size())

    def transaction(self, allow_witness: bool) -> Transaction:
        """A transaction read in place, as Core's UnserializeTransaction."""
        from quill.tx.serialize import BufferReader
        r = BufferReader(self.data, self.pos, self.end)
        try:
            tx = Transaction.read_from(r, allow_witness)
        except DeserializationError as e:
            message = str(e)
            if message in ("end of data", "trailing bytes after transaction"):
                message = "SpanReader::read(): end of data"
            raise _Failure(message) from None
        self.pos = r.tell()
        return tx


_T = TypeVar("_T")
_I64 = struct.Struct("<q")


def _value(r: _Reader, read_inner: Callable[[_Reader], _T]) -> _T:
    """Core's UnserializeFromVector: a length, then the object, which must fill it exactly."""
    expected = r.compact_size()
    before = r.size()
    result = read_inner(r)
    if r.size() + expected != before:
        raise _Failure("Size of value was not the stated size")
    return result


def _expect_key_size(name: str, key: bytes, size: int) -> None:
    if len(key) != size:
        raise _Failure(f"Size of key was not {size} for the type {name}")


def is_fully_valid_pubkey(data: bytes) -> bool:
    """Core's CPubKey::IsFullyValid: a length matching the header byte, and on the curve."""
    if not data or _pubkey_len(data[0]) != len(data):
        return False
    if len(data) == 33:
        return is_valid_compressed_pubkey(data)
    try:
        PublicKey(data)
    except (ValueError, TypeError):
        return False
    return True


def _is_valid_xpub(xpub: bytes) -> bool:
    """Core's CExtPubKey::DecodeWithVersion then IsFullyValid: a depth-0 key has no parent
    fingerprint or child number, and the key is a compressed point."""
    depth, parent, child, pubkey = xpub[4], xpub[5:9], xpub[9:13], xpub[45:78]
    if depth == 0 and (any(child) or any(parent)):
        return False
    return pubkey[0] in (2, 3) and is_fully_valid_pubkey(pubkey)


def _pubkey_len(header: int) -> int:
    if header in (2, 3):
        return 33
    if header in (4, 6, 7):
        return 65
    return 0


def _key_origin(r: _Reader, length: int) -> KeyOrigin:
    if length % 4 or length == 0:
        raise _Failure("Invalid length for HD key path")
    pos = r.pos
    if pos + length <= r.end:   # all there: one unpack
        r.pos = pos + length
        return KeyOrigin(r.data[pos:pos + 4], struct.unpack_from(f"<{length // 4 - 1}I", r.data, pos + 4))
    fingerprint = r.read(4)
    return KeyOrigin(fingerprint, r.u32s((length - 4) // 4))


def _hd_keypath(r: _Reader, key: bytes, keypaths: dict[bytes, KeyOrigin]) -> None:
    if len(key) not in (34, 66):
        raise _Failure("Size of key was not the expected size for the type BIP32 keypath")
    pubkey = key[1:]
    if not (is_valid_compressed_pubkey(pubkey) if len(pubkey) == 33 else is_fully_valid_pubkey(pubkey)):
        raise _Failure("Invalid pubkey")
    keypaths.setdefault(pubkey, _key_origin(r, r.compact_size()))


def _tap_bip32(r: _Reader, context: str) -> tuple[frozenset[bytes], KeyOrigin]:
    value_len = r.compact_size()
    before = r.size()
    hashes = frozenset(r.read(32) for _ in range(r.compact_size()))
    hashes_len = before - r.size()
    if hashes_len > value_len:
        raise _Failure(f"{context} Taproot BIP32 keypath has an invalid length")
    return hashes, _key_origin(r, value_len - hashes_len)


def _musig2_participants(r: _Reader, key: bytes, out: dict[bytes, list[bytes]], context: str) -> None:
    agg = key[1:34]
    if not is_fully_valid_pubkey(agg):
        raise _Failure(f"{context} musig2 aggregate pubkey is invalid")
    value = r.var_bytes()
    participants = []
    pos = 0
    while len(value) - pos >= 33:
        part = value[pos:pos + 33]
        pos += 33
        if not is_fully_valid_pubkey(part):
            raise _Failure(f"{context} musig2 participant pubkey is invalid")
        participants.append(part)
    if pos != len(value):
        raise _Failure(f"{context} musig2 participants pubkeys value size is not a multiple of 33")
    out.setdefault(agg, participants)


def _musig2_identifier(key: bytes) -> tuple[bytes, bytes, bytes]:
    """(aggregate pubkey, participant pubkey, leaf hash or 32 zero bytes) from a nonce/psig key."""
    part, agg = key[1:34], key[34:67]
    if not is_fully_valid_pubkey(agg):
        raise _Failure("musig2 aggregate pubkey is invalid")
    if not is_fully_valid_pubkey(part):
        raise _Failure("musig2 participant pubkey is invalid")
    leaf = key[67:99] if len(key) > 67 else NULL32
    return agg, part, leaf


def _proprietary(key: bytes, value: bytes) -> Proprietary:
    k = _Reader(key, 1)
    identifier = k.var_bytes()
    subtype = k.compact_size(range_check=False)
    return Proprietary(identifier, subtype, key, value)


def _read_key(r: _Reader, seen: set[bytes], where: str) -> tuple[bytes, int] | None:
    data, pos = r.data, r.pos
    if pos < r.end and data[pos] < 0xFD and pos + 1 + data[pos] <= r.end:   # r.var_bytes(), inline
        r.pos = stop = pos + 1 + data[pos]
        key = data[pos + 1:stop]
    else:
        key = r.var_bytes()
    if not key:
        return None
    if key in seen:
        raise _Failure(f'Duplicate Key, {where} key "{key.hex()}" already provided')
    seen.add(key)
    return key, key[0] if key[0] < 0xFD else _Reader(key).compact_size(range_check=False)


def _is_valid_sig_encoding(sig: bytes) -> bool:
    # Core's CheckSignatureEncoding with DERSIG|STRICTENC: DER, then a defined hash type.
    return is_valid_signature_encoding(sig) and (sig[-1] & 0x7F) in (1, 2, 3)


def _witness_utxo(r: _Reader) -> TxOut:
    """An input's witness UTXO value: an 8-byte amount and a script, filling the stated size."""
    data, pos = r.data, r.pos
    size = data[pos] if pos < r.end else 0xFD
    # Nearly every one: one-byte lengths, the script ending where the value does, all in the data;
    # anything else takes the general path, which fails as Core does.
    if size < 0xFD and 9 <= size and pos + 1 + size <= r.end and data[pos + 9] == size - 9:
        r.pos = pos + 1 + size
        return TxOut(_I64.unpack_from(data, pos + 1)[0], data[pos + 10:pos + 1 + size])
    return _value(r, lambda s: TxOut(s.i64(), s.var_bytes()))


def _read_input(r: _Reader, txin: PSBTInput) -> None:  # noqa: C901 - one branch per key type, as BIP174
    seen: set[bytes] = set()
    found_txid = found_index = False
    v2 = txin.version >= 2
    while r.pos < r.end:
        got = _read_key(r, seen, "input")
        if got is None:
            break
        key, kind = got
        if kind == IN_BIP32_DERIVATION:   # the most common keys first
            _hd_keypath(r, key, txin.hd_keypaths)
        elif kind == IN_WITNESS_UTXO:
            _expect_key_size("Input Witness UTXO", key, 1)
            txin.witness_utxo = _witness_utxo(r)
        elif kind == IN_NON_WITNESS_UTXO:
            _expect_key_size("Input Non-witness UTXO", key, 1)
            txin.non_witness_utxo = _value(r, lambda s: s.transaction(True))
        elif kind == IN_PARTIAL_SIG:
            if len(key) not in (34, 66):
                raise _Failure("Size of key was not the expected size for the type partial signature pubkey")
            pubkey = key[1:]
            if not is_fully_valid_pubkey(pubkey):
                raise _Failure("Invalid pubkey")
            sig = r.var_bytes()
            if not sig or not _is_valid_sig_encoding(sig):
                raise _Failure("Signature is not a valid encoding")
            txin.partial_sigs.setdefault(hash160(pubkey), (pubkey, sig))
        elif kind == IN_SIGHASH:
            _expect_key_size("Input Sighash Type", key, 1)
            txin.sighash_type = _value(r, lambda s: s.i32())
        elif kind == IN_REDEEMSCRIPT:
            _expect_key_size("Input redeemScript", key, 1)
            txin.redeem_script = r.var_bytes()
        elif kind == IN_WITNESSSCRIPT:
            _expect_key_size("Input witnessScript", key, 1)
            txin.witness_script = r.var_bytes()
        elif kind == IN_SCRIPTSIG:
            _expect_key_size("Input Final scriptSig", key, 1)
            txin.final_script_sig = r.var_bytes()
        elif kind == IN_SCRIPTWITNESS:
            _expect_key_size("Input Final scriptWitness", key, 1)
            txin.final_script_witness = _value(r, lambda s: [s.var_bytes() for _ in range(s.compact_size())])
        elif kind in (IN_RIPEMD160, IN_SHA256, IN_HASH160, IN_HASH256):
            name, size, target = {
                IN_RIPEMD160: ("Input RIPEMD160 Preimage", 21, txin.ripemd160_preimages),
                IN_SHA256: ("Input SHA256 Preimage", 33, txin.sha256_preimages),
                IN_HASH160: ("Input Hash160 Preimage", 21, txin.hash160_preimages),
                IN_HASH256: ("Input Hash256 Preimage", 33, txin.hash256_preimages),
            }[kind]
            _expect_key_size(name, key, size)
            target.setdefault(key[1:], r.var_bytes())
        elif kind == IN_PREVIOUS_TXID:
            _expect_key_size("Input Previous TXID", key, 1)
            if not v2:
                raise _Failure("Previous txid is not allowed in PSBTv0")
            txin.prev_txid = _value(r, lambda s: s.read(32))
            found_txid = True
        elif kind == IN_OUTPUT_INDEX:
            _expect_key_size("Input Previous Output's Index", key, 1)
            if not v2:
                raise _Failure("Previous output's index is not allowed in PSBTv0")
            txin.prev_out = _value(r, lambda s: s.u32())
            found_index = True
        elif kind == IN_SEQUENCE:
            _expect_key_size("Input Sequence", key, 1)
            if not v2:
                raise _Failure("Sequence is not allowed in PSBTv0")
            txin.sequence = _value(r, lambda s: s.u32())
        elif kind == IN_REQUIRED_TIME_LOCKTIME:
            _expect_key_size("Input Required Time Based Locktime", key, 1)
            if not v2:
                raise _Failure("Required time based locktime is not allowed in PSBTv0")
            txin.time_locktime = _value(r, lambda s: s.u32())
            if txin.time_locktime < LOCKTIME_THRESHOLD:
                raise _Failure("Required time based locktime is invalid (less than 500000000)")
        elif kind == IN_REQUIRED_HEIGHT_LOCKTIME:
            _expect_key_size("Input Required Height Based Locktime", key, 1)
            if not v2:
                raise _Failure("Required height based locktime is not allowed in PSBTv0")
            txin.height_locktime = _value(r, lambda s: s.u32())
            if txin.height_locktime >= LOCKTIME_THRESHOLD:
                raise _Failure("Required height based locktime is invalid (greater than or equal to 500000000)")
            if txin.height_locktime == 0:
                raise _Failure("Required height based locktime is invalid (0)")
        elif kind == IN_TAP_KEY_SIG:
            _expect_key_size("Input Taproot Key Path Signature", key, 1)
            txin.tap_key_sig = r.var_bytes()
            if len(txin.tap_key_sig) < 64:
                raise _Failure("Input Taproot key path signature is shorter than 64 bytes")
            if len(txin.tap_key_sig) > 65:
                raise _Failure("Input Taproot key path signature is longer than 65 bytes")
        elif kind == IN_TAP_SCRIPT_SIG:
            _expect_key_size("Input Taproot Script Path Signature", key, 65)
            sig = r.var_bytes()
            if len(sig) < 64:
                raise _Failure("Input Taproot script path signature is shorter than 64 bytes")
            if len(sig) > 65:
                raise _Failure("Input Taproot script path signature is longer than 65 bytes")
            txin.tap_script_sigs.setdefault((key[1:33], key[33:65]), sig)
        elif kind == IN_TAP_LEAF_SCRIPT:
            if len(key) < 34:
                raise _Failure("Input Taproot leaf script key is not at least 34 bytes")
            if (len(key) - 2) % 32:
                raise _Failure("Input Taproot leaf script key's control block size is not valid")
            script_v = r.var_bytes()
            if not script_v:
                raise _Failure("Input Taproot leaf script must be at least 1 byte")
            txin.tap_scripts.setdefault((script_v[:-1], script_v[-1]), set()).add(key[1:])
        elif kind == IN_TAP_BIP32_DERIVATION:
            _expect_key_size("Input Taproot BIP32 Keypath", key, 33)
            txin.tap_bip32_paths.setdefault(key[1:], _tap_bip32(r, "Input"))
        elif kind == IN_TAP_INTERNAL_KEY:
            _expect_key_size("Input Taproot Internal Key", key, 1)
            txin.tap_internal_key = _value(r, lambda s: s.read(32))
        elif kind == IN_TAP_MERKLE_ROOT:
            _expect_key_size("Input Taproot Merkle Root", key, 1)
            txin.tap_merkle_root = _value(r, lambda s: s.read(32))
        elif kind == IN_MUSIG2_PARTICIPANT_PUBKEYS:
            _expect_key_size("Input MuSig2 Participants Pubkeys", key, 34)
            _musig2_participants(r, key, txin.musig2_participants, "Input")
        elif kind == IN_MUSIG2_PUB_NONCE:
            if len(key) not in (67, 99):
                raise _Failure("Input musig2 pubnonce key is not expected size of 67 or 99 bytes")
            agg, part, leaf = _musig2_identifier(key)
            nonce = r.var_bytes()
            if len(nonce) != MUSIG2_PUBNONCE_SIZE:
                raise _Failure("Input musig2 pubnonce value is not 66 bytes")
            txin.musig2_pubnonces.setdefault((agg, leaf), {}).setdefault(part, nonce)
        elif kind == IN_MUSIG2_PARTIAL_SIG:
            if len(key) not in (67, 99):
                raise _Failure("Input musig2 partial sig key is not expected size of 67 or 99 bytes")
            agg, part, leaf = _musig2_identifier(key)
            psig = _value(r, lambda s: s.read(32))
            txin.musig2_partial_sigs.setdefault((agg, leaf), {}).setdefault(part, psig)
        elif kind == IN_PROPRIETARY:
            prop = _proprietary(key, r.var_bytes())
            txin.proprietary.setdefault(key, prop)
        else:
            txin.unknown[key] = r.var_bytes()
    else:
        raise _Failure("Separator is missing at the end of an input map")
    if v2:
        if not found_txid:
            raise _Failure("Previous TXID is required in PSBTv2")
        if not found_index:
            raise _Failure("Previous output's index is required in PSBTv2")


def _is_complete_tree(depths: list[int]) -> bool:
    """Core's TaprootBuilder: leaves given depth-first form exactly one complete binary tree."""
    branch: list[bool] = []  # branch[d]: a finished subtree waits at depth d
    for depth in depths:
        if depth + 1 < len(branch):
            return False  # a shallower leaf while a deeper branch is unfinished
        while len(branch) > depth and branch[depth]:
            branch.pop()
            if depth == 0:
                return False  # nothing above the root to combine into
            depth -= 1
        if len(branch) <= depth:
            branch.extend([False] * (depth + 1 - len(branch)))
        branch[depth] = True
    return not branch or (len(branch) == 1 and branch[0])


def _read_tap_tree(r: _Reader) -> list[tuple[int, int, bytes]]:
    tree_v = r.var_bytes()
    t = _Reader(tree_v)
    if t.empty():
        raise _Failure("Output Taproot tree must not be empty")
    leaves = []
    while not t.empty():
        depth = t.u8()
        leaf_ver = t.u8()
        script = t.var_bytes()
        if depth > TAPROOT_CONTROL_MAX_NODE_COUNT:
            raise _Failure("Output Taproot tree has as leaf greater than Taproot maximum depth")
        if leaf_ver & ~TAPROOT_LEAF_MASK & 0xFF:
            raise _Failure("Output Taproot tree has a leaf with an invalid leaf version")
        leaves.append((depth, leaf_ver, script))
    if not _is_complete_tree([depth for depth, _, _ in leaves]):
        raise _Failure("Output Taproot tree is malformed")
    return leaves


def _read_output(r: _Reader, out: PSBTOutput) -> None:  # noqa: C901 - one branch per key type
    seen: set[bytes] = set()
    found_amount = found_script = False
    v2 = out.version >= 2
    while not r.empty():
        got = _read_key(r, seen, "output")
        if got is None:
            break
        key, kind = got
        if kind == OUT_REDEEMSCRIPT:
            _expect_key_size("Output redeemScript", key, 1)
            out.redeem_script = r.var_bytes()
        elif kind == OUT_WITNESSSCRIPT:
            _expect_key_size("Output witnessScript", key, 1)
            out.witness_script = r.var_bytes()
        elif kind == OUT_BIP32_DERIVATION:
            _hd_keypath(r, key, out.hd_keypaths)
        elif kind == OUT_AMOUNT:
            _expect_key_size("Output Amount", key, 1)
            if not v2:
                raise _Failure("Output amount is not allowed in PSBTv0")
            out.amount = _value(r, lambda s: s.i64())
            found_amount = True
        elif kind == OUT_SCRIPT:
            _expect_key_size("Output Script", key, 1)
            if not v2:
                raise _Failure("Output script is not allowed in PSBTv0")
            out.script = r.var_bytes()
            found_script = True
        elif kind == OUT_TAP_INTERNAL_KEY:
            _expect_key_size("Output Taproot Internal Key", key, 1)
            out.tap_internal_key = _value(r, lambda s: s.read(32))
        elif kind == OUT_TAP_TREE:
            _expect_key_size("Output Taproot Tree Key", key, 1)
            out.tap_tree = _read_tap_tree(r)
        elif kind == OUT_TAP_BIP32_DERIVATION:
            _expect_key_size("Output Taproot BIP32 Keypath", key, 33)
            out.tap_bip32_paths.setdefault(key[1:], _tap_bip32(r, "Output"))
        elif kind == OUT_MUSIG2_PARTICIPANT_PUBKEYS:
            _expect_key_size("Output MuSig2 Participants Pubkeys", key, 34)
            _musig2_participants(r, key, out.musig2_participants, "Output")
        elif kind == OUT_PROPRIETARY:
            out.proprietary.setdefault(key, _proprietary(key, r.var_bytes()))
        else:
            out.unknown[key] = r.var_bytes()
    else:
        raise _Failure("Separator is missing at the end of an output map")
    if v2:
        if not found_amount:
            raise _Failure("Output amount is required in PSBTv2")
        if not found_script:
            raise _Failure("Output script is required in PSBTv2")


def _read_global(r: _Reader, psbt: PSBT) -> tuple[Transaction | None, dict[str, bool], int, int]:  # noqa: C901
    seen: set[bytes] = set()
    tx: Transaction | None = None
    found = {"tx_version": False, "fallback_locktime": False, "input_count": False, "output_count": False}
    input_count = output_count = 0
    while not r.empty():
        got = _read_key(r, seen, "global")
        if got is None:
            break
        key, kind = got
        if kind == GLOBAL_UNSIGNED_TX:
            _expect_key_size("Global Unsigned TX", key, 1)
            tx = _value(r, lambda s: s.transaction(False))
            if any(i.script_sig or i.witness for i in tx.vin):
                raise _Failure("Unsigned tx does not have empty scriptSigs and scriptWitnesses.")
            psbt.tx_version = tx.version
            psbt.fallback_locktime = tx.locktime
            input_count, output_count = len(tx.vin), len(tx.vout)
        elif kind == GLOBAL_TX_VERSION:
            _expect_key_size("Global Transaction Version", key, 1)
            psbt.tx_version = _value(r, lambda s: s.u32())
            found["tx_version"] = True
        elif kind == GLOBAL_FALLBACK_LOCKTIME:
            _expect_key_size("Global Fallback Locktime", key, 1)
            psbt.fallback_locktime = _value(r, lambda s: s.u32())
            found["fallback_locktime"] = True
        elif kind == GLOBAL_INPUT_COUNT:
            _expect_key_size("Global Input Count", key, 1)
            input_count = _value(r, lambda s: s.compact_size(range_check=False))
            found["input_count"] = True
        elif kind == GLOBAL_OUTPUT_COUNT:
            _expect_key_size("Global Output Count", key, 1)
            output_count = _value(r, lambda s: s.compact_size(range_check=False))
            found["output_count"] = True
        elif kind == GLOBAL_TX_MODIFIABLE:
            _expect_key_size("Global TX Modifiable Flags", key, 1)
            psbt.tx_modifiable = _value(r, lambda s: s.u8())
        elif kind == GLOBAL_XPUB:
            _expect_key_size("Global XPUB", key, BIP32_EXTKEY_WITH_VERSION_SIZE + 1)
            xpub = key[1:]
            if not _is_valid_xpub(xpub):
                raise _Failure("Invalid pubkey")
            origin = _key_origin(r, r.compact_size())
            psbt.xpubs.setdefault(origin, set()).add(xpub)
        elif kind == GLOBAL_VERSION:
            _expect_key_size("Global PSBT Version", key, 1)
            psbt.version = _value(r, lambda s: s.u32())
            if psbt.version > PSBT_HIGHEST_VERSION:
                raise _Failure("Unsupported version number")
        elif kind == GLOBAL_PROPRIETARY:
            psbt.proprietary.setdefault(key, _proprietary(key, r.var_bytes()))
        else:
            psbt.unknown[key] = r.var_bytes()
    else:
        raise _Failure("Separator is missing at the end of the global map")
    return tx, found, input_count, output_count


def _check_global(psbt: PSBT, tx: Transaction | None, found: dict[str, bool]) -> None:
    ver = psbt.psbt_version
    if ver == 0:
        if tx is None:
            raise _Failure("No unsigned transaction was provided")
        for name, flag in (("TX_VERSION", "tx_version"), ("FALLBACK_LOCKTIME", "fallback_locktime"),
                           ("INPUT_COUNT", "input_count"), ("OUTPUT_COUNT", "output_count")):
            if found[flag]:
                raise _Failure(f"PSBT_GLOBAL_{name} is not allowed in PSBTv0")
        if psbt.tx_modifiable is not None:
            raise _Failure("PSBT_GLOBAL_TX_MODIFIABLE is not allowed in PSBTv0")
    if ver == 1:
        raise _Failure("There is no PSBT version 1")
    if ver == 2:
        for name, flag in (("TX_VERSION", "tx_version"), ("INPUT_COUNT", "input_count"),
                           ("OUTPUT_COUNT", "output_count")):
            if not found[flag]:
                raise _Failure(f"PSBT_GLOBAL_{name} is required in PSBTv2")
        if tx is not None:
            raise _Failure("PSBT_GLOBAL_UNSIGNED_TX is not allowed in PSBTv2")


def _read_psbt(r: _Reader) -> PSBT:
    if r.read(5) != PSBT_MAGIC:
        raise _Failure("Invalid PSBT magic bytes")
    psbt = PSBT(version=None)
    tx, found, input_count, output_count = _read_global(r, psbt)
    _check_global(psbt, tx, found)
    ver = psbt.psbt_version
    while not r.empty() and len(psbt.inputs) < input_count:
        if tx is not None and ver < 2:
            txin = tx.vin[len(psbt.inputs)]
            psbt_in = PSBTInput(ver, txin.prevout.hash, txin.prevout.n, txin.sequence)
        else:
            psbt_in = PSBTInput(ver)
        psbt.inputs.append(psbt_in)
        _read_input(r, psbt_in)
        prev = psbt_in.non_witness_utxo
        if prev is not None:
            if prev.txid() != psbt_in.prev_txid:
                raise _Failure("Non-witness UTXO does not match outpoint hash")
            if psbt_in.prev_out >= len(prev.vout):
                raise _Failure("Input specifies output index that does not exist")
    if len(psbt.inputs) != input_count:
        raise _Failure("Inputs provided does not match the number of inputs in transaction.")
    while not r.empty() and len(psbt.outputs) < output_count:
        if tx is not None and ver < 2:
            txout = tx.vout[len(psbt.outputs)]
            psbt_out = PSBTOutput(ver, txout.value, txout.script_pubkey)
        else:
            psbt_out = PSBTOutput(ver)
        psbt.outputs.append(psbt_out)
        _read_output(r, psbt_out)
    if len(psbt.outputs) != output_count:
        raise _Failure("Outputs provided does not match the number of outputs in transaction.")
    return psbt


def decode_psbt(data: bytes) -> PSBT:
    """Core's DecodeRawPSBT: the PSBT, or PSBTError with Core's message."""
    r = _Reader(bytes(data))
    try:
        psbt = _read_psbt(r)
    except _Failure as e:
        raise PSBTError(f"{e}: iostream error") from None
    if not r.empty():
        raise PSBTError("extra data after PSBT")
    return psbt


_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]*")
_B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def decode_base64(text: str) -> bytes | None:
    """Core's DecodeBase64: a multiple of 4 characters, at most two '=', zero padding bits."""
    if len(text) % 4:
        return None
    body = text[:-2] if text.endswith("==") else text[:-1] if text.endswith("=") else text
    if not _BASE64_BODY.fullmatch(body):
        return None
    # ConvertBits<6, 8, false>: fewer than 6 bits may be left over, and they must be zero.
    left = len(body) * 6 % 8
    if left >= 6 or (left and _B64_ALPHABET.index(body[-1]) & ((1 << left) - 1)):
        return None
    return binascii.a2b_base64(body + "=" * (-len(body) % 4))


def decode_base64_psbt(text: str) -> PSBT:
    """Core's DecodeBase64PSBT."""
    data = decode_base64(text)
    if data is None:
        raise PSBTError("invalid base64")
    return decode_psbt(data)


# -- writing ---------------------------------------------------------------------------------


def _pair(key: bytes, value: bytes) -> bytes:
    return compact_size(len(key)) + key + compact_size(len(value)) + value


def _tap_bip32_value(hashes: frozenset[bytes], origin: KeyOrigin) -> bytes:
    return compact_size(len(hashes)) + b"".join(sorted(hashes)) + origin.serialize()


def _write_unknowns(parts: list[bytes], proprietary: dict[bytes, Proprietary], unknown: dict[bytes, bytes],
                    with_proprietary: bool = True) -> None:
    if with_proprietary:
        parts += [_pair(k, proprietary[k].value) for k in sorted(proprietary)]
    parts += [_pair(k, unknown[k]) for k in sorted(unknown)]


def _musig_participants_pairs(kind: int, participants: dict[bytes, list[bytes]]) -> list[bytes]:
    return [_pair(bytes([kind]) + agg, b"".join(participants[agg])) for agg in sorted(participants)]


def _write_input(txin: PSBTInput) -> list[bytes]:  # noqa: C901 - one line per key type, in Core's order
    """The input map's pieces, its separator last (joined once with the whole PSBT's)."""
    p: list[bytes] = []
    if txin.non_witness_utxo is not None:
        # The previous transaction is most of a PSBT's bytes: its pair is not copied into one.
        prev = txin.non_witness_utxo.serialize(with_witness=False)
        p += (b"\x01\x00", compact_size(len(prev)), prev)
    if txin.has_witness_utxo():
        assert txin.witness_utxo is not None
        p.append(_pair(b"\x01", txin.witness_utxo.serialize()))
    if not txin.final_script_sig and not txin.final_script_witness:
        for keyid in sorted(txin.partial_sigs):
            pubkey, sig = txin.partial_sigs[keyid]
            p.append(_pair(b"\x02" + pubkey, sig))
        if txin.sighash_type is not None:
            p.append(_pair(b"\x03", struct.pack("<i", txin.sighash_type)))
        if txin.redeem_script:
            p.append(_pair(b"\x04", txin.redeem_script))
        if txin.witness_script:
            p.append(_pair(b"\x05", txin.witness_script))
        p += [_pair(b"\x06" + k, txin.hd_keypaths[k].serialize()) for k in sorted(txin.hd_keypaths)]
        for kind, preimages in ((IN_RIPEMD160, txin.ripemd160_preimages), (IN_SHA256, txin.sha256_preimages),
                                (IN_HASH160, txin.hash160_preimages), (IN_HASH256, txin.hash256_preimages)):
            p += [_pair(bytes([kind]) + h, preimages[h]) for h in sorted(preimages)]
        if txin.tap_key_sig:
            p.append(_pair(bytes([IN_TAP_KEY_SIG]), txin.tap_key_sig))
        for xonly, leaf in sorted(txin.tap_script_sigs):
            p.append(_pair(bytes([IN_TAP_SCRIPT_SIG]) + xonly + leaf, txin.tap_script_sigs[(xonly, leaf)]))
        for script, leaf_ver in sorted(txin.tap_scripts):
            for cb in sorted(txin.tap_scripts[(script, leaf_ver)], key=lambda c: (len(c), c)):
                p.append(_pair(bytes([IN_TAP_LEAF_SCRIPT]) + cb, script + bytes([leaf_ver])))
        for xonly in sorted(txin.tap_bip32_paths):
            p.append(_pair(bytes([IN_TAP_BIP32_DERIVATION]) + xonly, _tap_bip32_value(*txin.tap_bip32_paths[xonly])))
        if txin.tap_internal_key != NULL32:
            p.append(_pair(bytes([IN_TAP_INTERNAL_KEY]), txin.tap_internal_key))
        if txin.tap_merkle_root != NULL32:
            p.append(_pair(bytes([IN_TAP_MERKLE_ROOT]), txin.tap_merkle_root))
        p += _musig_participants_pairs(IN_MUSIG2_PARTICIPANT_PUBKEYS, txin.musig2_participants)
        for kind, by_agg in ((IN_MUSIG2_PUB_NONCE, txin.musig2_pubnonces),
                             (IN_MUSIG2_PARTIAL_SIG, txin.musig2_partial_sigs)):
            for agg, leaf in sorted(by_agg):
                for part in sorted(by_agg[(agg, leaf)]):
                    key = bytes([kind]) + part + agg + (leaf if leaf != NULL32 else b"")
                    p.append(_pair(key, by_agg[(agg, leaf)][part]))
    if txin.final_script_sig:
        p.append(_pair(b"\x07", txin.final_script_sig))
    if txin.final_script_witness:
        stack = compact_size(len(txin.final_script_witness)) + b"".join(
            compact_size(len(w)) + w for w in txin.final_script_witness)
        p.append(_pair(b"\x08", stack))
    if txin.version >= 2:
        p.append(_pair(bytes([IN_PREVIOUS_TXID]), txin.prev_txid))
        p.append(_pair(bytes([IN_OUTPUT_INDEX]), struct.pack("<I", txin.prev_out)))
        for kind, value in ((IN_SEQUENCE, txin.sequence), (IN_REQUIRED_TIME_LOCKTIME, txin.time_locktime),
                            (IN_REQUIRED_HEIGHT_LOCKTIME, txin.height_locktime)):
            if value is not None:
                p.append(_pair(bytes([kind]), struct.pack("<I", value)))
    _write_unknowns(p, txin.proprietary, txin.unknown)
    p.append(b"\x00")
    return p


def _write_output(out: PSBTOutput) -> bytes:
    p: list[bytes] = []
    if out.redeem_script:
        p.append(_pair(b"\x00", out.redeem_script))
    if out.witness_script:
        p.append(_pair(b"\x01", out.witness_script))
    p += [_pair(b"\x02" + k, out.hd_keypaths[k].serialize()) for k in sorted(out.hd_keypaths)]
    if out.version >= 2:
        p.append(_pair(bytes([OUT_AMOUNT]), struct.pack("<q", out.amount)))
        p.append(_pair(bytes([OUT_SCRIPT]), out.script))
    # Core writes an output's proprietary entries before its taproot fields.
    p += [_pair(k, out.proprietary[k].value) for k in sorted(out.proprietary)]
    if out.tap_internal_key != NULL32:
        p.append(_pair(bytes([OUT_TAP_INTERNAL_KEY]), out.tap_internal_key))
    if out.tap_tree:
        tree = b"".join(bytes([d, v]) + compact_size(len(s)) + s for d, v, s in out.tap_tree)
        p.append(_pair(bytes([OUT_TAP_TREE]), tree))
    for xonly in sorted(out.tap_bip32_paths):
        p.append(_pair(bytes([OUT_TAP_BIP32_DERIVATION]) + xonly, _tap_bip32_value(*out.tap_bip32_paths[xonly])))
    p += _musig_participants_pairs(OUT_MUSIG2_PARTICIPANT_PUBKEYS, out.musig2_participants)
    _write_unknowns(p, out.proprietary, out.unknown, with_proprietary=False)
    return b"".join(p) + b"\x00"


def sorted_xpubs(psbt: PSBT) -> list[tuple[KeyOrigin, bytes]]:
    """(origin, xpub) in Core's order: by origin, then by public key and chain code."""
    out = []
    for origin in sorted(psbt.xpubs, key=KeyOrigin.sort_key):
        for xpub in sorted(psbt.xpubs[origin], key=lambda x: (x[45:78], x[13:45])):
            out.append((origin, xpub))
    return out


def encode_psbt(psbt: PSBT) -> bytes:
    """Core's PartiallySignedTransaction::Serialize."""
    ver = psbt.psbt_version
    p: list[bytes] = [PSBT_MAGIC]
    if ver < 2:
        tx = psbt.unsigned_tx()
        assert tx is not None
        p.append(_pair(b"\x00", tx.serialize(with_witness=False)))
    for origin, xpub in sorted_xpubs(psbt):
        p.append(_pair(b"\x01" + xpub, origin.serialize()))
    if ver >= 2:
        p.append(_pair(bytes([GLOBAL_TX_VERSION]), struct.pack("<I", psbt.tx_version)))
        if psbt.fallback_locktime is not None:
            p.append(_pair(bytes([GLOBAL_FALLBACK_LOCKTIME]), struct.pack("<I", psbt.fallback_locktime)))
        p.append(_pair(bytes([GLOBAL_INPUT_COUNT]), compact_size(len(psbt.inputs))))
        p.append(_pair(bytes([GLOBAL_OUTPUT_COUNT]), compact_size(len(psbt.outputs))))
        if psbt.tx_modifiable is not None:
            p.append(_pair(bytes([GLOBAL_TX_MODIFIABLE]), bytes([psbt.tx_modifiable])))
    if ver > 0:
        p.append(_pair(bytes([GLOBAL_VERSION]), struct.pack("<I", ver)))
    _write_unknowns(p, psbt.proprietary, psbt.unknown)
    p.append(b"\x00")
    for txin in psbt.inputs:
        p += _write_input(txin)
    p += [_write_output(o) for o in psbt.outputs]
    return b"".join(p)


def encode_base64_psbt(psbt: PSBT) -> str:
    return binascii.b2a_base64(encode_psbt(psbt), newline=False).decode()


def xpub_base58(xpub: bytes) -> str:
    """The 78-byte serialized extended key of a PSBT_GLOBAL_XPUB, as Base58Check."""
    return base58check_encode(xpub)


# -- the Combiner and joining (Core's PartiallySignedTransaction::Merge, AddInput, AddOutput) --


def _merge_input(mine: PSBTInput, other: PSBTInput) -> None:
    """Core's PSBTInput::Merge: maps gain the other's new keys, empty fields its values."""
    if mine.non_witness_utxo is None and other.non_witness_utxo is not None:
        mine.non_witness_utxo = other.non_witness_utxo
    if not mine.has_witness_utxo() and other.has_witness_utxo():
        mine.witness_utxo = other.witness_utxo
    for name in ("partial_sigs", "ripemd160_preimages", "sha256_preimages", "hash160_preimages",
                 "hash256_preimages", "hd_keypaths", "proprietary", "unknown", "tap_script_sigs",
                 "tap_scripts", "tap_bip32_paths", "musig2_participants"):
        _insert(getattr(mine, name), getattr(other, name))
    for name in ("redeem_script", "witness_script", "final_script_sig", "final_script_witness", "tap_key_sig"):
        if not getattr(mine, name) and getattr(other, name):
            setattr(mine, name, getattr(other, name))
    for name in ("tap_internal_key", "tap_merkle_root"):
        if getattr(mine, name) == NULL32:
            setattr(mine, name, getattr(other, name))
    for mine_map, other_map in ((mine.musig2_pubnonces, other.musig2_pubnonces),
                                (mine.musig2_partial_sigs, other.musig2_partial_sigs)):
        for agg_leaf, per_participant in other_map.items():
            _insert(mine_map.setdefault(agg_leaf, {}), per_participant)
    for name in ("sequence", "time_locktime", "height_locktime"):
        if getattr(mine, name) is None:
            setattr(mine, name, getattr(other, name))


def _merge_output(mine: PSBTOutput, other: PSBTOutput) -> None:
    """Core's PSBTOutput::Merge."""
    for name in ("hd_keypaths", "proprietary", "unknown", "tap_bip32_paths", "musig2_participants"):
        _insert(getattr(mine, name), getattr(other, name))
    for name in ("redeem_script", "witness_script", "tap_tree"):
        if not getattr(mine, name) and getattr(other, name):
            setattr(mine, name, getattr(other, name))
    if mine.tap_internal_key == NULL32:
        mine.tap_internal_key = other.tap_internal_key


def _insert(mine: dict[Any, Any], other: dict[Any, Any]) -> None:
    """std::map::insert of a range: keys already present keep their value."""
    for key, value in other.items():
        mine.setdefault(key, value)


def _merge_xpubs(mine: PSBT, other: PSBT) -> None:
    for origin, xpubs in other.xpubs.items():
        mine.xpubs.setdefault(origin, set()).update(xpubs)


def merge_psbt(mine: PSBT, other: PSBT) -> bool:
    """Core's PartiallySignedTransaction::Merge: False when the transactions differ."""
    mine_id, other_id = mine.unique_id(), other.unique_id()
    if mine_id is None or other_id is None or mine_id != other_id:
        return False
    if mine.psbt_version != other.psbt_version:
        return False
    for a, b in zip(mine.inputs, other.inputs, strict=True):
        _merge_input(a, b)
    for c, d in zip(mine.outputs, other.outputs, strict=True):
        _merge_output(c, d)
    _merge_xpubs(mine, other)
    if mine.fallback_locktime is None:
        mine.fallback_locktime = other.fallback_locktime
    if mine.tx_modifiable is not None or other.tx_modifiable is not None:
        a_flags, b_flags = mine.tx_modifiable or 0, other.tx_modifiable or 0
        # Inputs/outputs modifiable are ANDed; "has SIGHASH_SINGLE" (bit 2) is ORed.
        mine.tx_modifiable = (a_flags & b_flags & ~4) | ((a_flags | b_flags) & 4)
    _insert(mine.proprietary, other.proprietary)
    _insert(mine.unknown, other.unknown)
    return True


def combine_psbts(psbts: list[PSBT]) -> PSBT | None:
    """Core's CombinePSBTs: the first PSBT with every other merged in, or None if incompatible."""
    out = copy.deepcopy(psbts[0])
    for other in psbts[1:]:
        if not merge_psbt(out, other):
            return None
    return out


def add_input(psbt: PSBT, txin: PSBTInput) -> bool:
    """Core's AddInput for version 0 PSBTs (joinpsbts): False for a duplicate outpoint.
    The input loses its signatures: they committed to another transaction."""
    if txin.version != psbt.psbt_version:
        return False
    if any(i.prev_txid == txin.prev_txid and i.prev_out == txin.prev_out for i in psbt.inputs):
        return False
    added = copy.copy(txin)
    added.partial_sigs = {}
    added.final_script_sig = b""
    added.final_script_witness = []
    psbt.inputs.append(added)
    return True


def add_output(psbt: PSBT, out: PSBTOutput) -> bool:
    if out.version != psbt.psbt_version:
        return False
    psbt.outputs.append(out)
    return True
