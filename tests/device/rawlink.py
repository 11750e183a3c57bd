"""A raw serial link to quill-emu for protocol tests: send any bytes, collect
every message the device sends back (a reader thread drains the port so the
firmware never blocks on a full pty). Every message received is checked
against protocol/quill.cddl."""
import queue
import threading
import time

import cbor2
import pycddl
import serial

from quill.device.codec import canonical_dumps
from quillfw.wire.framing import FRAME, REJECT, FrameReader, encode_frame
from tests.kit.protocol import SCHEMA

# quill-emu's idle timeout in these tests: short enough for stale-frame tests,
# long enough for a loaded 2-core CI box
IDLE_MS = 300


def frame(message) -> bytes:
    return encode_frame(canonical_dumps(message))


def check_cddl(message, valid=True):
    """Round trip through the CDDL validator: valid messages come back equal.

    valid=None: the schema rejects the message but pycddl 0.6 does not (it lets
    an empty-map rule `{}` match any map, and an array match some map rules).
    """
    data = canonical_dumps(message)
    if valid is None:
        return
    try:
        back = SCHEMA.validate_cbor(data, True)
    except pycddl.ValidationError:
        assert not valid, f"CDDL rejects {message!r}"
        return
    assert valid, f"CDDL accepts {message!r}"
    assert cbor2.loads(cbor2.dumps(back, canonical=True)) == message


class RawLink:
    def __init__(self, port):
        self.serial = serial.Serial(port, timeout=0.05)
        self.serial.reset_input_buffer()
        self.messages = queue.Queue()
        self.bad_frames = []
        self._stop = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        reader = FrameReader(max_body=1 << 20)
        while not self._stop:
            try:
                data = self.serial.read(self.serial.in_waiting or 1)
            except (serial.SerialException, OSError, TypeError):
                return
            pos = 0
            while pos < len(data):
                pos += reader.feed(data[pos:], time.monotonic() * 1000)
                if reader.event == FRAME:
                    message = cbor2.loads(bytes(reader.body))
                    check_cddl(message)
                    self.messages.put(message)
                elif reader.event == REJECT:
                    self.bad_frames.append(reader.reject_message)

    def write(self, data, pause=0.0):
        self.serial.write(data)
        self.serial.flush()
        if pause:
            time.sleep(pause)

    def send(self, message, valid=True):
        check_cddl(message, valid)
        self.write(frame(message))

    def next(self, timeout=5.0):
        return self.messages.get(timeout=timeout)

    def until(self, rid, timeout=5.0):
        """Messages up to and including the reply with id rid: (rejections, reply)."""
        rejected = []
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(max(0.01, deadline - time.monotonic()))
            if message.get("id") == rid:
                return rejected, message
            rejected.append(message)

    def ping(self, rid="ping", timeout=5.0):
        self.send({"id": rid, "method": "ping"})
        return self.until(rid, timeout)

    def close(self):
        self._stop = True
        self._thread.join(1)
        self.serial.close()


def discarded(rejections):
    """Total bytes the device reports having dropped."""
    assert all(r["id"] == "00" and r["error"]["code"] == -32600 for r in rejections), rejections
    return sum(r["error"]["data"] for r in rejections)
