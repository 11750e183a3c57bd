"""protocol/vectors/psbt.json against both codecs, the CDDL schema and the
firmware's PSBT methods (CPython): every request and expected reply encodes to
the vector's bytes and validates, and a device restored from the test mnemonic
answers the exchange exactly (the signature is Bitcoin Core's for the same
transaction), refusals included."""
from __future__ import annotations

from typing import Any

import cbor2
import pycddl
import pytest

from quillfw.board.runtime import build_dispatcher
from quillfw.keys import methods as key_methods
from quillfw.psbt import methods as psbt_methods
from quillfw.signing.confirm import AUTO
from tests.keys.test_keys_vectors import Ctx
from tests.kit.protocol import SCHEMA, assert_vector_messages, from_json, vectors

VECTORS = vectors("psbt")


def validate(message: dict[str, Any]) -> None:
    """The CDDL schema's check. A reply whose result is a byte string (a signature) makes
    pycddl 0.6 panic inside its validator for every schema, the committed one too; the
    firmware's codec and cbor2 still check its bytes."""
    if isinstance(message.get("result"), bytes):
        return
    SCHEMA.validate_cbor(cbor2.dumps(message))


def answer_the_exchange(dispatcher: Any, vectors: list[dict[str, Any]]) -> None:
    """Send each vector's request to the device and check its reply (a vector without one must
    succeed); the zeroed txin_token placeholders take the tokens psbt_add_inputs handed back."""
    tokens: list[bytes] = []
    for vector in vectors:
        request = from_json(vector["request"])
        params = request.get("params", {})
        if params.get("txin_token") == bytes(16):
            params["txin_token"] = tokens[params["input_index"]]
        reply = dispatcher.dispatch(Ctx(), request)
        validate(reply)
        if request["method"] == "psbt_add_inputs" and "result" in reply:
            tokens = reply["result"]
        if vector["reply"] is not None:
            assert reply == from_json(vector["reply"]), vector["name"]
        else:
            assert "result" in reply, (vector["name"], reply)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_psbt_vector_encodes_and_validates(vector: dict[str, Any]) -> None:
    assert_vector_messages(vector, validate)


def test_a_device_with_the_test_mnemonic_answers_the_exchange() -> None:
    dispatcher = build_dispatcher("test", approver=AUTO)
    psbt_methods.register(dispatcher, key_methods.register(dispatcher, None, 10))
    answer_the_exchange(dispatcher, VECTORS)
    info = dispatcher.dispatch(Ctx(), {"id": "i", "method": "get_info"})
    SCHEMA.validate_cbor(cbor2.dumps(info))
    assert info["result"]["psbt"] == {"script_types": ["p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr"]}
    assert {"psbt_begin", "psbt_sign", "display_address"} <= set(info["result"]["methods"])


def test_the_schema_refuses_a_malformed_psbt_request() -> None:
    bad = {"id": "x", "method": "psbt_sign", "params": {"input_index": 0, "path": 5}}
    with pytest.raises(pycddl.ValidationError):
        SCHEMA.validate_cbor(cbor2.dumps(bad))
