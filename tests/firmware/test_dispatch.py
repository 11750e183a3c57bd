"""The serving loop and dispatcher (firmware/quillfw/wire/server.py, dispatcher.py)
over an in-memory link: every error path answers and the device keeps serving."""
import sys

from quillfw import limits
from quillfw.board.runtime import build_dispatcher
from quillfw.wire import cbor, errors, framing
from quillfw.wire.dispatcher import ARRAY, BOOL, BYTES, TEXT, UINT, Dispatcher, Method
from quillfw.wire.server import Server
from tests.firmware.wire_vectors import FakeTransport


def _frame(message):
    return framing.encode_frame(cbor.encode(message))


def _replies(written):
    reader = framing.FrameReader(1 << 16)
    out = []
    pos = 0
    while pos < len(written):
        pos += reader.feed(memoryview(written)[pos:], 0)
        assert reader.event != framing.REJECT, reader.reject_message
        if reader.event == framing.FRAME:
            out.append(cbor.decode(reader.body))
    return out


class _Session:
    def __init__(self):
        self.resets = 0

    def reset(self):
        self.resets += 1


def _server(chunks, methods=(), idle_ms=100, log_frames=False):
    dispatcher = build_dispatcher("test-board")
    session = _Session()
    dispatcher.register(methods, script_types=("p2wpkh",), sighash_types=(1,), reset=session.reset)
    transport = FakeTransport(chunks)
    server = Server(transport, dispatcher, idle_ms=idle_ms, log_frames=log_frames)
    while transport.chunks:
        server.serve_once(0)
    return server, transport, session


def _run(messages, methods=()):
    chunks = [m if isinstance(m, (bytes, bytearray)) else _frame(m) for m in messages]
    server, transport, session = _server(chunks, methods)
    return _replies(transport.written), session


def _error(reply):
    return reply["id"], reply["error"]["code"], reply["error"]["message"]


def test_ping_is_idle_between_requests():
    replies, _ = _run([{"id": "p", "method": "ping"}])
    assert replies == [{"id": "p", "result": "idle"}]


def test_get_info_reports_versions_limits_and_capabilities():
    (reply,), _ = _run([{"id": "i", "method": "get_info", "params": {}}])
    info = reply["result"]
    assert info["protocol_version"] == 1 and info["board"] == "test-board"
    assert info["max_message_size"] == limits.MAX_MESSAGE_SIZE
    assert info["limits"] == {"max_inputs": limits.MAX_INPUTS, "max_outputs": limits.MAX_OUTPUTS,
                              "max_script_size": limits.MAX_SCRIPT_SIZE,
                              "max_keys": limits.MAX_KEYS}
    # the core methods, the signing extension's, and what this test registered
    assert {"get_info", "ping", "sign_begin", "sign_end", "sign_abort"} <= set(info["methods"])
    assert "p2wpkh" in info["script_types"] and 1 in info["sighash_types"]


def test_envelope_errors_use_the_request_id_when_it_is_readable():
    cases = [
        ([1, 2], ("00", errors.INVALID_REQUEST, "Request must be a map")),
        ({"method": "ping"}, ("00", errors.INVALID_REQUEST, "Request id must be a text string")),
        ({"id": 5, "method": "ping"}, ("00", errors.INVALID_REQUEST, "Request id must be a text string")),
        ({"id": "x" * 17, "method": "ping"}, ("00", errors.INVALID_REQUEST, "Request id must be 1 to 16 bytes")),
        ({"id": "", "method": "ping"}, ("00", errors.INVALID_REQUEST, "Request id must be 1 to 16 bytes")),
        ({"id": "00", "method": "ping"}, ("00", errors.INVALID_REQUEST, "Request id 00 is reserved")),
        ({"id": "a"}, ("a", errors.INVALID_REQUEST, "Request method must be a text string")),
        ({"id": "a", "method": "m" * 33}, ("a", errors.INVALID_REQUEST, "Request method must be 1 to 32 bytes")),
        ({"id": "a", "method": "ping", "extra": 1}, ("a", errors.INVALID_REQUEST, "Unknown request field")),
        ({"id": "a", "method": "ping", "params": [1]}, ("a", errors.INVALID_REQUEST, "Request params must be a map")),
        ({"id": "a", "method": "sign_everything"}, ("a", errors.METHOD_NOT_FOUND, "Unknown method")),
        ({"id": "a", "method": "ping", "params": {"x": 1}}, ("a", errors.INVALID_PARAMS, "Unknown parameter 'x'")),
    ]
    replies, session = _run([c[0] for c in cases] + [{"id": "z", "method": "ping"}])
    assert [_error(r) for r in replies[:-1]] == [c[1] for c in cases]
    assert replies[-1] == {"id": "z", "result": "idle"}
    assert session.resets == len(cases)


def _echo(ctx, params):
    return params


ECHO = Method("echo", _echo, {"n": (UINT, True), "flag": (BOOL, False), "name": (TEXT, False),
                              "blob": (BYTES, False)})


def test_declared_parameter_types_are_checked_before_the_handler():
    cases = [
        ({}, "Missing parameter 'n'"),
        ({"n": -1}, "Parameter 'n' must be uint"),
        ({"n": True}, "Parameter 'n' must be uint"),
        ({"n": "1"}, "Parameter 'n' must be uint"),
        ({"n": 1, "flag": 1}, "Parameter 'flag' must be bool"),
        ({"n": 1, "name": b"x"}, "Parameter 'name' must be text"),
        ({"n": 1, "blob": "x"}, "Parameter 'blob' must be bytes"),
    ]
    messages = [{"id": "e%d" % i, "method": "echo", "params": p} for i, (p, _) in enumerate(cases)]
    good = {"n": 3, "flag": True, "name": "q", "blob": b"\x01"}
    replies, _ = _run(messages + [{"id": "ok", "method": "echo", "params": good}], [ECHO])
    for i, (_, message) in enumerate(cases):
        assert _error(replies[i]) == ("e%d" % i, errors.INVALID_PARAMS, message)
    assert replies[-1] == {"id": "ok", "result": good}


def test_non_canonical_cbor_is_a_parse_error_and_serving_continues():
    bad = framing.encode_frame(cbor.encode({"id": "a", "method": "ping"})[:-2])
    unsorted = framing.encode_frame(b"\xa2" + cbor.encode("method") + cbor.encode("ping") +
                                    cbor.encode("id") + cbor.encode("1"))
    replies, session = _run([bad, unsorted, {"id": "k", "method": "ping"}])
    assert _error(replies[0])[:2] == ("00", errors.PARSE_ERROR)
    assert _error(replies[1]) == ("00", errors.PARSE_ERROR, "Invalid CBOR: map keys not in canonical order")
    assert replies[2] == {"id": "k", "result": "idle"}
    assert session.resets == 2


def test_framing_rejects_are_answered_with_the_discarded_count():
    replies, _ = _run([b"noise!" + _frame({"id": "k", "method": "ping"})])
    assert replies[0]["id"] == "00" and replies[0]["error"]["data"] == 6
    assert replies[0]["error"]["code"] == errors.INVALID_REQUEST
    assert replies[1] == {"id": "k", "result": "idle"}


def _exhaust(ctx, params):
    raise MemoryError


def _buggy(ctx, params):
    raise ValueError("secret 5f3a")


def _huge(ctx, params):
    return b"\x00" * (limits.MAX_MESSAGE_SIZE + 1)


def test_memory_error_and_bugs_become_error_replies_without_their_text():
    methods = [Method("exhaust", _exhaust), Method("buggy", _buggy), Method("huge", _huge)]
    replies, session = _run([{"id": "m", "method": "exhaust"}, {"id": "b", "method": "buggy"},
                             {"id": "h", "method": "huge"}, {"id": "p", "method": "ping"}], methods)
    assert _error(replies[0]) == ("m", errors.OUT_OF_MEMORY, "Out of memory")
    assert _error(replies[1]) == ("b", errors.INTERNAL_ERROR, "Internal error (ValueError)")
    assert _error(replies[2]) == ("h", errors.INTERNAL_ERROR, "Reply exceeds maximum message size")
    assert replies[3] == {"id": "p", "result": "idle"}
    assert session.resets == 3


def test_a_real_allocation_failure_is_survived():
    methods = [Method("alloc", lambda ctx, p: len(bytearray(p["size"])), {"size": (UINT, True)})]
    # larger than any heap, within the machine word (small ints are 31-bit on the boards)
    replies, _ = _run([{"id": "a", "method": "alloc", "params": {"size": sys.maxsize // 2}},
                       {"id": "p", "method": "ping"}], methods)
    assert _error(replies[0])[:2] == ("a", errors.OUT_OF_MEMORY)
    assert replies[1] == {"id": "p", "result": "idle"}


def test_while_busy_ping_is_answered_and_other_requests_get_busy():
    seen = []

    def long_running(ctx, params):
        # the ping and the second request arrive while this handler works
        ctx.transport.chunks.append(_frame({"id": "p1", "method": "ping"}) +
                                    _frame({"id": "x", "method": "get_info"}) +
                                    _frame({"id": "y", "method": "slow"}))
        ctx.poll_link()
        ctx.awaiting_user()
        ctx.transport.chunks.append(_frame({"id": "p2", "method": "ping"}))
        ctx.poll_link()
        seen.append(ctx.state)
        ctx.transport.chunks.append(_frame({"id": "p3", "method": "ping"}))
        return "done"

    replies, session = _run([{"id": "s", "method": "slow"}], [Method("slow", long_running)])
    assert replies[0] == {"id": "p1", "result": "busy"}
    assert replies[1]["id"] == "x" and replies[1]["result"]["protocol_version"] == 1
    assert _error(replies[2]) == ("y", errors.BUSY, "Device busy with another request")
    assert replies[3] == {"id": "p2", "result": "awaiting_user"}
    assert replies[4] == {"id": "s", "result": "done"}
    assert replies[5] == {"id": "p3", "result": "idle"}
    assert seen == ["awaiting_user"]
    # the BUSY error resets the session once the running request has finished
    assert session.resets == 1


def test_a_long_byte_string_stays_a_view_of_its_frame_while_requests_arrive():
    data = bytes(i % 251 for i in range(3000))
    seen = []

    def long_running(ctx, params):
        view = params["data"]
        ping = _frame({"id": "p1", "method": "ping"})
        # while it works: a ping, a request too large for the 256-byte buffer of a busy
        # device (its rest arrives with the next read), then the first half of a ping
        # that only completes once this request is done
        ctx.transport.chunks.append(ping + _frame({"id": "x", "method": "slow",
                                                   "params": {"data": bytes(300)}}))
        ctx.poll_link()
        ctx.poll_link()
        ctx.transport.chunks.append(ping[:7])
        ctx.poll_link()
        seen.append((type(view).__name__, bytes(view) == data))
        ctx.transport.chunks.append(ping[7:])
        return len(view)

    replies, session = _run([{"id": "s", "method": "slow", "params": {"data": data}}],
                            [Method("slow", long_running, {"data": (BYTES, True)}, views=True)])
    assert seen == [("memoryview", True)]
    assert replies[0] == {"id": "p1", "result": "busy"}
    assert _error(replies[1]) == ("00", errors.INVALID_REQUEST, "Frame length 334 exceeds maximum 256")
    assert _error(replies[2]) == ("00", errors.INVALID_REQUEST, "Discarded 338 bytes before frame magic")
    assert replies[3] == {"id": "s", "result": 3000}
    # the half-received ping moved back to the main buffer with the rest of its frame
    assert replies[4] == {"id": "p1", "result": "idle"}
    assert session.resets == 1   # the refused frame ends the session once the request is done


def test_only_methods_that_take_views_get_them():
    data = bytes(range(200))
    kinds = []

    def handler(ctx, params):
        kinds.append((type(params["data"]).__name__, type(params["list"][0]).__name__))
        return bytes(params["data"]) == data

    params = {"data": data, "list": [data]}
    replies, _ = _run([{"id": "v", "method": "views", "params": params},
                       {"id": "c", "method": "copies", "params": params}],
                      [Method("views", handler, {"data": (BYTES, True), "list": (ARRAY, True)}, views=True),
                       Method("copies", handler, {"data": (BYTES, True), "list": (ARRAY, True)})])
    assert [r["result"] for r in replies] == [True, True]
    assert kinds == [("memoryview", "memoryview"), ("bytes", "bytes")]


def test_log_frames_are_id_less_maps():
    server, transport, _ = _server([b"xyz"], log_frames=True)
    server.log("hello")
    replies = _replies(transport.written)
    assert replies[-1] == {"log": "hello"}


def test_dispatcher_refuses_duplicate_method_names():
    dispatcher = Dispatcher()
    dispatcher.register([Method("a", _echo)])
    try:
        dispatcher.register([Method("a", _echo)])
    except ValueError:
        return
    raise AssertionError("duplicate method accepted")


def test_an_undecodable_requests_id_is_read_from_the_front_of_its_body():
    from quillfw.wire.envelope import peek_id
    for message in ({"id": "a1", "method": "ping"},
                    {"id": "0123456789abcdef", "method": "sign_add_outputs", "params": {"outputs": []}}):
        body = bytes(cbor.encode(message))
        assert peek_id(body) == message["id"]
        assert peek_id(memoryview(bytearray(body))) == message["id"]
    assert peek_id(bytes(cbor.encode({"method": "ping"}))) == errors.RESERVED_ID
    assert peek_id(bytes(cbor.encode({"id": "00", "method": "ping"}))) == errors.RESERVED_ID
    assert peek_id(b"\xa2\x62id\x7f") == errors.RESERVED_ID      # no id text of 1..16 bytes
    assert peek_id(b"") == errors.RESERVED_ID


def test_out_of_memory_while_decoding_answers_with_the_requests_id():
    body = bytes(cbor.encode({"id": "big", "method": "ping"}))
    transport = FakeTransport([framing.encode_frame(body)])
    server = Server(transport, build_dispatcher("test"))

    def exhausted(data, **options):
        raise MemoryError
    original = cbor.decode
    cbor.decode = exhausted
    try:
        while transport.chunks:
            server.serve_once(0)
    finally:
        cbor.decode = original
    reply = _replies(transport.written)[0]
    assert reply["id"] == "big" and reply["error"]["code"] == errors.OUT_OF_MEMORY


class _PieceTransport(FakeTransport):
    """A FakeTransport that also keeps the size of every write."""

    def __init__(self):
        super().__init__()
        self.sizes = []

    def write(self, data):
        self.sizes.append(len(data))
        super().write(data)


def test_replies_are_streamed_frames_byte_equal_to_encode_frame():
    # small (one write), a few buffers long, and one byte string longer than the buffer
    for result in ([], [bytes(16)] * 40, {"a": bytes(range(256)) * 3, "b": "x" * 300}):
        transport = _PieceTransport()
        server = Server(transport, Dispatcher())
        server.send({"id": "r1", "result": result})
        assert bytes(transport.written) == _frame({"id": "r1", "result": result})
        # never the whole body in one piece unless it is one of the message's byte strings
        assert max(transport.sizes) <= max(256, 3 * 256)
    transport = _PieceTransport()
    Server(transport, Dispatcher()).send({"id": "r2", "result": [bytes(16)] * 3})
    assert transport.sizes == [len(transport.written)]      # a small reply: one write
