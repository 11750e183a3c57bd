"""The emulator's screen files (quill-emu --screen-dir): every screen drawn as
DIR/<6-digit sequence>-<screen name>.png (the panel's native size; the 1-bit frame
with the panel's two colours as a palette) and DIR/<same>.txt (the screen's logical
text, one item per line). EMULATOR ONLY, and loaded only with a screen dir
(emulator_display imports it while a screen is drawn): a device without one keeps
its heap for the firmware, as a board's panel driver leaves it. On a qemu target
the frames reach the host instead (emulator_frames), where quill.emulator.frames
writes them with this module's ScreenFiles: the same bytes as the unix port's.
"""
import os
import struct
from binascii import crc32

_SEQUENCE = [None]      # the last file's sequence number (None: read from the folder)

def _chunk(f, kind, data):
    f.write(struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", crc32(data, crc32(kind)) & 0xFFFFFFFF))


class PngWriter:
    """A 1-bit palette PNG of a MONO_HLSB frame (its rows are PNG's rows), written
    strip by strip as the display draws it. Its image data is zlib (RFC 1950)
    around one stored deflate block (RFC 1951): no compression."""

    def __init__(self, f, width, height, colours):
        self.f = f
        self.stride = (width + 7) // 8
        size = height * (self.stride + 1)       # each row: filter byte 0, then its bits
        f.write(b"\x89PNG\r\n\x1a\n")
        _chunk(f, b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 3, 0, 0, 0))
        _chunk(f, b"PLTE", colours[0] + colours[1])
        head = b"IDAT\x78\x01" + struct.pack("<BHH", 1, size, size ^ 0xFFFF)
        f.write(struct.pack(">I", size + 11))
        f.write(head)
        self.crc = crc32(head)
        self.a, self.b = 1, 0
        self.row = bytearray(self.stride + 1)

    def rows(self, buffer, n):
        row, stride = self.row, self.stride
        for y in range(n):
            row[1:] = buffer[y * stride:(y + 1) * stride]
            self.f.write(row)
            self.crc = crc32(row, self.crc)
            a, b = self.a, self.b
            for byte in row:
                a += byte
                b += a
            self.a, self.b = a % 65521, b % 65521

    def finish(self):
        tail = struct.pack(">I", (self.b << 16) | self.a)
        self.f.write(tail)
        self.f.write(struct.pack(">I", crc32(tail, self.crc) & 0xFFFFFFFF))
        _chunk(self.f, b"IEND", b"")


def _names(directory):
    """The folder's names one at a time (a folder of many screens would be a large list)."""
    if hasattr(os, "ilistdir"):
        for entry in os.ilistdir(directory):
            yield entry[0]
    else:                       # CPython
        yield from os.listdir(directory)


def _next_sequence(directory):
    if _SEQUENCE[0] is None:    # a new confirmation, or a restart: go on after the files there
        last = 0
        for name in _names(directory):
            if len(name) > 7 and name[:6].isdigit() and name[6] == "-":
                last = max(last, int(name[:6]))
        _SEQUENCE[0] = last
    _SEQUENCE[0] += 1
    return _SEQUENCE[0]


class ScreenFiles:
    """One screen's two files, written as the display draws it (whole files only: renamed
    from .tmp once finished)."""

    def __init__(self, directory, name, lines, width, height, colours):
        """lines: the screen's logical text, one line at a time (emulator_display.text);
        quill.emulator.frames writes a qemu target's screens with this class too."""
        self.base = "%s/%06d-%s" % (directory, _next_sequence(directory), name)
        with open(self.base + ".txt.tmp", "wb") as f:
            for line in lines:              # a line at a time on the heap
                f.write(line.encode() + b"\n")
        self.png = PngWriter(open(self.base + ".png.tmp", "wb"), width, height, colours)

    def rows(self, buffer, n):
        self.png.rows(buffer, n)

    def finish(self):
        self.png.finish()
        self.png.f.close()
        for suffix in (".png", ".txt"):
            os.rename(self.base + suffix + ".tmp", self.base + suffix)
