"""The emulator's panel (quill-emu --display, --screen-dir). EMULATOR ONLY: outside
the quillfw package, so no board's build contains it. The firmware draws with
the same code as on a board (quillfw.ui.display); only this panel differs: it
hands every frame to the debug link (emulator_debuglink) and, with a screen
dir, writes it as DIR/<6-digit sequence>-<screen name>.png (the panel's native
size; the 1-bit frame with the panel's two colours as a palette) and
DIR/<same>.txt (the screen's logical text, one item per line).

    display(kind, screen_dir)     the spec's builder (quillfw.signing.confirm)
"""
import os
import struct
from binascii import crc32

import emulator_debuglink

PANELS = {"st7789-240x240": ("st7789", 240, 240), "st7789-240x135": ("st7789", 240, 135),
          "ssd1306-128x64": ("ssd1306", 128, 64)}
BUTTONS = ("next", "prev", "approve", "reject")
# a colour panel's pixels (RGB565 on the glass, as quillfw.ui.st7789's palette expands
# them) and the OLED's: off and lit
COLOURS = {"st7789": (b"\x00\x00\x00", b"\xff\xff\xff"), "ssd1306": (b"\x00\x00\x00", b"\x7f\xdf\xff")}
_SEQUENCE = [None]


def info(kind):
    """get_info's "display" map for a --display kind (None: no display)."""
    if kind == "none":
        return None
    panel, width, height = PANELS[kind]
    return {"panel": panel, "width": width, "height": height,
            "buttons": [{"name": b, "role": b} for b in BUTTONS]}




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


def _next_sequence(directory):
    if _SEQUENCE[0] is None:    # after a restart: go on after the files already there
        last = 0
        for name in os.listdir(directory):
            if len(name) > 7 and name[:6].isdigit() and name[6] == "-":
                last = max(last, int(name[:6]))
        _SEQUENCE[0] = last
    _SEQUENCE[0] += 1
    return _SEQUENCE[0]


class EmulatedPanel:
    def __init__(self, kind, screen_dir):
        self.kind, self.width, self.height = PANELS[kind]
        self.screen_dir = screen_dir
        self._png = None
        self._base = None

    def begin(self, screen, page, pages):
        emulator_debuglink.shown(screen, page, pages)
        if not self.screen_dir:
            return
        self._base = "%s/%06d-%s" % (self.screen_dir, _next_sequence(self.screen_dir), screen.name)
        from quillfw.ui.screen import plain
        with open(self._base + ".txt.tmp", "wb") as f:
            f.write(screen.title.encode() + b"\n")
            for item in screen.items:       # a line at a time on the heap
                f.write(" ".join(plain(p) for p in item).encode() + b"\n")
        self._png = PngWriter(open(self._base + ".png.tmp", "wb"), self.width, self.height,
                              COLOURS[self.kind])

    def strip(self, fb, buffer, top, rows):
        if self._png is not None:
            self._png.rows(buffer, rows)

    def close(self):
        """The confirmation is over (quillfw.ui.flow)."""
        emulator_debuglink.closed()

    def end(self):
        png, self._png = self._png, None
        if png is None:
            return
        png.finish()
        png.f.close()
        for suffix in (".png", ".txt"):         # whole files only
            os.rename(self._base + suffix + ".tmp", self._base + suffix)


def display(kind, screen_dir=None):
    return EmulatedPanel(kind, screen_dir)
