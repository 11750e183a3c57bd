"""A tiny stand-in for MicroPython's `framebuf`, for CPython only (the firmware's modules
also run there: tests, host-side tools). Boards and quill-emu use MicroPython's own, and
every picture the project keeps comes from it. Here each character is drawn as a solid
6x7 block (MicroPython's 8x8 font is in its C source, not here): layouts and strips
are exact, glyphs are not. Formats: MONO_HLSB, MONO_VLSB, RGB565 (little-endian).
"""
MONO_VLSB = 0
RGB565 = 1
MONO_HLSB = 3


class FrameBuffer:
    def __init__(self, buffer, width, height, fmt):
        self.buffer, self.width, self.height, self.fmt = buffer, width, height, fmt

    def pixel(self, x, y, c=None):
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        b = self.buffer
        if self.fmt == RGB565:
            i = 2 * (y * self.width + x)
            if c is None:
                return b[i] | b[i + 1] << 8
            b[i], b[i + 1] = c & 0xFF, (c >> 8) & 0xFF
            return None
        if self.fmt == MONO_HLSB:
            i, bit = y * ((self.width + 7) // 8) + x // 8, 7 - x % 8
        else:
            i, bit = (y // 8) * self.width + x, y % 8
        if c is None:
            return (b[i] >> bit) & 1
        b[i] = (b[i] | 1 << bit) if c else (b[i] & ~(1 << bit))
        return None

    def fill_rect(self, x, y, w, h, c):
        for yy in range(max(y, 0), min(y + h, self.height)):
            for xx in range(max(x, 0), min(x + w, self.width)):
                self.pixel(xx, yy, c)

    def fill(self, c):
        self.fill_rect(0, 0, self.width, self.height, c)

    def hline(self, x, y, w, c):
        self.fill_rect(x, y, w, 1, c)

    def text(self, s, x, y, c=1):
        for i, ch in enumerate(s):
            if ch != " ":
                self.fill_rect(x + 8 * i + 1, y, 6, 7, c)

    def blit(self, source, x, y, key=-1, palette=None):
        for sy in range(source.height):
            for sx in range(source.width):
                value = source.pixel(sx, sy)
                if value == key:
                    continue
                if palette is not None:
                    value = palette.pixel(value, 0)
                self.pixel(x + sx, y + sy, value)
