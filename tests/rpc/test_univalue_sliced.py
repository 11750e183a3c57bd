"""The sliced reader and writer (rpc/univalue_sliced) against univalue itself: same values, same
refusals, same bytes, on generated documents (valid and mutated) with slices and windows small
enough that every boundary case (a split escape, a surrogate pair, a window too short) occurs."""
from __future__ import annotations

import random
from typing import Any

import pytest

from quill.rpc import univalue, univalue_sliced
from quill.rpc.univalue import JSONParseError

PIECES = ["a", "\u00e9", "\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00", "\U0001f600", "\\/", "\\u0000",
          "\x7f", "x" * 20, "\\\\ud83d"]


def document(r: random.Random, depth: int = 0) -> str:
    roll = r.random()
    if depth > 6 or roll < 0.35:
        kind = r.randrange(6)
        if kind == 0:
            return str(r.randrange(-10 ** 6, 10 ** 6))
        if kind == 1:
            return r.choice(["1.5", "-0", "0", "-0.0", "1e5", "2E-3", "12345678901234567890", "-12.5e-7"])
        if kind == 2:
            return r.choice(["true", "false", "null"])
        return '"' + "".join(r.choice(PIECES) for _ in range(r.randrange(12))) + '"'
    space = r.choice(["", " ", "\n", "\t ", ""])
    if roll < 0.7:
        return "[" + space + ("," + space).join(document(r, depth + 1) for _ in range(r.randrange(6))) + "]"
    keys = [r.choice(["a", "b", "id", "\\u0061", "k1", "k2"]) for _ in range(r.randrange(5))]   # repeats too
    return "{" + ",".join(f'{space}"{key}"{space}:{space}{document(r, depth + 1)}' for key in keys) + "}"


def read_as_batch(text: bytes) -> Any:
    """loads with on_element: a Batch gives back its elements, read again, which must be the
    elements shown to on_element, in order."""
    shown: list[Any] = []
    value = univalue_sliced.loads(text, shown.append)
    if isinstance(value, univalue_sliced.Batch):
        elements = value.values()
        assert repr(elements) == repr(shown)
        return elements
    assert shown == []
    return value


def outcome(read: Any, text: bytes) -> tuple[str, str]:
    try:
        value = read(text)
    except JSONParseError:
        return "refused", ""
    return "read", repr(value) + univalue.dumps(value)


@pytest.mark.parametrize("slice_size,window", [(8, 16), (3, 2), (16, 5), (1 << 18, 1024)])
def test_same_values_refusals_and_bytes(monkeypatch: pytest.MonkeyPatch, slice_size: int, window: int) -> None:
    monkeypatch.setattr(univalue_sliced, "SLICE", slice_size)
    monkeypatch.setattr(univalue_sliced, "WINDOW", window)
    monkeypatch.setattr(univalue_sliced, "FLAT_RUN", 3)
    monkeypatch.setattr(univalue_sliced, "breathe", lambda: None)   # a syscall per 3-character slice
    r = random.Random(slice_size * 1000 + window)
    kinds = {"read": 0, "refused": 0}
    for _ in range(1500):
        text = document(r)
        if r.random() < 0.3:
            at = r.randrange(len(text) + 1)
            text = text[:at] + r.choice(["", ",", "]", "\\", '"', "\x01", "[", "}", "-", "\\ud800"]) + text[at + 1:]
        text = r.choice(["", " ", "\n"]) + text + r.choice(["", " ", "x"])
        expected = outcome(univalue.loads, text.encode())
        assert outcome(univalue_sliced.loads, text.encode()) == expected, text
        assert outcome(read_as_batch, text.encode()) == expected, text
        kinds[expected[0]] += 1
        if expected[0] == "read":
            value = univalue.loads(text.encode())
            assert bytes(univalue_sliced.encode(value)) == univalue.encode_reply(univalue.dumps(value) + "\n"), text
    assert kinds["read"] > 500 and kinds["refused"] > 100   # both sides of the comparison were exercised


def test_nesting_limit_and_invalid_utf8_as_univalue() -> None:
    for text in ("[" * 512 + "]" * 512, "[" * 513 + "]" * 513, "[" * 600, '{"a":' * 300 + "1" + "}" * 300):
        assert outcome(univalue_sliced.loads, text.encode()) == outcome(univalue.loads, text.encode())
        assert outcome(read_as_batch, text.encode()) == outcome(univalue.loads, text.encode())
    for raw in (b'["\xf5\x80\x80\x80"]', b'["\xc0\xaf"]', b'["\xed\xa0\x80"]', b'["a\xff"]'):
        assert outcome(univalue_sliced.loads, raw) == outcome(univalue.loads, raw)


def test_a_long_string_is_read_and_written_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = univalue_sliced._c_scanstring

    def counted(text: str, start: int, strict: bool) -> Any:
        result = real(text, start, strict)
        calls.append(result[1] - start)   # the characters this call went through
        return result

    monkeypatch.setattr(univalue_sliced, "_c_scanstring", counted)
    body = b'{"id":1,"method":"echo","params":["' + b"ab\\n\xc3\xa9" * 500_000 + b'"]}'
    value = univalue_sliced.loads(body)
    assert value == univalue.loads(body)
    assert max(calls) <= univalue_sliced.SLICE + 2 and len(calls) > 5   # never the whole 2.5 MB string at once
    assert bytes(univalue_sliced.encode(value)) == univalue.encode_reply(univalue.dumps(value) + "\n")
