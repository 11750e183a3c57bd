"""Core's JSON rules (core-rpc.md §1.1-1.2) in quill.rpc.univalue."""
import pytest

from quill.amount import Amount
from quill.rpc import univalue


@pytest.mark.parametrize("sats,text", [
    (100000, "0.00100000"), (0, "0.00000000"), (100000000, "1.00000000"), (-1, "-0.00000001"),
    (2100000000000000, "21000000.00000000"), (10000, "0.00010000"), (-123456789012, "-1234.56789012"),
])
def test_amount_has_exactly_eight_decimals(sats, text):
    assert univalue.dumps({"a": Amount(sats)}) == '{"a":%s}' % text


def test_number_literals_are_echoed_as_written():
    value = univalue.loads('[1.0, 1e2, -0.5E-3, 12345678901234567890123, 7]')
    assert univalue.dumps(value) == "[1.0,1e2,-0.5E-3,12345678901234567890123,7]"


def test_escaping_matches_univalue():
    text = univalue.dumps(["\x00\x01\x08\t\n\x0c\r\x1f\x7f", "/é\u2603\"\\"])
    assert text == '["\\u0000\\u0001\\b\\t\\n\\f\\r\\u001f\\u007f","/é\u2603\\"\\\\"]'


def test_user_text_cannot_forge_a_number():
    # A marker-looking string from a client stays a string.
    forged = "\x00" + "0" * 16 + ":1.5"
    assert univalue.dumps([forged]).startswith('["\\u0000')


def test_pretty_print_matches_core_write_4():
    obj = {"a": [], "b": {}, "c": [1, {"d": []}]}
    assert univalue.dumps(obj, indent=4) == (
        '{\n    "a": [\n    ],\n    "b": {\n    },\n    "c": [\n        1,\n        {\n'
        '            "d": [\n            ]\n        }\n    ]\n}')


@pytest.mark.parametrize("bad", ["", "this is bad", "NaN", "[Infinity]", "01", "[1,]", '{"a":1} x'])
def test_reader_rejects_what_univalue_rejects(bad):
    with pytest.raises(univalue.JSONParseError):
        univalue.loads(bad)


def test_nesting_is_bounded():
    univalue.loads("[" * 512 + "]" * 512)
    with pytest.raises(univalue.JSONParseError):
        univalue.loads("[" * 513 + "]" * 513)


def test_repeated_keys_keep_the_first_value_and_are_reported():
    obj = univalue.loads('{"a": 1, "b": 2, "a": 3}')
    assert obj["a"] == 1 and obj.duplicate_keys == ["a"]


def test_type_names():
    assert [univalue.type_name(v) for v in univalue.loads('[null, true, {}, [], "s", 1, 1.5]')] == \
        ["null", "bool", "object", "array", "string", "number", "number"]

