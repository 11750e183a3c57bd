"""JSON read and written as quill.rpc.univalue does, in bounded slices, for large requests.

Python's C JSON scanner and encoder run a whole document in one call holding the GIL: 150 ms
for a 30 MB string, during which no other client's request moves (the event loop needs the GIL
too). Here every C call is bounded: containers are walked in Python and handed to the C scanner
only in windows of WINDOW characters, long strings are found and decoded SLICE characters at a
time, and the writer encodes long strings and long containers piece by piece. Between pieces
the interpreter switches threads as usual, so the loop answers meanwhile.

The results are those of univalue.loads and univalue.dumps (tests/rpc/test_univalue_sliced.py
compares them): same values (Number, JSONObject for repeated keys, -0), same refusals (depth
above MAX_DEPTH, lone surrogates, control characters, constants), same bytes written.
"""
from __future__ import annotations

import codecs
import re
import time
from array import array
from collections.abc import Callable
from json.decoder import scanstring as _c_scanstring  # type: ignore[attr-defined]
from json.encoder import encode_basestring
from typing import Any

from quill.rpc import univalue
from quill.rpc.univalue import JSONParseError

SLICE = 1 << 18        # characters of a long string (or bytes of a body) handled per C call
WINDOW = 1024          # characters a container is first tried in, whole, by the C scanner
FLAT_RUN = 1024        # elements of a long container encoded per C call
MAX_FAILED_WINDOWS = 4096  # then containers are only walked: a hostile nesting cannot make windows cost more

_UNSET = object()


def breathe() -> None:
    """Between two slices: let go of the interpreter for a moment, so a thread waiting for it
    (the event loop) takes it now rather than at the next switch interval."""
    time.sleep(0)

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# the tokens of a string's body up to its closing quote: plain runs, \uXXXX, other escapes
_STRING_TOKENS = re.compile(r'(?:[^"\\]+|\\u[0-9a-fA-F]{4}|\\[^u])*')
_HIGH_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LITERALS = (("true", True), ("false", False), ("null", None))


# -- reading -------------------------------------------------------------------------------


def decode(data: bytes | bytearray) -> str:
    """The body as text, as univalue.decode_utf8 gives it, decoded SLICE bytes at a time (a body
    that is not strict UTF-8 goes through Core's filter whole: rare, and still correct)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    parts = []
    view = memoryview(data)
    try:
        for start in range(0, len(data), SLICE):
            parts.append(decoder.decode(view[start:start + SLICE]))
            breathe()
        parts.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError:
        parts = []
        view.release()
        return univalue.decode_utf8(data)
    view.release()
    return "".join(parts)


def loads(data: bytes | bytearray | str, on_element: Callable[[Any], None] | None = None) -> Any:
    """univalue.loads, in bounded slices. With `on_element`, a top-level array too long to be read
    at once comes back as a Batch: the whole document is checked as univalue.loads checks it, each
    element is shown to `on_element` and dropped, and only its place is kept (a giant batch never
    has all its requests in memory at once)."""
    text = decode(data) if isinstance(data, (bytes, bytearray)) else data
    if _contains(text, "\\u") and univalue._has_lone_surrogate_escape(text):
        raise JSONParseError("lone surrogate escape")
    minus_zero = _contains(text, "-0")
    reader = _Reader(text, univalue._SCAN_MINUS_ZERO if minus_zero else univalue._SCAN, minus_zero)
    if on_element is None:
        return reader.value()
    batch = Batch(reader)
    value = reader.value(batch, on_element)
    return batch if value is batch else value


class Batch:
    """A top-level array known by its elements' places in the text: each is read again when
    its turn comes (element), in the same bounded slices."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.starts = array("q")
        self.ends = array("q")
        self.lane = ""   # where the batch runs, for the server (set by the dispatcher)

    def __len__(self) -> int:
        return len(self.starts)

    def element(self, i: int) -> Any:
        reader = self.reader
        piece = _Reader(reader.text[self.starts[i]:self.ends[i]], reader.scan, reader.minus_zero)
        piece.failed_windows = MAX_FAILED_WINDOWS if reader.failed_windows >= MAX_FAILED_WINDOWS else 0
        return piece.value()

    def values(self) -> list[Any]:
        return [self.element(i) for i in range(len(self))]


def _contains(text: str, pattern: str) -> bool:
    """`pattern in text`, a slice at a time (a two-character search runs ~1 GB/s: 35 ms on 30 MB)."""
    overlap = len(pattern) - 1
    for start in range(0, len(text), SLICE):
        if text.find(pattern, start, start + SLICE + overlap) >= 0:
            return True
    return False


class _Reader:
    """One document, walked with an explicit stack (no recursion, whatever the nesting)."""

    def __init__(self, text: str, scan: Any, minus_zero: bool) -> None:
        self.text = text
        self.scan = scan
        self.minus_zero = minus_zero
        self.failed_windows = 0

    def skip(self, pos: int) -> int:
        text, end = self.text, len(self.text)
        while True:
            stop = min(end, pos + SLICE)
            reached = _WHITESPACE.match(text, pos, stop).end()  # type: ignore[union-attr]  # always matches
            if reached < stop or stop == end:
                return reached
            pos = reached

    def value(self, batch: Batch | None = None, on_element: Callable[[Any], None] | None = None) -> Any:
        """The document's value; with `batch`, a top-level array that cannot be read in one
        window is returned as `batch`, its elements given to `on_element` and not kept."""
        text = self.text
        end = len(text)
        stack: list[list[Any]] = []   # [items, is_object, pending key]
        pos = self.skip(0)
        element_start = 0
        while True:
            if pos >= end:
                raise JSONParseError("Expecting value")
            c = text[pos]
            value: Any = _UNSET
            if len(stack) == 1:
                element_start = pos
            if c == "{" or c == "[":
                value, pos = self.window(pos, len(stack))
                if value is _UNSET:
                    if len(stack) >= univalue.MAX_DEPTH:
                        raise JSONParseError("nesting too deep")
                    pos = self.skip(pos + 1)
                    if text.startswith("}" if c == "{" else "]", pos):
                        value = {} if c == "{" else []
                        pos += 1
                    else:
                        frame: list[Any] = [[], c == "{", None]
                        stack.append(frame)
                        if c == "{":
                            pos = self.key(pos, frame)
                        continue
            elif c == '"':
                value, pos = self.string(pos)
            else:
                value, pos = self.scalar(pos)
            # the value goes into its container; containers that end here close
            while True:
                if not stack:
                    if self.skip(pos) != end:
                        raise JSONParseError("Extra data")
                    return value
                frame = stack[-1]
                if batch is not None and len(stack) == 1 and not frame[1]:
                    assert on_element is not None
                    on_element(value)
                    batch.starts.append(element_start)
                    batch.ends.append(pos)
                    value = None
                else:
                    frame[0].append((frame[2], value) if frame[1] else value)
                pos = self.skip(pos)
                ch = text[pos:pos + 1]
                if ch == ",":
                    pos = self.skip(pos + 1)
                    if frame[1]:
                        pos = self.key(pos, frame)
                    break
                if ch != ("}" if frame[1] else "]"):
                    raise JSONParseError("Expecting ',' delimiter")
                pos += 1
                stack.pop()
                if batch is not None and not stack and not frame[1]:
                    value = batch
                else:
                    value = univalue._object_from_pairs(frame[0]) if frame[1] else frame[0]

    def window(self, pos: int, depth: int) -> tuple[Any, int]:
        """The container at `pos` read whole by the C scanner when it ends within WINDOW
        characters (and cannot nest too deep there), else _UNSET."""
        if self.failed_windows >= MAX_FAILED_WINDOWS:
            return _UNSET, pos
        window = self.text[pos:pos + WINDOW]
        if window.count("[") + window.count("{") + depth > univalue.MAX_DEPTH:
            return _UNSET, pos
        try:
            value, used = self.scan(window, 0)
        except (StopIteration, ValueError, RecursionError):
            self.failed_windows += 1
            return _UNSET, pos
        return value, pos + used

    def key(self, pos: int, frame: list[Any]) -> int:
        if not self.text.startswith('"', pos):
            raise JSONParseError("Expecting property name enclosed in double quotes")
        frame[2], pos = self.string(pos)
        pos = self.skip(pos)
        if not self.text.startswith(":", pos):
            raise JSONParseError("Expecting ':' delimiter")
        return self.skip(pos + 1)

    def string(self, pos: int) -> tuple[str, int]:
        """The string whose opening quote is at `pos`, and the position after its closing one."""
        text, end = self.text, len(self.text)
        at = pos + 1
        pieces: list[str] = []
        while True:
            stop = min(end, at + max(SLICE, 12))   # room for a surrogate pair's two escapes at least
            quote = text.find('"', at, stop)
            if text.find("\\", at, stop if quote < 0 else quote) < 0:
                reached = stop if quote < 0 else quote   # a plain run: found at memchr's speed
            else:
                reached = _STRING_TOKENS.match(text, at, stop).end()  # type: ignore[union-attr]  # always matches
            if reached < end and text[reached] == '"':
                if not pieces:
                    return _scan_string(text, at)   # the whole string, one bounded C call
                pieces.append(_decode_piece(text[at:reached]))
                return "".join(pieces), reached + 1
            if reached - at >= 6 and _HIGH_SURROGATE_ESCAPE.match(text, reached - 6) \
                    and _starts_escape(text, reached - 6, at):
                reached -= 6   # never split a surrogate pair: its low half comes with the next piece
            if reached == at:
                raise JSONParseError("Invalid string")
            pieces.append(_decode_piece(text[at:reached]))
            breathe()
            at = reached

    def scalar(self, pos: int) -> tuple[Any, int]:
        text = self.text
        match = _NUMBER.match(text, pos)
        if match is not None:
            literal = match.group()
            if match.group(1) or match.group(2):
                return univalue.Number(literal), match.end()
            try:
                number = univalue._int_or_minus_zero(literal) if self.minus_zero else int(literal)
            except ValueError:
                raise JSONParseError("integer too long") from None
            return number, match.end()
        for word, value in _LITERALS:
            if text.startswith(word, pos):
                return value, pos + len(word)
        raise JSONParseError("Expecting value")


def _scan_string(text: str, start: int) -> tuple[str, int]:
    try:
        return _c_scanstring(text, start, True)
    except ValueError:
        raise JSONParseError("Invalid string") from None


def _decode_piece(piece: str) -> str:
    return _scan_string('"' + piece + '"', 1)[0]


def _starts_escape(text: str, pos: int, floor: int) -> bool:
    """Whether the backslash at `pos` begins an escape (an even number of backslashes before it)."""
    count = 0
    while pos - count - 1 >= floor and text[pos - count - 1] == "\\":
        count += 1
    return count % 2 == 0


# -- writing -------------------------------------------------------------------------------


def encode(value: Any) -> bytearray:
    """univalue.encode_reply(univalue.dumps(value) + "\\n"), written piece by piece into one buffer."""
    out = bytearray()
    write(value, out)
    out += b"\n"
    return out


def write(value: Any, out: bytearray) -> None:
    """`value` as univalue.dumps writes it, appended to `out`; no C call sees more than a slice."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Raw:
            out += item.data
            continue
        if isinstance(item, str):
            if len(item) <= SLICE:
                out += _piece(item)
            else:
                out += b'"'
                for start in range(0, len(item), SLICE):
                    out += univalue.encode_reply(univalue._finish(encode_basestring(item[start:start + SLICE])[1:-1]))
                    breathe()
                out += b'"'
            continue
        if isinstance(item, dict):
            pairs = list(item.items())
            if _flat(v for _, v in pairs) and all(len(k) <= SLICE for k, _ in pairs) and len(pairs) <= FLAT_RUN:
                out += _piece(item)
                continue
            # pushed in reverse: `{`, then each key and value, `}` last
            todo: list[Any] = [_OPEN_OBJECT]
            for i, (key, member) in enumerate(pairs):
                todo.append(_COMMA if i else _NOTHING)
                todo.append(key)
                todo.append(_COLON)
                todo.append(member)
            todo.append(_CLOSE_OBJECT)
            stack.extend(reversed(todo))
            continue
        if isinstance(item, (list, tuple)):
            if _flat(item):
                if len(item) <= FLAT_RUN:
                    out += _piece(item)
                    continue
                out += b"["
                for start in range(0, len(item), FLAT_RUN):
                    if start:
                        out += b","
                    out += _piece(list(item[start:start + FLAT_RUN]))[1:-1]
                out += b"]"
                continue
            todo = [_OPEN_ARRAY]
            for i, element in enumerate(item):
                todo.append(_COMMA if i else _NOTHING)
                todo.append(element)
            todo.append(_CLOSE_ARRAY)
            stack.extend(reversed(todo))
            continue
        out += _piece(item)


class _Raw:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY = _Raw(b"{"), _Raw(b"}"), _Raw(b"["), _Raw(b"]")
_COMMA, _COLON, _NOTHING = _Raw(b","), _Raw(b":"), _Raw(b"")


def _flat(values: Any) -> bool:
    """No container and no long string among `values`: one C call writes them in bounded time."""
    for v in values:
        if isinstance(v, (list, tuple, dict)) or (isinstance(v, str) and len(v) > SLICE):
            return False
    return True


def _piece(value: Any) -> bytes:
    return univalue.encode_reply(univalue.dumps(value))
