"""DeviceClient: one serial connection to a Quill device (or quill-emu).

- Opens with RTS and DTR held low: ESP32 boards reset when they toggle.
- A reader thread takes whatever bytes have arrived (never a fixed-size blocking
  read), reassembles frames and hands each reply to the call waiting for its id;
  id-less log messages go to the logger, replies to unreadable requests (id
  "00") are logged and counted.
- call() holds the session lock, so nothing else touches the device while a
  multi-message exchange (signing) runs: `with client.session(): ...`. ping()
  bypasses it: the firmware answers ping even while busy.
- While waiting for a reply, the client pings every probe_interval seconds: an
  "idle" answer arriving before the reply means the request was lost (replies
  are sent in order), so the call fails at once instead of waiting forever;
  "awaiting_user" is logged once per call ("Waiting for confirmation on the
  device"). Calls that may wait for the user (awaits_user=True) time out after
  user_timeout seconds, a backstop behind the device's own confirmation timeout.
"""
import itertools
import logging
import os
import threading
import time
from collections import deque

import serial

from quill.device.codec import FrameReader, decode_body, encode_message
from quill.device.errors import DeviceDisconnected, DeviceError, DeviceTimeout, DeviceUnavailable
from quillfw.wire.errors import RESERVED_ID
from quillfw.wire.framing import DEFAULT_IDLE_MS, FRAME, REJECT

SHORT_TIMEOUT = 5.0        # ping, get_info and other immediate answers
USER_TIMEOUT = 600.0       # a request that may wait for the user's confirmation
PROBE_INTERVAL = 1.0
BAUDRATE = 115200          # ignored by USB CDC and ptys; used by USB-UART bridges
_READ_TIMEOUT = 0.05
REJECTIONS_KEPT = 16


def reply_idle_ms(short_timeout: float) -> int:
    """How long a reply may pause mid-frame before its partial frame is dropped: a third of
    the time an immediate answer may take, 2 s at the least. An emulated Cortex-M's UART is
    fed as the host machine lets QEMU run, and under load a pause of over 2 s dropped a whole
    reply (the M0+ soak: 'Device lost the sign_segwit_v0 request', which the device had
    answered); a third keeps a frame cut by a restart expiring well before the get_info that
    checks for the restart gives up."""
    return max(DEFAULT_IDLE_MS, int(short_timeout * 1000 / 3))


class _Pending:
    __slots__ = ("event", "reply")

    def __init__(self):
        self.event = threading.Event()
        self.reply = None


class DeviceClient:
    def __init__(self, port: str, logger=None, baudrate=BAUDRATE, short_timeout=SHORT_TIMEOUT,
                 probe_interval=PROBE_INTERVAL, max_message_size=None, user_timeout=USER_TIMEOUT):
        self.port = port
        self.log = logger or logging.getLogger("quill.device")
        self.baudrate = baudrate
        self.short_timeout = short_timeout
        self.user_timeout = user_timeout
        self.probe_interval = probe_interval
        self.max_message_size = max_message_size
        # error bodies of the last replies with id "00" (bounded: a link that garbles a little
        # for months must not grow the daemon), and how many there were in all
        self.rejections: deque = deque(maxlen=REJECTIONS_KEPT)
        self.rejected = 0
        self._serial = None
        self._reader = None
        self._closing = False
        self._failure = None          # why the link went down
        self._pending: dict = {}
        self._pending_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._session = threading.RLock()
        self._ids = itertools.count(1)
        self._id_prefix = os.urandom(2).hex()

    # ---- connection -------------------------------------------------------------

    def open(self):
        port = serial.serial_for_url(self.port, do_not_open=True, baudrate=self.baudrate,
                                     timeout=_READ_TIMEOUT, write_timeout=self.short_timeout)
        # set before open(): pyserial applies them while opening, so they never pulse high
        port.rts = False
        port.dtr = False
        try:
            port.open()
        except (serial.SerialException, OSError) as e:
            raise DeviceUnavailable(f"Cannot open device {self.port}: {e}") from None
        port.reset_input_buffer()
        self._serial = port
        self._reader = threading.Thread(target=self._read_loop, name=f"quill-device-{self.port}",
                                        daemon=True)
        self._reader.start()
        return self

    @property
    def connected(self) -> bool:
        return self._serial is not None and self._failure is None and not self._closing

    def close(self):
        self._closing = True
        if self._serial is not None:
            try:
                self._serial.cancel_read()
            except (AttributeError, serial.SerialException, OSError):
                pass
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(2)
        if self._serial is not None:
            try:
                self._serial.close()
            except (serial.SerialException, OSError):
                pass
        self._fail_pending(DeviceDisconnected(f"Device connection {self.port} closed"))

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    # ---- receiving --------------------------------------------------------------

    def _read_loop(self):
        reader = FrameReader(max_body=1 << 20, idle_ms=reply_idle_ms(self.short_timeout))
        try:
            while not self._closing:
                data = self._serial.read(self._serial.in_waiting or 1)
                pos = 0
                while pos < len(data):
                    pos += reader.feed(data[pos:], time.monotonic() * 1000)
                    self._on_event(reader)
                if not data and reader.expire(time.monotonic() * 1000):
                    self._on_event(reader)
        except (serial.SerialException, OSError, TypeError) as e:
            if not self._closing:
                self._link_down(f"Device disconnected ({self.port}): {e}")

    def _link_down(self, why):
        self._failure = why
        self.log.warning("%s", why)
        self._fail_pending(DeviceDisconnected(why))

    def _fail_pending(self, exc):
        with self._pending_lock:
            pending, self._pending = self._pending, {}
        for slot in pending.values():
            slot.reply = exc
            slot.event.set()

    def _on_event(self, reader):
        if reader.event == REJECT:
            self.log.warning("device sent bad bytes: %s", reader.reject_message)
        elif reader.event == FRAME:
            try:
                message = decode_body(reader.body)
            except Exception as e:  # a garbled reply: its caller times out or is probed
                self.log.warning("undecodable reply from device: %s", e)
                return
            self._deliver(message)

    def _deliver(self, message):
        if not isinstance(message, dict):
            self.log.warning("unexpected message from device: %r", message)
        elif "log" in message and "id" not in message:
            self.log.info("device: %s", message["log"])
        elif message.get("id") == RESERVED_ID:
            self.rejections.append(message.get("error"))
            self.rejected += 1
            self.log.warning("device rejected input (%d so far): %s", self.rejected, message.get("error"))
        else:
            with self._pending_lock:
                slot = self._pending.pop(message.get("id"), None)
            if slot is None:
                self.log.warning("reply to no pending request: %r", message.get("id"))
                return
            slot.reply = message
            slot.event.set()

    # ---- requests ---------------------------------------------------------------

    def session(self):
        """The device lock: hold it across a multi-message exchange."""
        return self._session

    def call(self, method, params=None, timeout=None, awaits_user=False):
        """The result of one request, or DeviceError / DeviceUnavailable.

        timeout: seconds (default: the short timeout, or user_timeout with
        awaits_user=True: the device may be waiting for its user).
        """
        if timeout is None:
            timeout = self.user_timeout if awaits_user else self.short_timeout
        with self._session:
            return self._request(method, params, timeout, probe=True)

    def ping(self, timeout=None) -> str:
        """'idle', 'busy' or 'awaiting_user'; answered even while a request runs."""
        return self._request("ping", None, timeout or self.short_timeout, probe=False)

    def out_of_band(self, method, params=None, timeout=None):
        """A request the firmware answers even while another one runs (its out-of-band
        methods: ping, get_info, quill-emu's debug link): the session lock is not taken."""
        return self._request(method, params, timeout or self.short_timeout, probe=False)

    def get_info(self) -> dict:
        info = self.call("get_info")
        self.max_message_size = info.get("max_message_size", self.max_message_size)
        return info

    def _request(self, method, params, timeout, probe):
        if not self.connected:
            raise DeviceDisconnected(self._failure or f"Device {self.port} is not connected")
        rid = f"{self._id_prefix}{next(self._ids):x}"
        message = {"id": rid, "method": method}
        if params is not None:
            message["params"] = params
        frame = encode_message(message, **({"max_size": self.max_message_size}
                                          if self.max_message_size else {}))
        slot = _Pending()
        with self._pending_lock:
            self._pending[rid] = slot
        try:
            self._write(frame)
            self._wait(slot, method, timeout, probe)
        finally:
            with self._pending_lock:
                self._pending.pop(rid, None)
        reply = slot.reply
        if isinstance(reply, Exception):
            raise reply
        if "error" in reply:
            error = reply["error"]
            raise DeviceError(error.get("code"), error.get("message", ""), error.get("data"))
        return reply.get("result")

    def _write(self, frame):
        try:
            with self._write_lock:
                self._serial.write(frame)
                self._serial.flush()
        except (serial.SerialException, OSError) as e:
            self._link_down(f"Device disconnected ({self.port}): {e}")
            raise DeviceDisconnected(self._failure) from None

    def _wait(self, slot, method, timeout, probe):
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while True:
            step = self.probe_interval if probe else timeout
            if deadline is not None:
                step = min(step, max(0.0, deadline - time.monotonic()))
            if slot.event.wait(step):
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise DeviceTimeout(f"Device did not answer {method} within {timeout:g} s")
            if not probe:
                continue
            state = self.ping()
            if state == "idle" and not slot.event.is_set():
                raise DeviceUnavailable(f"Device lost the {method} request (it reports idle)")
            if state == "awaiting_user" and not told:
                self.log.info("Waiting for confirmation on the device (%s)", method)
                told = True
