"""protocol/vectors/signing.json against both codecs, the CDDL schema and the
firmware's signing methods (CPython; the emulator runs them in the RPC tests)."""

import cbor2
import pytest

from quillfw.board.runtime import build_dispatcher
from quillfw.wire import framing
from tests.kit.protocol import SCHEMA, assert_encodes_as_the_vector, from_json, vectors

VECTORS = vectors("signing")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_signing_vector_encodes_and_validates(vector):
    message = from_json(vector["message"])
    body = bytes.fromhex(vector["cbor"])
    assert_encodes_as_the_vector(message, body)
    assert bytes(framing.encode_frame(body)).hex() == vector["frame"]
    SCHEMA.validate_cbor(cbor2.dumps(message))


def test_firmware_answers_the_vector_session():
    dispatcher = build_dispatcher("test")

    class Ctx:
        state = "idle"

        def poll_link(self):
            pass

    replies = {}
    for v in VECTORS:
        message = from_json(v["message"])
        if "method" in message and message["method"] != "sign_taproot":
            replies.setdefault(message["method"], dispatcher.dispatch(Ctx(), message))
    assert set(replies["sign_begin"]["result"]) == {"heap_free", "session"}
    assert replies["sign_add_key"]["result"] == 0
    assert len(replies["sign_add_inputs"]["result"][0]) == 16
    # the declared transaction has one output, so it is not complete: sign_end is out of order
    assert replies["sign_end"]["error"]["code"] == -32001
    assert replies["sign_end"]["error"]["data"] == "out_of_order"


def test_a_request_of_another_session_is_refused_before_it_acts():
    dispatcher = build_dispatcher("test")

    class Ctx:
        state = "idle"

        def poll_link(self):
            pass

    stale = next(from_json(v["message"]) for v in VECTORS
                 if v["name"] == "sign_add_inputs request naming its session")
    refused = next(from_json(v["message"]) for v in VECTORS if v["name"] == "stale session error")
    begin = next(from_json(v["message"]) for v in VECTORS if v["name"] == "sign_begin request")
    session = dispatcher.dispatch(Ctx(), begin)["result"]["session"]
    assert session != stale["params"]["session"]
    assert dispatcher.dispatch(Ctx(), stale) == refused
    abort = {"id": "a", "method": "sign_abort", "params": {"session": session}}
    assert dispatcher.dispatch(Ctx(), abort) == {"id": "a", "result": None}
    # sign_begin naming another boot is refused too
    old_boot = dict(begin, params=dict(begin["params"], boot_id="0" * 16))
    assert dispatcher.dispatch(Ctx(), old_boot)["error"]["code"] == -32008
    fresh = dict(begin, params=dict(begin["params"], boot_id=dispatcher.boot_id))
    session = dispatcher.dispatch(Ctx(), fresh)["result"]["session"]
    ok = dict(stale, params=dict(stale["params"], session=session))
    assert dispatcher.dispatch(Ctx(), ok) == {"id": "s8", "result": []}
