"""protocol/vectors/keys.json against both codecs, the CDDL schema and the
firmware's key methods (CPython; tests/keys/test_device_keys.py runs the
emulator at 97K): every request and expected reply encodes to the vector's
bytes and validates, and a fresh device answers the exchange exactly."""
from __future__ import annotations

from typing import Any

import cbor2
import pytest

from quillfw.board.runtime import build_dispatcher
from quillfw.keys import methods as key_methods
from tests.kit.protocol import SCHEMA, assert_vector_messages, from_json, vectors

VECTORS = vectors("keys")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_keys_vector_encodes_and_validates(vector: dict[str, Any]) -> None:
    assert_vector_messages(vector, lambda message: SCHEMA.validate_cbor(cbor2.dumps(message)))


class Ctx:
    state = "idle"

    def poll_link(self) -> None:
        pass


def test_a_fresh_device_answers_the_exchange() -> None:
    dispatcher = _dispatcher(None)
    for vector in VECTORS:
        reply = dispatcher.dispatch(Ctx(), from_json(vector["request"]))
        SCHEMA.validate_cbor(cbor2.dumps(reply))
        if vector["reply"] is not None:
            assert reply == from_json(vector["reply"]), vector["name"]
        else:
            assert len(reply["result"]["mnemonic"].split()) == 24
    info = dispatcher.dispatch(Ctx(), {"id": "i", "method": "get_info"})
    SCHEMA.validate_cbor(cbor2.dumps(info))
    assert info["result"]["keys"]["state"] == "unlocked"
    assert {"seed_generate", "get_xpub", "wipe"} <= set(info["result"]["methods"])


def _dispatcher(seed_path):
    """A board's start-up: the dispatcher, then the key methods."""
    dispatcher = build_dispatcher("test")
    key_methods.register(dispatcher, seed_path, 10)
    return dispatcher
