"""Byte links to the host. Each transport offers:

    read_into(buf, timeout_ms) -> n   bytes now available (0 after timeout_ms
                                      without input); EOFError at end of input
    write(data)                       all of data

Reads never wait for more than what has arrived: MicroPython's stream
read(n)/readinto block until n bytes come, so the stdio link takes one byte at
a time while poll says more is ready (the device's USB CDC stdin ring is fed
byte by byte anyway).
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

    def read_into(self, buf, timeout_ms):
        if not self._poll.poll(timeout_ms):
            return 0
        n = 0
        size = len(buf)
        while n < size:
            got = self._in.readinto(buf[n:n + 1])
            if not got:
                if n == 0:
                    raise EOFError
                break
            n += 1
            if not self._poll.poll(0):
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
