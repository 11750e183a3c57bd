"""Byte links to the host. Each transport offers:

    read_into(buf, timeout_ms) -> n   bytes now available (0 after timeout_ms
                                      without input); EOFError at end of input
    write(data)                       all of data

Reads never wait for more than what has arrived: MicroPython's stream
read(n)/readinto block until n bytes come, so the stdio link takes one byte at
a time while poll says more is ready (the device's USB CDC stdin ring is fed
byte by byte anyway).

Heap: reading allocates nothing. Each byte comes through one preallocated byte, and
the link is polled with MicroPython's ipoll (a tuple it owns) where poll makes a list
and a tuple per call: a slice and a poll per byte made ~130 bytes of garbage per byte
received on the emulator's 64-bit port, ~40 KB per signed input, a collection of the
whole heap every one or two inputs on the Pico's (issue 28: GC was most of a signature).
"""
import sys


class StdioTransport:
    """USB CDC (rp2, esp32, stm32) via sys.stdin/stdout.buffer; also the emulator's pty."""

    def __init__(self):
        import select
        try:
            import micropython
            # 0x03 on the wire must be data, not KeyboardInterrupt (micropython#6846)
            micropython.kbd_intr(-1)
        except (ImportError, AttributeError):
            pass
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(self._in, select.POLLIN)
        self._ipoll = getattr(self._poll, "ipoll", None)     # CPython's poll has none
        self._one = bytearray(1)

    def _ready(self, timeout_ms):
        ipoll = self._ipoll
        if ipoll is None:
            return bool(self._poll.poll(timeout_ms))
        for _ in ipoll(timeout_ms):
            return True
        return False

    def read_into(self, buf, timeout_ms):
        if not self._ready(timeout_ms):
            return 0
        n = 0
        size = len(buf)
        one = self._one
        while n < size:
            if not self._in.readinto(one):
                if n == 0:
                    raise EOFError
                break
            buf[n] = one[0]
            n += 1
            if not self._ready(0):
                break
        return n

    def write(self, data):
        mv = memoryview(data)
        sent = 0
        while sent < len(mv):
            sent += self._out.write(mv[sent:]) or 0
        flush = getattr(self._out, "flush", None)
        if flush is not None:
            flush()


class UARTTransport:
    """A machine.UART link (USB-UART bridge boards)."""

    def __init__(self, uart):
        self._uart = uart

    def read_into(self, buf, timeout_ms):
        import time
        waited = 0
        while not self._uart.any():
            if waited >= timeout_ms:
                return 0
            time.sleep_ms(1)
            waited += 1
        return self._uart.readinto(buf, min(len(buf), self._uart.any())) or 0

    def write(self, data):
        self._uart.write(data)
