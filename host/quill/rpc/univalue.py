"""JSON read and written as Bitcoin Core's UniValue does (core-rpc.md §1.1-1.2).

* Numbers keep the text they were written with: a request's `1.0` or `1e2`
  comes back unchanged (`Number`), and amounts print with exactly 8 decimals
  (`Amount`), never through a float.
* Output is compact, non-ASCII passes through, control characters and 0x7f are
  escaped as `\\u00xx`, and `/` is not escaped.
* Reading rejects NaN/Infinity and nesting deeper than 512, as UniValue does.

Encoding runs in the C json encoder: Number and Amount are emitted as a marker
string that cannot occur in user data (a per-process random token behind a
NUL), then the markers are replaced by their bare text.
"""

import codecs
import json
import os
import re
from decimal import Decimal
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Callable

import orjson

from quill.amount import Amount

MAX_DEPTH = 512

_TOKEN = "\x00" + os.urandom(8).hex() + ":"
_ESCAPED_TOKEN = json.dumps(_TOKEN, ensure_ascii=False)[1:-1]
_QUOTED_TOKEN = '"' + _ESCAPED_TOKEN


def _unmark(text: str) -> str:
    """Each marker string, `"<token><number text>"`, replaced by its bare number text:
    split at the markers' openings, each piece after one ends its string at its first quote."""
    pieces = text.split(_QUOTED_TOKEN)
    if len(pieces) == 1:
        return text
    out = [pieces[0]]
    for piece in pieces[1:]:
        close = piece.index('"')
        out.append(piece[:close])
        out.append(piece[close + 1:])
    return "".join(out)


class Number:
    """A JSON number that remembers its literal text."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def is_integer(self) -> bool:
        return all(c in "-0123456789" for c in self.text)

    def __int__(self) -> int:
        return int(self.text)

    def decimal(self) -> Decimal:
        return Decimal(self.text)

    def __eq__(self, other):
        if isinstance(other, Number):
            return self.text == other.text
        if isinstance(other, (int, float, Decimal)) and not isinstance(other, bool):
            return self.decimal() == Decimal(other)
        return NotImplemented

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return f"Number({self.text})"


class RawJSON:
    """JSON text already written as UniValue writes it (the followed node's answer, a rendering kept
    in a cache): dumps writes it out as it is when it is the whole value; inside a larger value it
    is read back and written as any value (the same bytes, more slowly)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class JSONParseError(ValueError):
    pass


class JSONObject(dict):
    """A parsed object whose members repeat a key. UniValue keeps every member:
    a lookup reads the first value, `items()` (and so the writer) gives them
    all in order, and the repeated names are kept for the errors that name them.
    Objects without repeats are plain dicts."""

    __slots__ = ("duplicate_keys", "pairs")

    def items(self):
        return list(self.pairs)


def _object_from_pairs(pairs):
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    obj = JSONObject()
    obj.pairs = pairs
    obj.duplicate_keys = []
    for key, value in pairs:
        if key in obj:
            obj.duplicate_keys.append(key)
        else:
            obj[key] = value
    return obj


def _reject_constant(name):
    raise JSONParseError(f"invalid JSON constant {name}")


def _opens_at_most(text: str, limit: int) -> bool:
    """True when `text` holds at most `limit` of '[' and '{' together. One find per bracket
    (memchr) rather than counting every character: a request is mostly its hex strings."""
    n = 0
    for bracket in "[{":
        at = text.find(bracket)
        while at >= 0:
            n += 1
            if n > limit:
                return False
            at = text.find(bracket, at + 1)
    return True


def _depth_ok(text: str) -> bool:
    """Cheap nesting bound before handing text to the recursive parser."""
    if _opens_at_most(text, MAX_DEPTH):
        return True
    depth = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def loads(text):
    """Parse JSON text as UniValue reads it; raise JSONParseError on failure.
    Bytes go through Core's UTF-8 filter first (decode_utf8)."""
    kind = type(text)
    if kind is bytes or kind is bytearray:
        text = decode_utf8(text)
    elif isinstance(text, memoryview):
        text = decode_utf8(bytes(text))
    elif isinstance(text, (bytes, bytearray)):
        text = decode_utf8(text)
    # A one-character search first (memchr): the two-character one reads every character
    if "\\" in text and "\\u" in text and _has_lone_surrogate_escape(text):
        raise JSONParseError("lone surrogate escape")
    if len(text) > MAX_DEPTH and not _depth_ok(text):  # shorter text cannot nest deeper
        raise JSONParseError("nesting too deep")
    minus_zero = "-" in text and "-0" in text
    # json.JSONDecoder.decode without its Python layers: leading whitespace,
    # one value, trailing whitespace, nothing else.
    start = _WHITESPACE(text, 0).end() if text[:1] in _WS else 0
    if text[start:start + 1] == "{" and not minus_zero and len(text) <= _PLAIN_FIRST_LIMIT:
        # A request object, read with dicts built in C. Every object member is written
        # with a colon, so when the text holds no more colons than the outer object has
        # members, no object anywhere repeats a key and plain dicts are what
        # _object_from_pairs would have made. Otherwise it is read again, member by member.
        value = _scan(_SCAN_PLAIN, text, start)
        if type(value) is dict and text.count(":") == len(value):
            return value
    return _scan(_SCAN_MINUS_ZERO if minus_zero else _SCAN, text, start)


def _scan(scan: Callable[[str, int], tuple[Any, int]], text: str, start: int) -> Any:
    """The one JSON value at `start`, followed by nothing but whitespace."""
    try:
        value, end = scan(text, start)
    except StopIteration as e:
        raise JSONParseError(f"Expecting value at {e.value}") from None
    except (ValueError, RecursionError) as e:
        raise JSONParseError(str(e)) from e
    if end != len(text):
        trailing = _WHITESPACE(text, end)  # always matches, perhaps nothing
        if trailing is None or trailing.end() != len(text):
            raise JSONParseError(f"Extra data at {end}")
    return value


def _int_or_minus_zero(text: str):
    """UniValue keeps a number's text: `-0` stays `-0`."""
    return Number(text) if text == "-0" else int(text)


_DECODER = json.JSONDecoder(parse_float=Number, parse_constant=_reject_constant,
                            object_pairs_hook=_object_from_pairs)
_DECODER_MINUS_ZERO = json.JSONDecoder(parse_float=Number, parse_int=_int_or_minus_zero,
                                       parse_constant=_reject_constant, object_pairs_hook=_object_from_pairs)
_DECODER_PLAIN = json.JSONDecoder(parse_float=Number, parse_constant=_reject_constant)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__
_SCAN_PLAIN = _DECODER_PLAIN.scan_once  # type: ignore[attr-defined]
# Longer objects are read member by member at once: a second reading would cost more than it saves.
_PLAIN_FIRST_LIMIT = 65536
_SCAN_MINUS_ZERO = _DECODER_MINUS_ZERO.scan_once  # type: ignore[attr-defined]
_WS = " \t\n\r"  # JSON's whitespace, the only whitespace UniValue skips
_WHITESPACE = re.compile(r"[ \t\n\r]*").match


# -- Core's UTF-8 filter (univalue/lib/univalue_utffilter.h) ---------------------------
#
# Inside strings UniValue decodes each UTF-8 sequence by its lead byte (C0-DF: 2 bytes,
# E0-EF: 3, F0-F7: 4; anything else, or a byte that is not a continuation, is invalid),
# joins a surrogate pair and re-encodes the code point. So it accepts what Python's
# strict decoder refuses: overlong forms (re-encoded short), lead bytes F5-F7 and F4 90+
# (code points up to 0x1FFFFF, kept as 4 bytes), and an encoded surrogate pair; it
# refuses a lone surrogate, encoded or escaped (\ud800).


def decode_utf8(data: bytes | bytearray) -> str:
    """Request bytes as UniValue reads them. Code points Python cannot hold (above
    0x10FFFF) become surrogate escapes, so `encode_reply` writes the same bytes back."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("utf-8", "quill-univalue")
    except _InvalidUTF8 as e:
        raise JSONParseError("invalid UTF-8") from e


class _InvalidUTF8(ValueError):
    pass


def _sequence(data: bytes | bytearray, i: int):
    """(code point, next index) of the UTF-8 sequence at i, as UniValue's filter reads it."""
    lead = data[i]
    if 0xC0 <= lead < 0xE0:
        n, cp = 1, lead & 0x1F
    elif 0xE0 <= lead < 0xF0:
        n, cp = 2, lead & 0x0F
    elif 0xF0 <= lead < 0xF8:
        n, cp = 3, lead & 0x07
    else:
        raise _InvalidUTF8(f"byte 0x{lead:02x}")
    if i + n >= len(data):
        raise _InvalidUTF8("truncated sequence")
    for b in data[i + 1:i + 1 + n]:
        if b & 0xC0 != 0x80:
            raise _InvalidUTF8("not a continuation byte")
        cp = (cp << 6) | (b & 0x3F)
    return cp, i + 1 + n


def _univalue_error_handler(error: UnicodeError):
    if not isinstance(error, UnicodeDecodeError):
        raise error
    data = error.object
    cp, end = _sequence(data, error.start)
    if 0xD800 <= cp < 0xDC00:            # first half of a surrogate pair: the second must follow
        if end >= len(data) or data[end] < 0x80:
            raise _InvalidUTF8("lone surrogate")
        low, end = _sequence(data, end)
        if not 0xDC00 <= low < 0xE000:
            raise _InvalidUTF8("lone surrogate")
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
    elif 0xDC00 <= cp < 0xE000:
        raise _InvalidUTF8("lone surrogate")
    if cp < 0x80:                        # an overlong ASCII character: as a JSON escape
        return "\\u%04x" % cp, end
    if cp <= 0x10FFFF:
        return chr(cp), end
    raw = bytes([0xF0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3F), 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)])
    return raw.decode("utf-8", "surrogateescape"), end


codecs.register_error("quill-univalue", _univalue_error_handler)

_ESCAPE_RE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
_SURROGATE_HINT_RE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_lone_surrogate_escape(text: str) -> bool:
    """True when a \\uD800-\\uDFFF escape is not half of a pair (UniValue: parse error)."""
    if not _SURROGATE_HINT_RE.search(text):
        return False
    pending_high_end = None
    for m in _ESCAPE_RE.finditer(text):
        value = int(m.group(1), 16) if m.group(1) else None
        is_high = value is not None and 0xD800 <= value < 0xDC00
        is_low = value is not None and 0xDC00 <= value < 0xE000
        if pending_high_end is not None:
            if not (is_low and m.start() == pending_high_end):
                return True
            pending_high_end = None
            continue
        if is_low:
            return True
        if is_high:
            pending_high_end = m.end()
    return pending_high_end is not None


def encode_reply(text: str) -> bytes:
    """Reply text as bytes: strings read by decode_utf8 go back byte for byte, and text
    that cannot be UTF-8 (a lone surrogate from elsewhere) is replaced, never an error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _default(obj):
    if isinstance(obj, (Number, Amount)):
        return _TOKEN + obj.text
    if isinstance(obj, Decimal):
        return _TOKEN + str(obj)
    if isinstance(obj, (bytes, bytearray)):
        return obj.hex()
    if isinstance(obj, tuple):
        return list(obj)
    if isinstance(obj, RawJSON):
        return loads(obj.text)
    raise TypeError(f"cannot encode {type(obj).__name__} as JSON")


def _finish(text: str) -> str:
    if _TOKEN[0] in text or "\\u0000" in text:
        text = _unmark(text)
    if "\x7f" in text:
        text = text.replace("\x7f", "\\u007f")
    return text


# json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False,
# allow_nan=False).encode without its Python layers: the C encoder, made once.
_compact = c_make_encoder(None, _default, encode_basestring, None, ":", ",", False, False, False)


def dumps(value, indent=None) -> str:
    """Write `value` as UniValue::write(indent) would."""
    if indent is None:
        if type(value) is int:  # not bool, not an int subclass: its digits are its JSON
            return str(value)
        if type(value) is RawJSON:
            return value.text
        return _finish("".join(_compact(value, 0)))
    text = json.dumps(value, ensure_ascii=False, indent=indent,
                      separators=(",", ": "), default=_default, allow_nan=False)
    text = _finish(text)
    # UniValue prints an empty container as its opening bracket, a newline,
    # and the closing bracket at the indentation of the line that opened it.
    return _EMPTY_CONTAINER_RE.sub(r"\1\2\3\n\1\4\5", text)


def _orjson_default(obj):
    kind = type(obj)
    if kind is Amount or kind is Number or kind is RawJSON:
        return orjson.Fragment(obj.text)
    if kind is bytes or kind is bytearray:
        return obj.hex()
    # anything else (Decimal, a subclass of dict, list, str or int such as JSONObject): as dumps writes it
    return orjson.Fragment(dumps(obj))


# Subclasses (JSONObject's repeated keys) go to _orjson_default, not orjson's own dict writer.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS


def encode(value) -> bytes:
    """dumps(value) as reply bytes (encode_reply), written by orjson: the same bytes, several
    times faster, for a value without a Python float (orjson writes `1e-05` as `0.00001`; callers
    whose values may hold one use dumps). What orjson refuses (a lone surrogate, an integer beyond
    64 bits, a non-string key, deep nesting) is written by dumps."""
    try:
        out = orjson.dumps(value, default=_orjson_default, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return encode_reply(dumps(value))
    return out.replace(b"\x7f", b"\\u007f") if b"\x7f" in out else out


_EMPTY_CONTAINER_RE = re.compile(r"^( *)(.*)([\[{])([\]}])(,?)$", re.M)


def type_name(value) -> str:
    """UniValue's uvTypeName for a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, Number, Amount, Decimal, float)):
        return "number"
    return "unknown"
