"""Host side of the wire format: the firmware's framing (one implementation,
imported from quillfw.wire.framing) around cbor2's canonical encoding."""
import cbor2

from quillfw.limits import MAX_MESSAGE_SIZE
from quillfw.wire.cbor import MAX_DEPTH
from quillfw.wire.framing import OVERHEAD, FrameReader, encode_frame  # noqa: F401 (re-exported)


class MessageTooLarge(ValueError):
    pass


def _sorted_maps(value, depth=0):
    """value with every map's keys in bytewise order of their encodings (RFC 8949 §4.2.1),
    refusing what the device's decoder would reject (SPEC.md §3).

    cbor2's canonical=True sorts length-first (RFC 7049 §3.9), which differs when
    integer and text keys are mixed: {"": 0, 1000: 0} puts "" first."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nesting deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: cbor2.dumps(item[0], canonical=True))
        return {k: _sorted_maps(v, depth + 1) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [_sorted_maps(v, depth + 1) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -2**64 <= value < 2**64:
        raise ValueError("integer out of range")
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return value
    # floats, tags and the rest are outside the protocol's data model
    raise TypeError(f"{type(value).__name__} is not allowed in a device message")


def canonical_dumps(value) -> bytes:
    """Deterministic CBOR (RFC 8949 §4.2.1), as the device's decoder requires."""
    # canonical=True still gives shortest integers and lengths; the insertion
    # order of the pre-sorted maps then decides the key order
    return cbor2.dumps(_sorted_maps(value), canonical=False)


def encode_message(message: dict, max_size: int = MAX_MESSAGE_SIZE) -> bytes:
    """The frame for one message. max_size: the device's max_message_size from get_info."""
    body = canonical_dumps(message)
    if len(body) > max_size:
        raise MessageTooLarge(f"message of {len(body)} bytes exceeds the device's "
                              f"maximum of {max_size}")
    return encode_frame(body)


def decode_body(body) -> object:
    return cbor2.loads(bytes(body))
