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

import json
import os
import re
from decimal import Decimal

from quill.amount import Amount

MAX_DEPTH = 512

_TOKEN = "\x00" + os.urandom(8).hex() + ":"
_ESCAPED_TOKEN = json.dumps(_TOKEN, ensure_ascii=False)[1:-1]
_MARKER_RE = re.compile('"' + re.escape(_ESCAPED_TOKEN) + '([^"]*)"')


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


class JSONParseError(ValueError):
    pass


class JSONObject(dict):
    """A parsed object. UniValue keeps repeated keys; the first value is the
    one read, and the repeated names are kept for the errors that name them."""

    __slots__ = ("duplicate_keys",)


def _object_from_pairs(pairs):
    obj = JSONObject()
    obj.duplicate_keys = None
    for key, value in pairs:
        if key in obj:
            obj.duplicate_keys = (obj.duplicate_keys or []) + [key]
        else:
            obj[key] = value
    return obj


def _reject_constant(name):
    raise JSONParseError(f"invalid JSON constant {name}")


def _depth_ok(text: str) -> bool:
    """Cheap nesting bound before handing text to the recursive parser."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
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
    """Parse JSON text as UniValue reads it; raise JSONParseError on failure."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise JSONParseError("invalid UTF-8") from e
    if not _depth_ok(text):
        raise JSONParseError("nesting too deep")
    try:
        return json.loads(text, parse_float=Number,
                          parse_constant=_reject_constant, object_pairs_hook=_object_from_pairs)
    except (ValueError, RecursionError) as e:
        raise JSONParseError(str(e)) from e


def _default(obj):
    if isinstance(obj, (Number, Amount)):
        return _TOKEN + obj.text
    if isinstance(obj, Decimal):
        return _TOKEN + str(obj)
    if isinstance(obj, (bytes, bytearray)):
        return obj.hex()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"cannot encode {type(obj).__name__} as JSON")


def _finish(text: str) -> str:
    if _TOKEN[0] in text or "\\u0000" in text:
        text = _MARKER_RE.sub(r"\1", text)
    if "\x7f" in text:
        text = text.replace("\x7f", "\\u007f")
    return text


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                            default=_default, check_circular=False, allow_nan=False)


def dumps(value, indent=None) -> str:
    """Write `value` as UniValue::write(indent) would."""
    if indent is None:
        return _finish(_compact.encode(value))
    text = json.dumps(value, ensure_ascii=False, indent=indent,
                      separators=(",", ": "), default=_default, allow_nan=False)
    text = _finish(text)
    # UniValue prints an empty container as its opening bracket, a newline,
    # and the closing bracket at the indentation of the line that opened it.
    return _EMPTY_CONTAINER_RE.sub(r"\1\2\3\n\1\4\5", text)


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
