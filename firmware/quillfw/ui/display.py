"""Drawing a screen with MicroPython's framebuf (its 8x8 font) and handing it to
the panel, one page at a time, in strips of STRIP rows of a 1-bit frame buffer:
the heap holds STRIP*width/8 bytes (240 at 240 pixels wide) instead of a whole
frame (7,200 bytes at 240x240, a block the smallest board's heap may not have
free beside a signing session). Each strip is drawn again from the page's rows
(framebuf clips what falls outside it).

    Display(panel)       panel: width, height, begin(screen, page, pages),
                         strip(fb, buffer, y, rows) and end() (a driver in
                         quillfw.ui.st7789 / ssd1306, or the emulator's)
    pages(screen)        how many pages the screen takes on this panel (quillfw.ui.screen.layout)
    page_rows(screen, page)   the rows of one page
    draw(screen, rows, page, pages, footer)    draw one page; ValueError when a
                         title or footer is wider than the panel
"""
try:
    import framebuf
except ImportError:     # CPython: the stand-in (quillfw.ui.framebuf_py)
    from quillfw.ui import framebuf_py as framebuf

from quillfw.ui.screen import layout

CHAR = 8                # framebuf's built-in font: 8x8 pixels
STRIP = 8               # rows of the 1-bit frame buffer drawn and sent at a time


class Display:
    def __init__(self, panel):
        self.panel = panel
        self.width = panel.width
        self.height = panel.height
        self.buffer = bytearray(self.width * STRIP // 8)
        self.fb = framebuf.FrameBuffer(self.buffer, self.width, STRIP, framebuf.MONO_HLSB)
        self.cols = self.width // CHAR
        self.line = CHAR if self.height < 100 else CHAR + 2
        self.rows = (self.height - 2 * self.line - 2) // self.line

    def pages(self, screen):
        return layout(screen, self.cols, self.rows)[0]

    def page_rows(self, screen, page):
        return layout(screen, self.cols, self.rows, page)[1]

    def _check(self, text):
        if len(text) > self.cols:
            raise ValueError("overflow: '%s' is wider than the %dx%d panel" % (text, self.width,
                                                                               self.height))

    def _strip(self, top, screen, rows, footer):
        """The page's pixels in rows top..top+STRIP."""
        fb, line, width = self.fb, self.line, self.width
        fb.fill(0)
        fb.fill_rect(0, -top, width, line, 1)
        fb.text(screen.title, 0, (line - CHAR) // 2 - top, 0)
        y = line + 2 - top
        for text, inverted in rows:
            if -line < y < STRIP:
                if inverted:
                    fb.fill_rect(0, y, len(text) * CHAR, CHAR, 1)
                fb.text(text, 0, y, 0 if inverted else 1)
            y += line
        fb.hline(0, self.height - line - 1 - top, width, 1)
        fb.text(footer, 0, self.height - CHAR - top, 1)

    def draw(self, screen, rows, page, pages, footer):
        self._check(screen.title)
        self._check(footer)
        panel = self.panel
        panel.begin(screen, page, pages)
        try:
            for top in range(0, self.height, STRIP):
                self._strip(top, screen, rows, footer)
                panel.strip(self.fb, self.buffer, top, min(STRIP, self.height - top))
        finally:
            panel.end()
