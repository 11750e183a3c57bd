"""Bitcoin's wire primitives: little-endian integers and CompactSize (Core's serialize.h).

Readers parse from a byte buffer with an offset (`BufferReader`, the fast path)
or from any object with `.read(n)` (`StreamReader`). Both raise
`DeserializationError` on truncation, non-canonical CompactSize or sizes above
MAX_SIZE, so a hostile length never allocates memory for it.
"""
import struct

from quill import compiled

# This module is compiled by mypyc (quill.compiled): byte-level code is native then.
_NATIVE = compiled.PURE_REASON is None

# Core's MAX_SIZE: the largest CompactSize a reader accepts.
MAX_SIZE = 0x02000000

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")


class DeserializationError(ValueError):
    """The bytes do not form the expected structure."""


def compact_size(n: int) -> bytes:
    """Encode `n` as a CompactSize (the shortest form, as Core writes it)."""
    if n < 0xFD:
        return bytes((n,))
    if n <= 0xFFFF:
        return b"\xfd" + _U16.pack(n)
    if n <= 0xFFFFFFFF:
        return b"\xfe" + _U32.pack(n)
    return b"\xff" + _U64.pack(n)


# Encodings of the common small lengths, so hot loops avoid a call.
COMPACT_SIZE_SMALL = tuple(bytes((i,)) for i in range(0xFD))


def var_bytes(data: bytes) -> bytes:
    """CompactSize length prefix followed by the data."""
    n = len(data)
    return (COMPACT_SIZE_SMALL[n] if n < 0xFD else compact_size(n)) + data


def _check_compact(first: int, n: int) -> int:
    # Core's ReadCompactSize: each longer form must be needed, and the value
    # must not exceed MAX_SIZE.
    if (first == 0xFD and n < 0xFD) or (first == 0xFE and n < 0x10000) or (
            first == 0xFF and n < 0x100000000):
        raise DeserializationError("non-canonical ReadCompactSize()")
    if n > MAX_SIZE:
        raise DeserializationError("ReadCompactSize(): size too large")
    return n


class Reader:
    """What the transaction reader needs of a source. A common base so that code compiled by mypyc
    (quill.compiled) calls the readers' methods directly, not as Python attribute lookups."""

    __slots__ = ()

    def remaining(self) -> int | None:
        raise NotImplementedError

    def tell(self) -> int:
        raise NotImplementedError

    def read(self, n: int) -> bytes:
        raise NotImplementedError

    def u8(self) -> int:
        raise NotImplementedError

    def u32(self) -> int:
        raise NotImplementedError

    def i64(self) -> int:
        raise NotImplementedError

    def compact_size(self) -> int:
        raise NotImplementedError

    def var_bytes(self) -> bytes:
        raise NotImplementedError


class BufferReader(Reader):
    """Reads from `data` (bytes) starting at `pos`; `end` bounds the reader."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data, pos: int = 0, end: int | None = None):
        self.data: bytes = data if isinstance(data, bytes) else bytes(data)
        self.pos = pos
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int) -> bytes:
        p = self.pos
        q = p + n
        if q > self.end:
            raise DeserializationError("end of data")
        self.pos = q
        return self.data[p:q]

    def u8(self) -> int:
        p = self.pos
        if p >= self.end:
            raise DeserializationError("end of data")
        self.pos = p + 1
        return self.data[p]

    def u32(self) -> int:
        p = self.pos
        if p + 4 > self.end:
            raise DeserializationError("end of data")
        self.pos = p + 4
        d = self.data
        if _NATIVE:  # byte by byte: native code once compiled, cheaper than the struct call
            return d[p] | (d[p + 1] << 8) | (d[p + 2] << 16) | (d[p + 3] << 24)
        return _U32.unpack_from(d, p)[0]  # interpreted, the struct call is the cheaper

    def i64(self) -> int:
        p = self.pos
        if p + 8 > self.end:
            raise DeserializationError("end of data")
        self.pos = p + 8
        return _I64.unpack_from(self.data, p)[0]

    def compact_size(self) -> int:
        p = self.pos
        if p >= self.end:
            raise DeserializationError("end of data")
        first = self.data[p]
        if first < 0xFD:
            self.pos = p + 1
            return first
        width = 2 if first == 0xFD else 4 if first == 0xFE else 8
        if p + 1 + width > self.end:
            raise DeserializationError("end of data")
        self.pos = p + 1 + width
        n = int.from_bytes(self.data[p + 1:p + 1 + width], "little")
        return _check_compact(first, n)

    def var_bytes(self) -> bytes:
        p = self.pos
        if p < self.end and self.data[p] < 0xFD:
            # Fast path for the common one-byte length.
            q = p + 1 + self.data[p]
            if q > self.end:
                raise DeserializationError("end of data")
            self.pos = q
            return self.data[p + 1:q]
        return self.read(self.compact_size())


class StreamReader(Reader):
    """Reads from a file-like object; the amount left is unknown (remaining() is None)."""

    __slots__ = ("stream", "count")

    def __init__(self, stream):
        self.stream = stream
        self.count = 0

    def remaining(self) -> int | None:
        return None

    def tell(self) -> int:
        return self.count

    def read(self, n: int) -> bytes:
        # Read in bounded chunks so that a hostile length costs no more memory
        # than the bytes that are really there.
        parts = []
        left = n
        while left:
            chunk = self.stream.read(min(left, 1 << 20))
            if not chunk:
                raise DeserializationError("end of data")
            parts.append(chunk)
            left -= len(chunk)
        self.count += n
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def u8(self) -> int:
        return self.read(1)[0]

    def u32(self) -> int:
        return _U32.unpack(self.read(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self.read(8))[0]

    def compact_size(self) -> int:
        first = self.u8()
        if first < 0xFD:
            return first
        width = 2 if first == 0xFD else 4 if first == 0xFE else 8
        return _check_compact(first, int.from_bytes(self.read(width), "little"))

    def var_bytes(self) -> bytes:
        return self.read(self.compact_size())


def reader_for(source) -> Reader:
    """A reader for bytes-like data or a stream with .read(n)."""
    if isinstance(source, Reader):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return BufferReader(source)
    return StreamReader(source)
