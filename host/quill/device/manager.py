"""DeviceManager: the daemon's one handle on the signing device (-device=SPEC).

    ''/None     no device: every call fails with a clear RPC error
    'emulator'  start quill-emu as a child process, use its pty, stop it on close()
    'auto'      the first serial port whose USB VID:PID is a supported board
    otherwise   a device path (/dev/ttyACM0) or a pyserial URL (socket://host:port)

client() opens lazily and reopens after an unplug (or a restarted emulator);
info() caches the device's get_info until the connection changes.
"""
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from serial.tools import list_ports

from quill.device.client import SHORT_TIMEOUT, DeviceClient
from quill.device.errors import DeviceUnavailable

# USB ids of boards that run the firmware (MicroPython's own ids) and of the
# USB-UART bridges found on ESP32 boards.
SUPPORTED_USB_IDS = {
    (0x2E8A, 0x0005): "Raspberry Pi RP2040 (MicroPython)",
    (0xF055, 0x9800): "pyboard (MicroPython)",
    (0x303A, 0x4001): "Espressif ESP32-S3 (MicroPython)",
    (0x303A, 0x1001): "Espressif USB JTAG/serial",
    (0x10C4, 0xEA60): "Silicon Labs CP210x",
    (0x1A86, 0x55D4): "WCH CH9102",
    (0x1A86, 0x7523): "WCH CH340",
    (0x0403, 0x6001): "FTDI FT232",
}

NO_DEVICE = "No device configured (restart quilld with -device=<emulator|auto|path>)"
EMULATOR_START_TIMEOUT = 90.0   # a first start generates the seed (BIP39: ~3 s idle)


def find_board():
    """The serial port of the first connected supported board, or None."""
    for port in sorted(list_ports.comports(), key=lambda p: p.device):
        if (port.vid, port.pid) in SUPPORTED_USB_IDS:
            return port.device
    return None


QEMU_SHORT_TIMEOUT = 30.0


class DeviceManager:
    def __init__(self, spec, datadir=None, logger=None, emulator_args=(),
                 short_timeout=SHORT_TIMEOUT, log_name="quill-emu.log"):
        self.spec = spec or ""
        self.datadir = Path(datadir) if datadir else None
        self.log = logger or logging.getLogger("quill.device")
        self.emulator_args = list(emulator_args)
        self.log_name = log_name        # the emulator's stderr, in datadir
        if spec == "emulator" and any(a.startswith("qemu-") for a in self.emulator_args):
            # an emulated Cortex-M takes its input through a UART that QEMU feeds as the
            # host machine lets it run: a loaded machine must not look like a dead link
            short_timeout = max(short_timeout, QEMU_SHORT_TIMEOUT)
        self.short_timeout = short_timeout
        self._client = None
        self._info = None
        self._emulator = None
        self._lock = threading.Lock()

    @property
    def configured(self) -> bool:
        return bool(self.spec)

    def client(self) -> DeviceClient:
        """A connected client, opening (or reopening) the link as needed."""
        with self._lock:
            if self._client is not None and self._client.connected:
                return self._client
            if self._client is not None:
                self._client.close()
                self._client = None
                self._info = None
            client = DeviceClient(self._port(), logger=self.log, short_timeout=self.short_timeout)
            self._client = client.open()
            return self._client

    def info(self, refresh=False) -> dict:
        """The device's get_info, cached per connection."""
        client = self.client()
        if refresh or self._info is None or client is not self._info[0]:
            self._info = (client, client.get_info())
        return self._info[1]

    def cached_boot_id(self):
        """The boot_id of the cached get_info while its connection is up, else None (no I/O)."""
        cached = self._info
        if cached is None or not cached[0].connected:
            return None
        return cached[1].get("boot_id")

    def note_lost(self, exc):
        """A lone device has nowhere else to go: the caller's error is the answer
        (DevicePool.note_lost routes the call elsewhere)."""

    def forget_info(self):
        """Drop the cached get_info (the device restarted): the next info() reads it."""
        self._info = None

    def close(self):
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            self._info = None
            self._stop_emulator()

    # ---- where the device is ----------------------------------------------------

    def _port(self) -> str:
        if not self.spec:
            raise DeviceUnavailable(NO_DEVICE)
        if self.spec == "emulator":
            return self._emulator_port()
        if self.spec == "auto":
            port = find_board()
            if port is None:
                raise DeviceUnavailable("No supported device found on any USB serial port")
            return port
        return self.spec

    def _emulator_port(self) -> str:
        # A quill-emu that is being killed closes its pty before waitpid reports it gone (the
        # kernel closes a process's files before it becomes a zombie): a vanished pty means a
        # dead emulator even while poll() still says running.
        if self._emulator is not None and self._emulator[0].poll() is None and os.path.exists(self._emulator[1]):
            return self._emulator[1]
        self._stop_emulator()
        log = None
        if self.datadir is not None:
            self.datadir.mkdir(parents=True, exist_ok=True)
            log = open(self.datadir / self.log_name, "ab")
        proc = subprocess.Popen([sys.executable, "-m", "quill.emulator.main", *self.emulator_args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL if log is None else log)
        if log is not None:
            log.close()
        port = self._read_emulator_port(proc)
        self._emulator = (proc, port)
        self.log.info("started quill-emu (pid %d) on %s", proc.pid, port)
        return port

    @staticmethod
    def _read_emulator_port(proc) -> str:
        result = []
        reader = threading.Thread(target=lambda: result.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(EMULATOR_START_TIMEOUT)
        port = result[0].decode().strip() if result else ""
        if not port:
            proc.kill()
            proc.wait()
            raise DeviceUnavailable("The device emulator (quill-emu) failed to start")
        return port

    def _stop_emulator(self):
        if self._emulator is None:
            return
        proc = self._emulator[0]
        self._emulator = None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
