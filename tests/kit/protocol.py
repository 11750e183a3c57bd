"""The wire protocol's own files (protocol/): its CDDL schema and its vectors.

Vector files write byte strings as {"bytes": "<hex>"}; `from_json` turns them back
into the message the device and the host encode."""
import json
from pathlib import Path
from typing import Any

import pycddl

from quill.device.codec import canonical_dumps
from quillfw.wire import cbor

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol"
SCHEMA = pycddl.Schema((PROTOCOL / "quill.cddl").read_text())


def vectors(name: str) -> list[dict[str, Any]]:
    """The "vectors" list of protocol/vectors/<name>.json."""
    return json.loads((PROTOCOL / "vectors" / f"{name}.json").read_text())["vectors"]


def from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"bytes"}:
            return bytes.fromhex(value["bytes"])
        return {k: from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def assert_encodes_as_the_vector(message: Any, body: bytes) -> None:
    """The firmware's codec and the host's canonical codec both write the vector's bytes, and
    the firmware reads them back as the message."""
    assert bytes(cbor.encode(message)) == body
    assert canonical_dumps(message) == body
    assert cbor.decode(body) == message


def assert_vector_messages(vector: dict[str, Any], validate: Any) -> None:
    """Each message the vector holds (its request, and its reply unless that is null) encodes to
    the vector's bytes on both codecs, and passes `validate` (the schema's check)."""
    for field in ("request", "reply"):
        if vector[field] is None:
            continue
        message = from_json(vector[field])
        assert_encodes_as_the_vector(message, bytes.fromhex(vector[field + "_cbor"]))
        validate(message)
