"""Canonical CBOR (RFC 8949) for the device protocol: the subset the protocol
uses, in its deterministic form (RFC 8949 §4.2.1), and nothing else.

Accepted data model: unsigned and negative integers (-2**64 .. 2**64-1), byte
strings, UTF-8 text strings, arrays, maps with integer or text keys, false,
true and null. Rejected with CBORError: floats, tags, undefined and other simple
values, indefinite lengths, any integer or length not in its shortest form,
map keys not in bytewise order of their encodings, duplicate keys, nesting
deeper than MAX_DEPTH, trailing bytes and truncated input.

Maps are encoded with explicitly sorted keys because MicroPython dicts are not
insertion-ordered (and because §4.2.1 requires the order anyway).
"""
import struct

from quillfw.compat import const

MAX_DEPTH = const(16)
VIEW_ABOVE = const(64)

_UINT = const(0)
_NINT = const(1)
_BYTES = const(2)
_TEXT = const(3)
_ARRAY = const(4)
_MAP = const(5)
_TAG = const(6)
_SIMPLE = const(7)

_FALSE = const(0xF4)
_TRUE = const(0xF5)
_NULL = const(0xF6)

_UINT64_LIMIT = 1 << 64


class CBORError(ValueError):
    """Input that is not canonical CBOR of the supported subset."""


# ---- encoding ---------------------------------------------------------------

def _head(out, major, value):
    """Initial byte plus argument in its shortest form (RFC 8949 §4.2.1)."""
    mt = major << 5
    if value < 24:
        out.append(mt | value)
    elif value < 0x100:
        out.append(mt | 24)
        out.append(value)
    elif value < 0x10000:
        out.append(mt | 25)
        out.extend(struct.pack(">H", value))
    elif value < 0x100000000:
        out.append(mt | 26)
        out.extend(struct.pack(">I", value))
    else:
        out.append(mt | 27)
        out.extend(struct.pack(">Q", value))


def _encode_into(out, obj, depth):
    if depth > MAX_DEPTH:
        raise CBORError("nesting deeper than %d" % MAX_DEPTH)
    if obj is None:
        out.append(_NULL)
    elif obj is True:
        out.append(_TRUE)
    elif obj is False:
        out.append(_FALSE)
    elif isinstance(obj, int):
        if obj >= 0:
            if obj >= _UINT64_LIMIT:
                raise CBORError("integer out of range")
            _head(out, _UINT, obj)
        else:
            if -1 - obj >= _UINT64_LIMIT:
                raise CBORError("integer out of range")
            _head(out, _NINT, -1 - obj)
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        _head(out, _BYTES, len(obj))
        out.extend(obj)
    elif isinstance(obj, str):
        data = obj.encode("utf-8")
        _head(out, _TEXT, len(data))
        out.extend(data)
    elif isinstance(obj, (list, tuple)):
        _head(out, _ARRAY, len(obj))
        for item in obj:
            _encode_into(out, item, depth + 1)
    elif isinstance(obj, dict):
        _encode_map(out, obj, depth)
    else:
        raise CBORError("cannot encode " + type(obj).__name__)


def _encode_map(out, obj, depth):
    entries = []
    for key in obj:
        if not isinstance(key, (int, str)) or isinstance(key, bool):
            raise CBORError("map key must be an integer or text string")
        encoded_key = bytearray()
        _encode_into(encoded_key, key, depth + 1)
        entries.append((bytes(encoded_key), key))
    # §4.2.1: keys sorted in bytewise lexicographic order of their encodings
    entries.sort(key=lambda entry: entry[0])
    _head(out, _MAP, len(entries))
    for encoded_key, key in entries:
        out.extend(encoded_key)
        _encode_into(out, obj[key], depth + 1)


def encode(obj):
    """Canonical CBOR encoding of obj, as bytes."""
    out = bytearray()
    _encode_into(out, obj, 0)
    return bytes(out)


def encode_into(out, obj):
    """Write the canonical CBOR encoding of obj to out, which has append(byte) and
    extend(bytes-like) (a bytearray, or a writer that passes the pieces on: the
    device streams its replies this way, never holding a whole body)."""
    _encode_into(out, obj, 0)


class Counter:
    """An out for encode_into that only counts: the encoding's length, without it."""

    def __init__(self):
        self.n = 0

    def append(self, byte):
        self.n += 1

    def extend(self, data):
        self.n += len(data)


def encoded_size(obj):
    """len(encode(obj)) without encoding it (CBORError as encode would raise)."""
    counter = Counter()
    _encode_into(counter, obj, 0)
    return counter.n


# ---- decoding ---------------------------------------------------------------

class _Decoder:
    def __init__(self, data, views=False):
        self.data = data
        self.pos = 0
        self.views = views

    def _take(self, n):
        start = self.pos
        end = start + n
        if end > len(self.data):
            raise CBORError("truncated input")
        self.pos = end
        return start

    def _argument(self, info):
        """The head's argument; §4.2.1 requires the shortest form."""
        if info < 24:
            return info
        if info == 24:
            value = self.data[self._take(1)]
            minimum = 24
        elif info == 25:
            start = self._take(2)
            value = struct.unpack(">H", self.data[start:start + 2])[0]
            minimum = 0x100
        elif info == 26:
            start = self._take(4)
            value = struct.unpack(">I", self.data[start:start + 4])[0]
            minimum = 0x10000
        elif info == 27:
            start = self._take(8)
            value = struct.unpack(">Q", self.data[start:start + 8])[0]
            minimum = 0x100000000
        elif info == 31:
            raise CBORError("indefinite length not allowed")
        else:
            raise CBORError("reserved additional information value")
        if value < minimum:
            raise CBORError("integer or length not in shortest form")
        return value

    def _length(self, info):
        n = self._argument(info)
        if n > len(self.data) - self.pos:
            raise CBORError("truncated input")
        return n

    def item(self, depth):
        if depth > MAX_DEPTH:
            raise CBORError("nesting deeper than %d" % MAX_DEPTH)
        initial = self.data[self._take(1)]
        major = initial >> 5
        info = initial & 0x1F
        if major == _UINT:
            return self._argument(info)
        if major == _NINT:
            return -1 - self._argument(info)
        if major == _BYTES:
            start = self._take(self._length(info))
            if self.views and self.pos - start > VIEW_ABOVE:
                return self.data[start:self.pos]
            return bytes(self.data[start:self.pos])
        if major == _TEXT:
            start = self._take(self._length(info))
            try:
                return str(bytes(self.data[start:self.pos]), "utf-8")
            except UnicodeError:
                raise CBORError("text string is not valid UTF-8") from None
        if major == _ARRAY:
            # every item takes at least one byte: a bound before allocating
            count = self._length(info)
            items = [None] * count      # one block of its final size, not grown
            for i in range(count):
                items[i] = self.item(depth + 1)
            return items
        if major == _MAP:
            return self._map(self._length(info), depth)
        if major == _TAG:
            raise CBORError("tags not allowed")
        if initial == _FALSE:
            return False
        if initial == _TRUE:
            return True
        if initial == _NULL:
            return None
        if 25 <= info <= 27:
            raise CBORError("floating-point numbers not allowed")
        raise CBORError("simple value not allowed")

    def _map(self, count, depth):
        result = {}
        previous_key = None
        for _ in range(count):
            start = self.pos
            key = self.item(depth + 1)
            if not isinstance(key, (int, str)) or isinstance(key, bool):
                raise CBORError("map key must be an integer or text string")
            encoded_key = bytes(self.data[start:self.pos])
            if previous_key is not None:
                if encoded_key == previous_key:
                    raise CBORError("duplicate map key")
                if encoded_key < previous_key:
                    raise CBORError("map keys not in canonical order")
            previous_key = encoded_key
            result[key] = self.item(depth + 1)
        return result


def decode(data, views=False):
    """The single canonical CBOR item that is all of data (bytes-like). views (data
    must then be a memoryview): byte strings longer than VIEW_ABOVE come back as
    views of data instead of copies, valid as long as data is."""
    decoder = _Decoder(data, views)
    if not len(data):
        raise CBORError("empty input")
    value = decoder.item(0)
    if decoder.pos != len(data):
        raise CBORError("trailing bytes after CBOR item")
    return value
