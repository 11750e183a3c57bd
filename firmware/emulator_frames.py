"""The frames of a qemu target's panel (quill-emu --target=qemu-*, --screen-dir).
EMULATOR ONLY: outside the quillfw package, so no board's build contains it, and
imported only on a qemu target with a screen dir (emulator_display, while a
screen is drawn).

A qemu board has no filesystem, and its first UART (UART0) is the protocol link.
The frames go out on the board's second UART (the MPS2's CMSDK UART1, which
quill.emulator.qemu connects to a socket of its own): a wire of the panel's, not
the link's, so that no frame byte can ever reach the CBOR stream or the host
client, and the firmware needs no change to its link. (Semihosting would let the
firmware write host files itself, and reach any other host file too; a frame kind
on the link would put every screen, the seed's words among them, on the link.)
quill.emulator.frames reads them and writes the same PNG and text files as the
unix port's firmware does (with emulator_png, the one writer).

A record: its kind (one byte), its payload's length (2 bytes, little-endian), the
payload:

    B   a screen begins: width and height (2 bytes each, little-endian), the
        panel's two colours (3 bytes each: off, lit), then the screen's name
    T   a line of its logical text (the title first, then one per item)
    R   rows of the 1-bit frame (MONO_HLSB: PNG's own row layout), whole rows
    E   the screen is drawn
"""
from machine import mem32

from quillfw.compat import const

_UART1 = const(0x40005000)      # the MPS2's UART1: DATA, STATE (+4), CTRL (+8), BAUDDIV (+16)
_TXFULL = const(1)

mem32[_UART1 + 16] = 16         # the slowest divisor QEMU accepts (it does not time the wire)
mem32[_UART1 + 8] = 1           # TX enabled (a UART with TX off drops what it is given)


def _send(data):
    for byte in data:
        while mem32[_UART1 + 4] & _TXFULL:
            pass
        mem32[_UART1] = byte


def _record(kind, payload):
    n = len(payload)
    _send(bytes((kind, n & 0xFF, n >> 8)))
    _send(payload)


class FrameLink:
    """One screen's frames out on UART1, as emulator_png.ScreenFiles writes its files."""

    def __init__(self, name, lines, width, height, colours):
        self.stride = (width + 7) // 8
        _record(0x42, bytes((width & 0xFF, width >> 8, height & 0xFF, height >> 8))
                + colours[0] + colours[1] + name.encode())
        for line in lines:      # a line at a time on the heap
            _record(0x54, line.encode())

    def rows(self, buffer, n):
        _record(0x52, memoryview(buffer)[:n * self.stride])

    def finish(self):
        _record(0x45, b"")
