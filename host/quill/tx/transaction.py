"""Bitcoin transactions and their wire format (Core's primitives/transaction.h, BIP144).

Data model (plain, mutable values):
    Transaction(version, vin, vout, locktime)
    TxIn(prevout: OutPoint(hash, n), script_sig, sequence, witness: list[bytes])
    TxOut(value, script_pubkey)
Hashes (OutPoint.hash, txid(), wtxid()) are bytes in internal order; use
`hash_to_hex` / `txid_hex()` for Core's display form. `version`, `n`,
`sequence` and `locktime` are unsigned 32-bit; `value` is signed 64-bit sats.
Scripts and witness items must be `bytes` (immutable): the serialized forms are
cached and the cache is checked against the current field values.
"""
import struct
from typing import Sequence

from quill.consensus import WITNESS_SCALE_FACTOR

from .hashes import hash_to_hex, sha256d
from .serialize import COMPACT_SIZE_SMALL, BufferReader, DeserializationError, Reader, compact_size, reader_for

_U32 = struct.Struct("<I")
_Q_I = struct.Struct("<q")

NULL_HASH = bytes(32)
COINBASE_INDEX = 0xFFFFFFFF
SEQUENCE_FINAL = 0xFFFFFFFF


def _cs(n):
    return COMPACT_SIZE_SMALL[n] if n < 0xFD else compact_size(n)


class OutPoint:
    __slots__ = ("hash", "n")

    def __init__(self, hash: bytes = NULL_HASH, n: int = COINBASE_INDEX):
        self.hash = hash
        self.n = n

    def is_null(self) -> bool:
        return self.n == COINBASE_INDEX and self.hash == NULL_HASH

    def serialize(self) -> bytes:
        return self.hash + _U32.pack(self.n)

    def __eq__(self, other):
        return isinstance(other, OutPoint) and self.hash == other.hash and self.n == other.n

    def __hash__(self):
        return hash((self.hash, self.n))

    def __repr__(self):
        return f"OutPoint({hash_to_hex(self.hash)}:{self.n})"


class TxIn:
    __slots__ = ("prevout", "script_sig", "sequence", "witness")

    def __init__(self, prevout: OutPoint | None = None, script_sig: bytes = b"",
                 sequence: int = SEQUENCE_FINAL, witness=None):
        self.prevout = OutPoint() if prevout is None else prevout
        self.script_sig = script_sig
        self.sequence = sequence
        self.witness = [] if witness is None else witness

    def __eq__(self, other):
        return (isinstance(other, TxIn) and self.prevout == other.prevout
                and self.script_sig == other.script_sig and self.sequence == other.sequence
                and list(self.witness) == list(other.witness))

    def __repr__(self):
        return (f"TxIn({self.prevout!r}, script_sig={self.script_sig.hex()}, "
                f"sequence={self.sequence}, witness={[w.hex() for w in self.witness]})")


class TxOut:
    __slots__ = ("value", "script_pubkey")

    def __init__(self, value: int = -1, script_pubkey: bytes = b""):
        self.value = value
        self.script_pubkey = script_pubkey

    def serialize(self) -> bytes:
        return _Q_I.pack(self.value) + _cs(len(self.script_pubkey)) + self.script_pubkey

    def __eq__(self, other):
        return (isinstance(other, TxOut) and self.value == other.value
                and self.script_pubkey == other.script_pubkey)

    def __repr__(self):
        return f"TxOut({self.value}, {self.script_pubkey.hex()})"


class Transaction:
    __slots__ = ("version", "vin", "vout", "locktime", "_cache")

    def __init__(self, version: int = 2, vin=None, vout=None, locktime: int = 0):
        self.version = version
        self.vin = [] if vin is None else vin
        self.vout = [] if vout is None else vout
        self.locktime = locktime
        self._cache: list | None = None

    # -- reading -------------------------------------------------------------

    @classmethod
    def read_from(cls, source, allow_witness: bool = True) -> "Transaction":
        """Read one transaction from bytes or a stream, leaving what follows.

        `allow_witness=False` is Core's TX_NO_WITNESS (legacy) reading,
        True the extended BIP144 reading. Raises DeserializationError.
        """
        return _read_transaction(reader_for(source), allow_witness)

    @classmethod
    def from_bytes(cls, data, allow_witness: bool = True) -> "Transaction":
        """Parse exactly one transaction; trailing bytes are an error."""
        r = reader_for(data)
        tx = _read_transaction(r, allow_witness)
        if r.remaining():
            raise DeserializationError("trailing bytes after transaction")
        return tx

    @classmethod
    def from_hex(cls, hexstr: str, allow_witness: bool = True) -> "Transaction":
        try:
            data = bytes.fromhex(hexstr)
        except ValueError:
            raise DeserializationError("not hex") from None
        return cls.from_bytes(data, allow_witness)

    # -- writing -------------------------------------------------------------

    def serialize(self, with_witness: bool = True) -> bytes:
        """Core's serialization; the BIP144 form only when some input has witness data."""
        wit, nowit = self.serialized_forms()
        return wit if with_witness else nowit

    def to_bytes(self, with_witness: bool = True) -> bytes:
        # a def, not `to_bytes = serialize`: mypyc's native classes take no method aliases
        return self.serialize(with_witness)

    def write_to(self, stream, with_witness: bool = True) -> int:
        return stream.write(self.serialize(with_witness))

    def hex(self, with_witness: bool = True) -> str:
        return self.serialize(with_witness).hex()

    def serialized_forms(self):
        """(serialization with witness, serialization without witness), cached."""
        state = self._state()
        cache = self._cache
        if cache is not None and cache[0] == state:
            return cache[1], cache[2]
        wit, nowit = _serialize(self)
        self._cache = [state, wit, nowit, None, None]
        return wit, nowit

    def _state(self) -> tuple:
        # Everything the serialization depends on, as one flat tuple (fewer objects than a tuple
        # per input): each input's fixed fields and its stack's length, then the stack's items.
        # Comparing two states is cheap when nothing changed: tuple comparison short-cuts
        # identical objects.
        vin: Sequence[TxIn] = self.vin  # typed views: compiled, each item's fields are read directly
        vout: Sequence[TxOut] = self.vout
        fields: list = [self.version, self.locktime, len(vin), len(vout)]
        for i in vin:
            prevout = i.prevout
            witness = i.witness
            fields.append(prevout.hash)
            fields.append(prevout.n)
            fields.append(i.script_sig)
            fields.append(i.sequence)
            fields.append(len(witness))
            fields.extend(witness)
        for o in vout:
            fields.append(o.value)
            fields.append(o.script_pubkey)
        return tuple(fields)

    # -- identity and size ---------------------------------------------------

    def txid(self) -> bytes:
        """Double-SHA256 of the no-witness serialization, internal byte order."""
        wit, nowit = self.serialized_forms()
        cache = self._cache
        assert cache is not None   # serialized_forms() filled it
        if cache[3] is None:
            cache[3] = sha256d(nowit)
        return cache[3]

    def wtxid(self) -> bytes:
        wit, nowit = self.serialized_forms()
        cache = self._cache
        assert cache is not None   # serialized_forms() filled it
        if cache[4] is None:
            cache[4] = cache[3] if wit is nowit and cache[3] is not None else sha256d(wit)
        return cache[4]

    def txid_hex(self) -> str:
        return hash_to_hex(self.txid())

    def wtxid_hex(self) -> str:
        return hash_to_hex(self.wtxid())

    def has_witness(self) -> bool:
        for i in self.vin:
            if i.witness:
                return True
        return False

    def is_coinbase(self) -> bool:
        return len(self.vin) == 1 and self.vin[0].prevout.is_null()

    def size(self) -> int:
        """Total size: the serialization with witness (Core's ComputeTotalSize)."""
        return len(self.serialized_forms()[0])

    def weight(self) -> int:
        wit, nowit = self.serialized_forms()
        return len(nowit) * (WITNESS_SCALE_FACTOR - 1) + len(wit)

    def vsize(self) -> int:
        return (self.weight() + WITNESS_SCALE_FACTOR - 1) // WITNESS_SCALE_FACTOR

    def __eq__(self, other):
        return (isinstance(other, Transaction) and self.version == other.version
                and self.locktime == other.locktime and self.vin == other.vin
                and self.vout == other.vout)

    def __repr__(self):
        return (f"Transaction(version={self.version}, vin={self.vin!r}, vout={self.vout!r}, "
                f"locktime={self.locktime})")



class StoredTransaction(Transaction):
    """A transaction that is never changed once decoded (quill.wallet.stored_tx: the wallet store's),
    whose state is taken once instead of rebuilt at each txid(), wtxid() or serialize().

    Defined here rather than beside the wallet store: mypyc compiles this module, and an
    interpreted class cannot subclass a compiled one."""
    __slots__ = ()

    def _state(self) -> tuple:
        cache = self._cache
        return Transaction._state(self) if cache is None else cache[0]


def _serialize(tx):
    """(with-witness bytes, no-witness bytes); the same object when there is no witness."""
    pack32 = _U32.pack
    parts = [pack32(tx.version)]
    vin = tx.vin
    parts.append(_cs(len(vin)))
    for i in vin:
        s = i.script_sig
        parts += (i.prevout.hash, pack32(i.prevout.n), _cs(len(s)), s, pack32(i.sequence))
    vout = tx.vout
    parts.append(_cs(len(vout)))
    packq = _Q_I.pack
    for o in vout:
        s = o.script_pubkey
        parts += (packq(o.value), _cs(len(s)), s)
    lock = pack32(tx.locktime)
    body = b"".join(parts)
    nowit = body + lock
    if not tx.has_witness():
        return nowit, nowit
    # BIP144: marker 0x00, flag 0x01 after the version, stacks before the locktime.
    wparts = [body[:4], b"\x00\x01", body[4:]]
    for i in vin:
        stack = i.witness
        wparts.append(_cs(len(stack)))
        for item in stack:
            wparts += (_cs(len(item)), item)
    wparts.append(lock)
    return b"".join(wparts), nowit


def _count(r: Reader) -> int:
    """A vector's CompactSize count (at most MAX_SIZE). Its items are then read one by one, as
    Core does: a count larger than the data allocates nothing and fails at the first item that
    does not fit, with that item's error (Core's message, which decodepsbt shows)."""
    return r.compact_size()


def _read_inputs(r: Reader) -> list[TxIn]:
    vin = []
    for _ in range(_count(r)):
        prev = OutPoint(r.read(32), r.u32())
        vin.append(TxIn(prev, r.var_bytes(), r.u32(), []))
    return vin


def _read_outputs(r: Reader) -> list[TxOut]:
    vout = []
    for _ in range(_count(r)):
        vout.append(TxOut(r.i64(), r.var_bytes()))
    return vout


def _read_transaction(r: Reader, allow_witness: bool) -> Transaction:
    """Core's UnserializeTransaction (primitives/transaction.h), BIP144 when allowed."""
    start = r.tell()
    version = r.u32()
    flags = 0
    vin = _read_inputs(r)
    if not vin and allow_witness:
        # Either an empty input vector or the BIP144 marker: the flag byte follows.
        flags = r.u8()
        if flags:
            vin = _read_inputs(r)
            vout = _read_outputs(r)
        else:
            vout = []
    else:
        vout = _read_outputs(r)
    witness_start = r.tell()
    if flags & 1 and allow_witness:
        flags ^= 1
        has_witness = False
        for txin in vin:
            stack = txin.witness
            for _ in range(_count(r)):
                stack.append(r.var_bytes())
            if stack:
                has_witness = True
        if not has_witness:
            raise DeserializationError("Superfluous witness record")
    if flags:
        raise DeserializationError("Unknown transaction optional data")
    locktime_pos = r.tell()
    locktime = r.u32()
    tx = Transaction(version, vin, vout, locktime)
    if isinstance(r, BufferReader):
        # Cache the serialized forms straight from the input bytes.
        data = r.data
        end = r.tell()
        wit = data[start:end]
        if witness_start == locktime_pos:
            # No witness section: the input bytes are the canonical serialization.
            nowit = wit
        else:
            # Drop the marker/flag and the witness section (BIP144).
            nowit = data[start:start + 4] + data[start + 6:witness_start] + data[locktime_pos:end]
        tx._cache = [tx._state(), wit, nowit, None, None]
    return tx
