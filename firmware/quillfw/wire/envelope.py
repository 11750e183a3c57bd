"""The message envelope inside a frame (protocol/SPEC.md §3), after Jade's:

    request  {"id": text(1..16 bytes), "method": text(1..32 bytes), ? "params": map}
    reply    {"id": id, "result": any}
           / {"id": id, "error": {"code": int, "message": text, ? "data": any}}
    log      {"log": text}   (id-less, device to host)
"""
from quillfw.compat import const
from quillfw.wire.errors import INVALID_REQUEST, RESERVED_ID, DeviceError

MAX_ID_LENGTH = const(16)
MAX_METHOD_LENGTH = const(32)
_REQUEST_FIELDS = ("id", "method", "params")


def request_id(obj):
    """The request's id, or RESERVED_ID when it cannot be used to answer."""
    if not isinstance(obj, dict):
        return RESERVED_ID
    rid = obj.get("id")
    if isinstance(rid, str) and _fits(rid, MAX_ID_LENGTH) and rid != RESERVED_ID:
        return rid
    return RESERVED_ID


def peek_id(body):
    """The request id at the front of an encoded request, read without decoding the
    rest (canonical CBOR sorts the shortest key, "id", first): what an error reply
    answers when the whole body could not be decoded (out of memory). RESERVED_ID
    when it is not there."""
    if len(body) < 6 or body[0] not in (0xA2, 0xA3) or body[1] != 0x62 or body[2:4] != b"id":
        return RESERVED_ID
    n = body[4] - 0x60
    if not 1 <= n <= MAX_ID_LENGTH or len(body) < 5 + n:
        return RESERVED_ID
    try:
        rid = bytes(body[5:5 + n]).decode("utf-8")
    except (UnicodeError, ValueError):
        return RESERVED_ID
    return rid if rid != RESERVED_ID else RESERVED_ID


def _fits(text, limit):
    """1..limit bytes of UTF-8 (CDDL's .size on tstr counts bytes)."""
    return 0 < len(text.encode("utf-8")) <= limit


def parse_request(obj):
    """(id, method, params) of a decoded request; DeviceError(INVALID_REQUEST) otherwise."""
    if not isinstance(obj, dict):
        raise DeviceError(INVALID_REQUEST, "Request must be a map")
    for key in obj:
        if key not in _REQUEST_FIELDS:
            raise DeviceError(INVALID_REQUEST, "Unknown request field")
    rid = obj.get("id")
    if not isinstance(rid, str):
        raise DeviceError(INVALID_REQUEST, "Request id must be a text string")
    if not _fits(rid, MAX_ID_LENGTH):
        raise DeviceError(INVALID_REQUEST, "Request id must be 1 to 16 bytes")
    if rid == RESERVED_ID:
        raise DeviceError(INVALID_REQUEST, "Request id 00 is reserved")
    method = obj.get("method")
    if not isinstance(method, str):
        raise DeviceError(INVALID_REQUEST, "Request method must be a text string")
    if not _fits(method, MAX_METHOD_LENGTH):
        raise DeviceError(INVALID_REQUEST, "Request method must be 1 to 32 bytes")
    params = obj.get("params", {})
    if not isinstance(params, dict):
        raise DeviceError(INVALID_REQUEST, "Request params must be a map")
    return rid, method, params


def result_reply(rid, result):
    return {"id": rid, "result": result}


def error_reply(rid, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"id": rid, "error": error}


def log_message(text):
    return {"log": text}
