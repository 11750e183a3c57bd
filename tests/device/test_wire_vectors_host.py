"""The host side of the wire vectors: cbor2 and the host codec produce and read
exactly the protocol's bytes; every vector message is valid per quill.cddl."""
import json

import cbor2
import pytest

from quill.device.codec import canonical_dumps, decode_body, encode_message
from quillfw.wire import cbor as firmware_cbor
from tests.device.rawlink import check_cddl
from tests.kit.protocol import PROTOCOL

VECTORS = PROTOCOL / "vectors"
MESSAGES = json.loads((VECTORS / "messages.json").read_text())["vectors"]


@pytest.mark.parametrize("vector", MESSAGES, ids=[v["name"] for v in MESSAGES])
def test_host_codec_matches_the_wire_vector(vector):
    assert cbor2.dumps(vector["message"], canonical=True).hex() == vector["cbor"]
    assert encode_message(vector["message"]).hex() == vector["frame"]
    assert decode_body(bytes.fromhex(vector["cbor"])) == vector["message"]
    check_cddl(vector["message"])


def test_mixed_integer_and_text_keys_sort_bytewise_like_the_firmware():
    value = {"": 0, 1000: [{"b": 1, 2: 2}], "a": 1}
    data = canonical_dumps(value)
    assert data.hex() == "a3" + "1903e8" + "81a2020261620" + "1" + "6000" + "616101"
    assert data == firmware_cbor.encode(value)
    assert firmware_cbor.decode(data) == value
    # cbor2's canonical=True orders length-first, which the device rejects
    assert cbor2.dumps(value, canonical=True) != data


def test_rejected_cbor_vectors_are_not_what_the_host_writes():
    rejected = json.loads((VECTORS / "cbor_rejected.json").read_text())["vectors"]
    for v in rejected:
        data = bytes.fromhex(v["cbor"])
        try:
            value = cbor2.loads(data)
        except Exception:
            continue  # cbor2 refuses it too
        try:
            canonical = canonical_dumps(value)
        except Exception:
            continue
        assert canonical != data, v["name"]


@pytest.mark.parametrize("message", [
    {"id": "1", "method": "ping", "params": {"x": 1}},
    {"id": "1", "method": "no_such_method"},
    {"id": "x" * 17, "method": "ping"},
    {"id": "1", "method": "debug_sleep", "params": {"ms": 60001}},
    {"id": "1", "error": {"code": -31999, "message": "not in the table"}},
    {"id": "1", "result": "sleeping"},
    {"log": 5},
])
def test_cddl_rejects_malformed_messages(message):
    valid = None if message.get("params") == {"x": 1} else False
    check_cddl(message, valid)
