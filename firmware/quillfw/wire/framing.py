"""Wire frames (protocol/SPEC.md §2): MAGIC | u32 length | CBOR body | CRC-32.

    offset 0   2 bytes   MAGIC = C5 51
    offset 2   4 bytes   body length, big-endian (at most MAX_MESSAGE_SIZE)
    offset 6   n bytes   body: one canonical CBOR map
    offset 6+n 4 bytes   CRC-32 (ISO-HDLC, as binascii.crc32) of length and body, big-endian

FrameReader is a pure state machine (no I/O, no clock of its own) shared by the
firmware and the host client. It holds at most one frame in a buffer allocated
once, refuses a length above the limit as soon as the header is in, skips
bytes up to the next MAGIC, and drops a partial frame idle for idle_ms.
"""
import binascii
import struct

from quillfw.compat import const
from quillfw.limits import MAX_MESSAGE_SIZE

MAGIC = b"\xc5\x51"
_MAGIC0 = const(0xC5)
_MAGIC1 = const(0x51)
HEADER_SIZE = const(6)
TRAILER_SIZE = const(4)
OVERHEAD = const(10)
DEFAULT_IDLE_MS = const(2000)

# FrameReader.event values
FRAME = const(1)
REJECT = const(2)


def _crc(data):
    return binascii.crc32(data) & 0xFFFFFFFF


def encode_frame(body):
    """The frame carrying body (bytes-like)."""
    n = len(body)
    length = struct.pack(">I", n)
    crc = binascii.crc32(body, binascii.crc32(length)) & 0xFFFFFFFF
    return MAGIC + length + bytes(body) + struct.pack(">I", crc)


class FrameReader:
    """Feed bytes in, take frames and rejections out.

    After each feed() or expire(), `event` is None, FRAME (`body` is a
    memoryview valid until the next feed) or REJECT (`reject_message` says why,
    `reject_count` how many bytes were dropped). feed() stops at the first
    event and returns how many bytes it consumed, so the caller handles the
    event before feeding the rest: nothing is ever reordered or lost.
    """

    def __init__(self, max_body=MAX_MESSAGE_SIZE, idle_ms=DEFAULT_IDLE_MS, side_body=0):
        """side_body: the largest body hold() still accepts (a second, small buffer)."""
        self.max_body = max_body
        self.idle_ms = idle_ms
        self._buf = bytearray(HEADER_SIZE + max_body + TRAILER_SIZE)
        self._mv = memoryview(self._buf)
        self._main = (self._buf, self._mv, max_body)
        side = bytearray(HEADER_SIZE + side_body + TRAILER_SIZE) if side_body else None
        self._side = (side, memoryview(side), side_body) if side_body else None
        self._held = 0          # bytes of the frame being assembled (from MAGIC on)
        self._frame_size = 0    # whole frame size once the header is in
        self._skipped = 0       # bytes dropped while looking for MAGIC, not yet reported
        self._last_ms = 0
        self.event = None
        self.body = None
        self.reject_message = None
        self.reject_count = 0

    def hold(self):
        """Keep the last frame's body (a view of the main buffer) intact until
        release(): frames that arrive meanwhile are read into the side buffer, and
        one whose body does not fit it is refused as too large. The firmware holds
        the request it is working on, so that its decoded byte strings can stay
        views of the frame instead of copies."""
        if self._side is not None:
            self._use(self._side)

    def release(self):
        """Back to the main buffer, with the part of a frame the side buffer holds."""
        if self._side is not None and self._buf is not self._main[0]:
            held = self._held
            self._main[0][:held] = self._buf[:held]
            self._use(self._main)

    def _use(self, buffers):
        self._buf, self._mv, self.max_body = buffers

    def pending(self):
        """True while a partial frame or unreported skipped bytes are held."""
        return self._held > 0 or self._skipped > 0

    def reset(self):
        self._held = 0
        self._frame_size = 0
        self._skipped = 0

    def _reject(self, message, count):
        self.event = REJECT
        self.reject_message = message
        self.reject_count = count

    def feed(self, data, now_ms):
        """Consume bytes of data (bytes-like) until an event or the end of data."""
        self.event = None
        self.body = None
        size = len(data)
        if size:
            self._last_ms = now_ms
        i = 0
        while i < size and self.event is None:
            if self._held == 0:
                i = self._hunt(data, i, size)
            elif self._held == 1:
                i = self._second_magic_byte(data, i)
            else:
                i = self._fill(data, i, size)
        return i

    def _hunt(self, data, i, size):
        """Skip to the next MAGIC first byte; report skipped bytes before a frame starts."""
        j = i
        while j < size and data[j] != _MAGIC0:
            j += 1
        self._skipped += j - i
        if j == size:
            return j
        if self._skipped:
            self._reject("Discarded %d bytes before frame magic" % self._skipped, self._skipped)
            self._skipped = 0
            return j
        self._buf[0] = _MAGIC0
        self._held = 1
        return j + 1

    def _second_magic_byte(self, data, i):
        if data[i] == _MAGIC1:
            self._buf[1] = _MAGIC1
            self._held = 2
            self._frame_size = 0
            return i + 1
        # a lone first byte was noise; data[i] is examined again by _hunt
        self._held = 0
        self._skipped += 1
        return i

    def _fill(self, data, i, size):
        target = self._frame_size or HEADER_SIZE
        take = min(target - self._held, size - i)
        self._mv[self._held:self._held + take] = data[i:i + take]
        self._held += take
        i += take
        if self._held < target:
            return i
        if not self._frame_size:
            self._check_header()
        else:
            self._check_frame()
        return i

    def _check_header(self):
        length = struct.unpack(">I", self._mv[2:HEADER_SIZE])[0]
        if length > self.max_body:
            # refused before buffering: what follows is skipped up to the next MAGIC
            self._reject("Frame length %d exceeds maximum %d" % (length, self.max_body), HEADER_SIZE)
            self._held = 0
            return
        self._frame_size = HEADER_SIZE + length + TRAILER_SIZE

    def _check_frame(self):
        end = self._frame_size - TRAILER_SIZE
        expected = struct.unpack(">I", self._mv[end:self._frame_size])[0]
        frame_size = self._frame_size
        self._held = 0
        self._frame_size = 0
        if _crc(self._mv[2:end]) != expected:
            self._reject("Frame CRC mismatch", frame_size)
            return
        self.event = FRAME
        self.body = self._mv[HEADER_SIZE:end]

    def expire(self, now_ms, ticks_diff=None):
        """Drop a partial frame (or report skipped bytes) after idle_ms without input."""
        self.event = None
        if not self.pending():
            return False
        elapsed = ticks_diff(now_ms, self._last_ms) if ticks_diff else now_ms - self._last_ms
        if elapsed < self.idle_ms:
            return False
        held = self._held
        count = held + self._skipped
        self.reset()
        if held:
            self._reject("Partial frame timed out, %d bytes discarded" % count, count)
        else:
            self._reject("Discarded %d bytes before frame magic" % count, count)
        return True
