"""Canonical CBOR codec (firmware/quillfw/wire/cbor.py) against the protocol's wire
vectors (made with cbor2) and RFC 8949 §4.2.1's rejections."""
from quillfw.wire import cbor
from tests.firmware import fwtest, wire_vectors


def test_rfc8949_values_decode_and_encode_canonically():
    vectors = wire_vectors.load("cbor_values.json")
    assert len(vectors) >= 25
    for v in vectors:
        data = bytes.fromhex(v["cbor"])
        assert cbor.decode(data) == v["value"], v["cbor"]
        assert cbor.encode(v["value"]) == data, v["cbor"]


def test_protocol_messages_round_trip_byte_exact():
    for v in wire_vectors.load("messages.json"):
        data = bytes.fromhex(v["cbor"])
        assert cbor.decode(data) == v["message"], v["name"]
        assert cbor.encode(v["message"]) == data, v["name"]


def test_every_non_canonical_or_unsupported_input_is_rejected():
    vectors = wire_vectors.load("cbor_rejected.json")
    assert len(vectors) >= 25
    for v in vectors:
        with fwtest.raises(cbor.CBORError, match=v["error"]):
            cbor.decode(bytes.fromhex(v["cbor"]))


def test_decoding_a_memoryview_slice():
    data = bytearray(b"\xff\xff" + bytes.fromhex("a26161016162820203") + b"\xff")
    value = cbor.decode(memoryview(data)[2:11])
    assert value == {"a": 1, "b": [2, 3]}


def test_integer_keys_sort_before_text_keys_bytewise():
    encoded = cbor.encode({"a": 1, 100: 0, 1: 2})
    assert encoded.hex() == "a301021864006161" + "01"
    assert cbor.decode(encoded) == {"a": 1, 100: 0, 1: 2}


def test_keys_sort_by_encoding_not_by_text():
    # "c" (6163) sorts before "bb" (626262): the length is in the first byte
    assert cbor.encode({"bb": 1, "c": 2, "a": 3}).hex() == "a3616103616302626262" + "01"


def test_byte_strings():
    assert cbor.encode(b"\x00\xff") == bytes.fromhex("4200ff")
    assert cbor.encode(bytearray(b"ab")) == bytes.fromhex("426162")
    assert cbor.decode(bytes.fromhex("4200ff")) == b"\x00\xff"
    big = bytes(range(256)) * 2
    assert cbor.decode(cbor.encode(big)) == big
    assert cbor.encode(big)[:3] == bytes.fromhex("590200")


def test_encoder_refuses_what_it_cannot_encode_canonically():
    for value in (1.5, 1 << 64, -(1 << 64) - 1, {True: 1}, {b"k": 1}, {(1,): 2}, object()):
        with fwtest.raises(cbor.CBORError):
            cbor.encode(value)


def test_nesting_limit_applies_to_both_directions():
    value = 0
    for _ in range(cbor.MAX_DEPTH):
        value = [value]
    assert cbor.decode(cbor.encode(value)) == value
    with fwtest.raises(cbor.CBORError, match="nesting"):
        cbor.encode([value])


def test_deterministic_pseudo_random_round_trips():
    seed = 12345
    for _ in range(200):
        seed = (seed * 1103515245 + 12345) % (1 << 31)
        value = {"n": seed - (1 << 30), "b": bytes([seed & 0xFF]) * (seed % 40),
                 "t": "x" * (seed % 30), "l": [seed % 7, None, True, False],
                 seed % 300: {"k": seed << (seed % 33)}}
        encoded = cbor.encode(value)
        assert cbor.decode(encoded) == value
        assert cbor.encode(cbor.decode(encoded)) == encoded


def test_long_byte_strings_decode_as_views_of_the_input_when_asked():
    long, short = bytes(range(65)), bytes(64)
    data = memoryview(bytearray(cbor.encode({"a": long, "b": short, "c": [long]})))
    copied = cbor.decode(data)
    viewed = cbor.decode(data, views=True)
    assert copied == viewed == {"a": long, "b": short, "c": [long]}
    assert type(copied["a"]) is bytes and type(viewed["b"]) is bytes
    assert type(viewed["a"]) is memoryview and type(viewed["c"][0]) is memoryview
    data[-1] ^= 1      # a view is the input itself, valid only as long as it is
    assert viewed["c"][0][-1] == long[-1] ^ 1 and copied["c"][0] == long


class _Pieces:
    """An out for encode_into that keeps each piece it is given."""

    def __init__(self):
        self.pieces = []

    def append(self, byte):
        self.pieces.append(bytes((byte,)))

    def extend(self, data):
        self.pieces.append(bytes(data))


def test_encode_into_streams_pieces_and_encoded_size_counts_them():
    value = {"id": "1", "result": [bytes(300), "x", None, {"b": 1, "a": -2}]}
    out = _Pieces()
    cbor.encode_into(out, value)
    assert b"".join(out.pieces) == cbor.encode(value)
    assert bytes(300) in out.pieces         # a byte string is passed on whole, never copied
    assert cbor.encoded_size(value) == len(cbor.encode(value))
    with fwtest.raises(cbor.CBORError):
        cbor.encoded_size({"x": 1.5})
