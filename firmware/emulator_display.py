"""The emulator's panel (quill-emu --display, --screen-dir). EMULATOR ONLY: outside
the quillfw package, so no board's build contains it. The firmware draws with
the same code as on a board (quillfw.ui.display); only this panel differs: it
hands every frame to the debug link (emulator_debuglink) and, with a screen
dir, writes it as DIR/<6-digit sequence>-<screen name>.png (the panel's native
size; the 1-bit frame with the panel's two colours as a palette) and
DIR/<same>.txt (the screen's logical text, one item per line): emulator_png,
imported only with a screen dir. On a qemu target (frames=True: no filesystem) the
same frames and text go to the host on the board's second UART (emulator_frames),
and quill-emu writes the files there with emulator_png.

    display(kind, screen_dir, frames)     the spec's builder (quillfw.signing.confirm)
"""
import emulator_debuglink

PANELS = {"st7789-240x240": ("st7789", 240, 240), "st7789-240x135": ("st7789", 240, 135),
          "ssd1306-128x64": ("ssd1306", 128, 64)}
BUTTONS = ("next", "prev", "approve", "reject")
# a colour panel's pixels (RGB565 on the glass, as quillfw.ui.st7789's palette expands
# them) and the OLED's: off and lit
COLOURS = {"st7789": (b"\x00\x00\x00", b"\xff\xff\xff"), "ssd1306": (b"\x00\x00\x00", b"\x7f\xdf\xff")}


def info(kind):
    """get_info's "display" map for a --display kind (None: no display)."""
    if kind == "none":
        return None
    panel, width, height = PANELS[kind]
    return {"panel": panel, "width": width, "height": height,
            "buttons": [{"name": b, "role": b} for b in BUTTONS]}


def text(screen):
    """The screen's logical text, a line at a time: its title, then one line per item
    (quillfw.ui.screen.Screen.lines, without the list on the heap)."""
    from quillfw.ui.screen import plain
    yield screen.title
    for item in screen.items:
        yield " ".join(plain(p) for p in item)


class EmulatedPanel:
    def __init__(self, kind, screen_dir, frames=False):
        """frames: send each screen to the host (emulator_frames) rather than write it
        to screen_dir (a qemu target's: its files are written by quill-emu)."""
        self.kind, self.width, self.height = PANELS[kind]
        self.screen_dir = screen_dir
        self.frames = frames
        self._png = None

    def begin(self, screen, page, pages):
        emulator_debuglink.shown(screen, page, pages)
        if self.frames:
            from emulator_frames import FrameLink
            self._png = FrameLink(screen.name, text(screen), self.width, self.height,
                                  COLOURS[self.kind])
        elif self.screen_dir:
            from emulator_png import ScreenFiles
            self._png = ScreenFiles(self.screen_dir, screen.name, text(screen), self.width,
                                    self.height, COLOURS[self.kind])

    def strip(self, fb, buffer, top, rows):
        if self._png is not None:
            self._png.rows(buffer, rows)

    def close(self):
        """The screen is done (quillfw.ui.flow): the files' module leaves the heap."""
        emulator_debuglink.closed()
        from quillfw.compat import forget
        forget("emulator_png")
        forget("emulator_frames")

    def end(self):
        png, self._png = self._png, None
        if png is not None:
            png.finish()


def display(kind, screen_dir=None, frames=False):
    return EmulatedPanel(kind, screen_dir, frames)
