"""The serving loop: transport bytes -> frames -> dispatcher -> reply frames.

One Server owns the transport, the FrameReader and a receive chunk. Bytes are
always consumed in arrival order through that one chunk, whether by the main
loop or by poll_link(), which a long-running handler calls between its steps
so that ping (and other out-of-band methods) are answered while it works and
any other request gets a BUSY error instead of waiting unseen.

Nothing here ever raises out of serve_forever() except end of input: every
malformed byte sequence, bad request or failed allocation becomes an error
reply and the loop goes on.

Heap: the frame being read has one buffer of the largest frame's size
(LinkBuffers), allocated once, at boot, before the firmware's other modules
(quillfw.board.runtime), so that it never needs a large contiguous block later.
A request's garbage is collected once it is answered (_handle_request says
why). A reply is never held whole: its length is counted (cbor.encoded_size),
then it is encoded straight into a small buffer of the link's (FrameWriter) that goes
out each time it fills, the CRC running over the pieces. A reply of
max_message_size therefore needs no block of its size, however fragmented the
heap is once a session runs.
"""
import binascii
import gc
import struct
import time

from quillfw.compat import IS_MICROPYTHON, const
from quillfw.limits import MAX_MESSAGE_SIZE
from quillfw.wire import cbor, envelope, framing
from quillfw.wire.dispatcher import AWAITING_USER, BUSY_STATE, IDLE
from quillfw.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, OUT_OF_MEMORY, PARSE_ERROR, RESERVED_ID

_CHUNK = const(256)
_OUT = const(128)            # FrameWriter's buffer: a reply up to this size is one write
# The largest request read while another one is handled (its byte strings are views
# of the main frame buffer): ping, get_info and the requests refused as BUSY.
_SIDE_BODY = const(256)
_POLL_MS = const(200)


def _ticks_ms():
    try:
        return time.ticks_ms()
    except AttributeError:  # CPython
        return int(time.monotonic() * 1000)


def _ticks_diff(a, b):
    try:
        return time.ticks_diff(a, b)
    except AttributeError:
        return a - b


class LinkBuffers:
    """The link's buffers, allocated once: the frame reader's (a maximum-size frame,
    and the small one used while a request is held) and a reply frame's header and
    CRC."""

    def __init__(self, max_body=MAX_MESSAGE_SIZE):
        self.reader = framing.FrameReader(max_body, side_body=_SIDE_BODY)
        self.writer = FrameWriter()


class FrameWriter:
    """A frame written as its body is encoded (cbor.encode_into calls append and
    extend): the pieces gather in one small buffer that goes to the transport each
    time it fills; the CRC-32 (of the length and the body, SPEC §2) runs over them."""

    def __init__(self, size=_OUT):
        self._buf = bytearray(size)
        self._mv = memoryview(self._buf)
        self._used = 0
        self._crc_from = 0      # the buffer's bytes before this offset are not CRC'd
        self.crc = 0
        self.transport = None

    def begin(self, transport, n):
        """Start a frame whose body has n bytes: MAGIC and the length."""
        self.transport = transport
        self._used = 0
        self.crc = 0
        self.extend(framing.MAGIC)
        self._crc_from = 2
        self.extend(struct.pack(">I", n))

    def append(self, byte):
        if self._used == len(self._buf):
            self.flush()
        self._buf[self._used] = byte
        self._used += 1

    def extend(self, data):
        n = len(data)
        if self._used + n > len(self._buf):
            self.flush()
            if n > len(self._buf):      # a long byte string goes out as it lies
                self.crc = binascii.crc32(data, self.crc)
                self.transport.write(data)
                return
        self._buf[self._used:self._used + n] = data
        self._used += n

    def flush(self):
        if self._used:
            piece = self._mv[:self._used]
            if self._used > self._crc_from:
                self.crc = binascii.crc32(self._mv[self._crc_from:self._used], self.crc)
            self.transport.write(piece)
        self._used = 0
        self._crc_from = 0

    def end(self):
        """The CRC, then everything still buffered, out."""
        crc = self.crc
        if self._used > self._crc_from:
            crc = binascii.crc32(self._mv[self._crc_from:self._used], crc)
        self._crc_from = self._used + framing.TRAILER_SIZE   # the CRC is not its own input
        self.extend(struct.pack(">I", crc & 0xFFFFFFFF))
        self.flush()
        self.transport = None


class Server:
    def __init__(self, transport, dispatcher, idle_ms=framing.DEFAULT_IDLE_MS, log=None,
                 log_frames=False, buffers=None):
        """buffers: LinkBuffers allocated at boot (default: allocated now)."""
        self.transport = transport
        self.dispatcher = dispatcher
        buffers = buffers or LinkBuffers()
        self.reader = buffers.reader
        self.reader.idle_ms = idle_ms
        self._writer = buffers.writer
        self.state = IDLE
        self.log_sink = log
        self.log_frames = log_frames
        self._chunk = bytearray(_CHUNK)
        self._chunk_mv = memoryview(self._chunk)
        self._start = 0
        self._end = 0
        self._reset_pending = False

    # ---- output ---------------------------------------------------------------

    def _write_frame(self, message):
        """Encode message into its frame as it is written; False (nothing written)
        when it does not fit one message."""
        n = cbor.encoded_size(message)
        if n > MAX_MESSAGE_SIZE:
            return False
        writer = self._writer
        writer.begin(self.transport, n)
        cbor.encode_into(writer, message)
        writer.end()
        return True

    def send(self, message):
        """Encode and write one message; a reply too large becomes an error reply."""
        if not self._write_frame(message):
            rid = message.get("id", RESERVED_ID)
            self._write_frame(envelope.error_reply(
                rid, INTERNAL_ERROR, "Reply exceeds maximum message size"))

    def log(self, text):
        """Diagnostics: to the emulator's stderr, or as id-less log frames if enabled."""
        if self.log_sink is not None:
            self.log_sink(text)
        if self.log_frames:
            self.send(envelope.log_message(text))

    def _send_error(self, rid, code, message, data=None):
        self.send(envelope.error_reply(rid, code, message, data))
        if self.state == IDLE:
            self.dispatcher.reset_session()
        else:
            self._reset_pending = True

    # ---- input ----------------------------------------------------------------

    def serve_forever(self):
        """Serve until the transport reports end of input (EOFError)."""
        while True:
            self.serve_once(_POLL_MS)

    def serve_once(self, timeout_ms):
        """Wait up to timeout_ms for input and handle every complete event in it."""
        self._pump(timeout_ms, busy=False)

    def poll_link(self):
        """For long-running handlers: answer what has arrived meanwhile, without waiting."""
        self._pump(0, busy=True)

    def awaiting_user(self, waiting=True):
        """Handlers mark the time spent waiting for the user's confirmation (ping shows it)."""
        self.state = AWAITING_USER if waiting else BUSY_STATE

    def _pump(self, timeout_ms, busy):
        if self._start == self._end:
            self._start = 0
            self._end = self.transport.read_into(self._chunk_mv, timeout_ms)
        now = _ticks_ms()
        while self._start < self._end:
            self._start += self.reader.feed(self._chunk_mv[self._start:self._end], now)
            self._handle_event(busy)
        if self.reader.expire(_ticks_ms(), _ticks_diff):
            self._handle_event(busy)

    def _handle_event(self, busy):
        reader = self.reader
        if reader.event == framing.REJECT:
            self.log(reader.reject_message)
            self._send_error(RESERVED_ID, INVALID_REQUEST, reader.reject_message,
                             reader.reject_count)
        elif reader.event == framing.FRAME:
            self._handle_frame(reader.body, busy)

    def _handle_frame(self, body, busy):
        if busy:
            self._handle_request(body, busy)
            return
        self.reader.hold()
        try:
            self._handle_request(body, busy)
        finally:
            self.reader.release()

    def _handle_request(self, body, busy):
        try:
            request = cbor.decode(body, views=not busy)
        except cbor.CBORError as e:
            self._send_error(RESERVED_ID, PARSE_ERROR, "Invalid CBOR: " + str(e))
            return
        except MemoryError:
            gc.collect()
            # answered with the request's own id, read from the front of the body
            self._send_error(envelope.peek_id(body), OUT_OF_MEMORY, "Out of memory")
            return
        if busy:
            self._reply(self.dispatcher.dispatch(self, request, busy=True))
            return
        try:
            reply = self.dispatcher.dispatch(self, request)
        finally:
            self.state = IDLE
        request = None
        self._reply(reply)
        reply = None
        if self._reset_pending:
            self._reset_pending = False
            self.dispatcher.reset_session()
        # a request's garbage goes before the next request comes: left, the next one's
        # long-lived allocations (a session's state, a module's code) land amid it, and once
        # it is freed the heap is split into pieces that no function of a module loaded
        # later fits (the Pico model's six-input multisig ran out of memory so at its first
        # signature, with kilobytes free). MicroPython collects otherwise only when an
        # allocation fails. (CPython's heap is not fixed: nothing to gain, and its full
        # collection can outlast a partial frame's idle time.)
        if IS_MICROPYTHON:
            gc.collect()

    def _reply(self, reply):
        try:
            if "error" not in reply:
                if self._encodes(reply):
                    return
                reply = envelope.error_reply(reply["id"], INTERNAL_ERROR,
                                             "Reply exceeds maximum message size")
            error = reply["error"]
            self._send_error(reply["id"], error["code"], error["message"], error.get("data"))
        except MemoryError:
            gc.collect()
            self._send_error(reply["id"], OUT_OF_MEMORY, "Out of memory")

    def _encodes(self, reply):
        """Write the reply's frame; False when it is too large (or not encodable: a bug)."""
        try:
            return self._write_frame(reply)
        except cbor.CBORError:
            return False
