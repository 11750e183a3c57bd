"""A small SSD1306 driver of our own (I2C, 128x64 monochrome OLED), for the display
layer's strips (quillfw.ui.display): each 8-row strip of the 1-bit frame is one of
the controller's pages, turned from rows (MONO_HLSB) into columns (MONO_VLSB, the
controller's layout) with framebuf.blit and written; the heap holds 129 bytes.
Solomon Systech SSD1306 datasheet commands: display off 0xAE, clock 0xD5, multiplex
0xA8, offset 0xD3, start line 0x40, charge pump 0x8D 0x14, memory mode 0x20 0x02
(page addressing), segment remap 0xA1, COM scan 0xC8, COM pins 0xDA 0x12, contrast
0x81, precharge 0xD9, VCOMH 0xDB, resume 0xA4, normal 0xA6, display on 0xAF; a page's
address 0xB0+n, its column 0x00/0x10.

    SSD1306(i2c, width=128, height=64, address=0x3C)
"""
try:
    import framebuf
except ImportError:     # CPython: the stand-in (quillfw.ui.framebuf_py)
    from quillfw.ui import framebuf_py as framebuf

_INIT = (0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x02, 0xA1, 0xC8,
         0xDA, 0x12, 0x81, 0xCF, 0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6, 0xAF)


class SSD1306:
    def __init__(self, i2c, width=128, height=64, address=0x3C):
        self.i2c, self.address = i2c, address
        self.width, self.height = width, height
        self._page = bytearray(width + 1)
        self._page[0] = 0x40                # Co=0, D/C#=1: the data that follow
        self._fb = framebuf.FrameBuffer(memoryview(self._page)[1:], width, 8, framebuf.MONO_VLSB)
        for command in _INIT:
            self._command(command)

    def _command(self, command):
        self.i2c.writeto(self.address, bytes((0x00, command)))

    # ---- the display layer's panel calls ----------------------------------------

    def begin(self, screen, page, pages):
        pass

    def strip(self, fb, buffer, top, rows):
        self._fb.fill(0)
        self._fb.blit(fb, 0, 0)
        for command in (0xB0 + top // 8, 0x00, 0x10):
            self._command(command)
        self.i2c.writeto(self.address, self._page)

    def end(self):
        pass
