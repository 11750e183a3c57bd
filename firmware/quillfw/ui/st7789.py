"""A small ST7789 driver of our own (SPI, RGB565), for the display layer's strips
(quillfw.ui.display): each 1-bit strip is expanded to RGB565 with framebuf.blit
and a two-colour palette, and sent; the heap holds one RGB565 strip (width * 8 * 2
bytes: 3,840 at 240 wide). Sitronix ST7789 datasheet commands: SWRESET 0x01,
SLPOUT 0x11, COLMOD 0x3A (0x55: 16 bits), MADCTL 0x36, INVON 0x21, NORON 0x13,
DISPON 0x29, CASET 0x2A, RASET 0x2B, RAMWR 0x2C.

    ST7789(spi, cs, dc, rst, bl, width, height, x_offset, y_offset, madctl)
        spi: a machine.SPI; the pins: machine.Pin outputs (bl may be None)
"""
try:
    import framebuf
except ImportError:     # CPython: the stand-in (quillfw.ui.framebuf_py)
    from quillfw.ui import framebuf_py as framebuf

from quillfw.compat import const

_STRIP = const(8)
# RGB565 as the panel reads it (big-endian); framebuf writes little-endian, so the
# palette holds the byte-swapped values
BACKGROUND = 0x0000
FOREGROUND = 0xFFFF


def _swapped(colour):
    return ((colour & 0xFF) << 8) | (colour >> 8)


class ST7789:
    def __init__(self, spi, cs, dc, rst, bl, width, height, x_offset=0, y_offset=0, madctl=0x00,
                 sleep_ms=None):
        self.spi, self.cs, self.dc = spi, cs, dc
        self.width, self.height = width, height
        self.x_offset, self.y_offset = x_offset, y_offset
        self._rgb = bytearray(width * _STRIP * 2)
        self._strip = framebuf.FrameBuffer(self._rgb, width, _STRIP, framebuf.RGB565)
        palette = framebuf.FrameBuffer(bytearray(4), 2, 1, framebuf.RGB565)
        palette.pixel(0, 0, _swapped(BACKGROUND))
        palette.pixel(1, 0, _swapped(FOREGROUND))
        self._palette = palette
        if sleep_ms is None:
            from time import sleep_ms
        cs(1)
        if rst is not None:
            rst(0)
            sleep_ms(20)
            rst(1)
            sleep_ms(120)
        self._command(0x01)
        sleep_ms(150)
        self._command(0x11)
        sleep_ms(10)
        self._command(0x3A, b"\x55")
        self._command(0x36, bytes((madctl,)))
        self._command(0x21)
        self._command(0x13)
        self._command(0x29)
        if bl is not None:
            bl(1)

    def _command(self, command, data=None):
        self.cs(0)
        self.dc(0)
        self.spi.write(bytes((command,)))
        if data:
            self.dc(1)
            self.spi.write(data)
        self.cs(1)

    def _window(self, x0, y0, x1, y1):
        x0, x1 = x0 + self.x_offset, x1 + self.x_offset
        y0, y1 = y0 + self.y_offset, y1 + self.y_offset
        self._command(0x2A, bytes((x0 >> 8, x0 & 0xFF, x1 >> 8, x1 & 0xFF)))
        self._command(0x2B, bytes((y0 >> 8, y0 & 0xFF, y1 >> 8, y1 & 0xFF)))

    # ---- the display layer's panel calls ----------------------------------------

    def begin(self, screen, page, pages):
        pass

    def strip(self, fb, buffer, top, rows):
        self._strip.blit(fb, 0, 0, -1, self._palette)
        self._window(0, top, self.width - 1, top + rows - 1)
        self.cs(0)
        self.dc(0)
        self.spi.write(b"\x2c")
        self.dc(1)
        self.spi.write(memoryview(self._rgb)[:self.width * rows * 2])
        self.cs(1)

    def end(self):
        pass
