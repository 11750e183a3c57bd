"""Core's JSON rules (core-rpc.md §1.1-1.2) in quill.rpc.univalue."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _nested(depth: int) -> str:
    """Arrays and objects alternating, `depth` deep, inside a long request-like string."""
    opens = "".join("[" if i % 2 else '{"k":' for i in range(depth))
    closes = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return '{"hex": "' + "ab" * 40_000 + '", "v": ' + opens + "1" + closes + "}"


@pytest.mark.parametrize("depth, fits", [(511, True), (512, False), (600, False)])
def test_nesting_of_both_kinds_is_bounded_in_long_text(depth, fits):
    text = _nested(depth)  # the outer object adds one level
    if fits:
        assert univalue.loads(text)["hex"] == "ab" * 40_000
    else:
        with pytest.raises(univalue.JSONParseError):
            univalue.loads(text)


def test_brackets_inside_strings_do_not_count_as_nesting():
    value = univalue.loads('["' + "[{" * 600 + '", {"a": ["]]"]}]')
    assert value == ["[{" * 600, {"a": ["]]"]}]


@pytest.mark.parametrize("text, expected", [
    ('["' + "-" * 1000 + '", -0]', "-0"),  # a minus sign long before the minus zero
    ('["' + "\\" * 1000 + '", -0]', "-0"),
])
def test_minus_zero_is_kept_after_other_minus_signs_and_escapes(text, expected):
    assert univalue.dumps(univalue.loads(text)[1]) == expected


def test_a_lone_surrogate_escape_after_other_backslashes_is_refused():
    with pytest.raises(univalue.JSONParseError):
        univalue.loads('["' + "\\n" * 1000 + '\\ud800"]')
    assert univalue.loads('["' + "\\n" * 1000 + '\\ud83d\\ude00"]')[0].endswith("\U0001f600")


def test_repeated_keys_keep_the_first_value_and_are_reported():
    obj = univalue.loads('{"a": 1, "b": 2, "a": 3}')
    assert obj["a"] == 1 and obj.duplicate_keys == ["a"]


def test_type_names():
    assert [univalue.type_name(v) for v in univalue.loads('[null, true, {}, [], "s", 1, 1.5]')] == \
        ["null", "bool", "object", "array", "string", "number", "number"]



# -- encode (orjson) writes what dumps writes ---------------------------------------------------

_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12) | st.sampled_from(
    ["\x00\x01\x08\t\n\x0c\r\x1f\x7f", "/é\u2603\"\\", "\ud800", "a\udcff", "\x00" + "0" * 16 + ":1.5"])
_LEAVES = (st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | _TEXT
           | st.integers(-(1 << 62), 1 << 62).map(Amount)
           | st.sampled_from(["1.0", "1e2", "-0", "-0.5E-3", "12345678901234567890123"]).map(univalue.Number)
           | st.binary(max_size=8) | st.decimals(allow_nan=False, allow_infinity=False, places=3))
_VALUES = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_encode_writes_the_bytes_dumps_writes(value):
    assert univalue.encode(value) == univalue.encode_reply(univalue.dumps(value))


def test_encode_keeps_repeated_keys_raw_json_and_deep_nesting():
    repeated = univalue.loads('{"a":1,"b":[1.50,"\\u007f"],"a":2}')
    raw = univalue.RawJSON('{"x":[1.0,"y"]}')
    deep: list = []
    for _ in range(300):
        deep = [deep]
    for value in ({"r": repeated, "j": raw, "n": [univalue.Number("-0")]}, deep, {1: "int key"}, [1 << 64]):
        assert univalue.encode(value) == univalue.encode_reply(univalue.dumps(value))
    assert univalue.encode({"r": repeated}) == b'{"r":{"a":1,"b":[1.50,"\\u007f"],"a":2}}'


def test_decoding_methods_reply_through_orjson():
    # the float-free methods (registry.Method.float_free) are the decoders, whose answers hold no float
    from quill.daemon.main import build_registry
    assert {m.name for m in build_registry().methods.values() if m.float_free} == {
        "decoderawtransaction", "decodescript", "decodepsbt", "analyzepsbt"}
