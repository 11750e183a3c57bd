"""Host side of the wire format: the firmware's framing (one implementation,
imported from quillfw.framing) around cbor2's canonical encoding."""
import cbor2

from quillfw.framing import OVERHEAD, FrameReader, encode_frame  # noqa: F401 (re-exported)
from quillfw.limits import MAX_MESSAGE_SIZE


class MessageTooLarge(ValueError):
    pass


def encode_message(message: dict, max_size: int = MAX_MESSAGE_SIZE) -> bytes:
    """The frame for one message; canonical CBOR (RFC 8949 §4.2.1) as the device requires.
    max_size: the device's max_message_size from get_info."""
    body = cbor2.dumps(message, canonical=True)
    if len(body) > max_size:
        raise MessageTooLarge(f"message of {len(body)} bytes exceeds the device's "
                              f"maximum of {max_size}")
    return encode_frame(body)


def decode_body(body) -> object:
    return cbor2.loads(bytes(body))
