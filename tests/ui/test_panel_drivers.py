"""The boards' panel drivers (quillfw.ui.st7789, quillfw.ui.ssd1306) under the MicroPython
unix port with recorded buses: the bytes a drawn screen sends are the 1-bit frame's
pixels, as RGB565 (big-endian, white on black) in an ST7789's windows, or as an SSD1306's
column bytes page by page; and the boards' buttons (quillfw.ui.buttons) press what their
roles say, on release, never a button held before the question."""
from __future__ import annotations

import json
import subprocess

import pytest

from boards.boardspec import FIRMWARE_DIR
from quillfw.ui.buttons import LONG_PRESS_MS, ButtonsApprover
from quillfw.ui.flow import HOLD, NEXT, NO, OK
from tests.boards.boardtest import micropython_binary

SCRIPT = r"""
import sys, json
sys.path.insert(0, %(firmware)r)
import framebuf
from quillfw.ui.display import Display, STRIP
from quillfw.ui.screen import Screen, host

class Pin:
    def __init__(self, log, name):
        self.log, self.name = log, name
    def __call__(self, v):
        self.log.append((self.name, v))

class Bus:
    def __init__(self):
        self.log = []
    def write(self, data):
        self.log.append(("w", bytes(data)))
    def writeto(self, address, data):
        self.log.append(("i2c", address, bytes(data)))

screen = Screen("review", "Send bitcoin", [("Output 1 of 1:", "bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqdku202",
                "0.10000000 BTC"), ("Name:", host("vault"))])
kind = %(kind)r
bus = Bus()
if kind == "st7789":
    from quillfw.ui.st7789 import ST7789
    panel = ST7789(bus, Pin(bus.log, "cs"), Pin(bus.log, "dc"), Pin(bus.log, "rst"), Pin(bus.log, "bl"),
                   %(width)d, %(height)d, 40, 53, 0x60, sleep_ms=lambda ms: None)
else:
    from quillfw.ui.ssd1306 import SSD1306
    panel = SSD1306(bus, %(width)d, %(height)d, 0x3C)
display = Display(panel)
# the reference: the whole page drawn into one 1-bit frame, strip by strip
frame = bytearray(display.width * display.height // 8)
stride = display.width // 8
rows = display.page_rows(screen, 0)
del bus.log[:]
display.draw(screen, rows, 0, display.pages(screen), "1/1 Sign?")
for top in range(0, display.height, STRIP):
    display._strip(top, screen, rows, "1/1 Sign?")
    n = min(STRIP, display.height - top)
    frame[top * stride:(top + n) * stride] = display.buffer[:n * stride]
def pixel(x, y):
    return (frame[y * stride + x // 8] >> (7 - x %% 8)) & 1
bad = 0
strips = 0
lit = 0
if kind == "st7789":
    data = [e[1] for e in bus.log if e[0] == "w"]
    # per strip: CASET cmd, data, RASET cmd, data, RAMWR cmd, pixels
    for i in range(0, len(data), 6):
        caset, raset, pixels = data[i + 1], data[i + 3], data[i + 5]
        y0 = (raset[0] << 8 | raset[1]) - 53
        x0 = (caset[0] << 8 | caset[1]) - 40
        assert data[i] == b"\x2a" and data[i + 2] == b"\x2b" and data[i + 4] == b"\x2c" and x0 == 0
        for k in range(len(pixels) // 2):
            x, y = k %% display.width, y0 + k // display.width
            want = b"\xff\xff" if pixel(x, y) else b"\x00\x00"
            lit += pixel(x, y)
            bad += pixels[2 * k:2 * k + 2] != want
        strips += 1
else:
    writes = [e[2] for e in bus.log if e[0] == "i2c"]
    for i in range(0, len(writes), 4):
        page_cmd, data = writes[i], writes[i + 3]
        page = page_cmd[1] - 0xB0
        assert data[0] == 0x40 and len(data) == display.width + 1
        for x in range(display.width):
            for bit in range(8):
                got = (data[1 + x] >> bit) & 1
                lit += pixel(x, page * 8 + bit)
                bad += got != pixel(x, page * 8 + bit)
        strips += 1
print(json.dumps({"strips": strips, "bad": bad, "lit": lit}))
"""


@pytest.mark.parametrize("kind, width, height", [("st7789", 240, 240), ("st7789", 240, 135),
                                                 ("ssd1306", 128, 64)])
def test_a_drawn_screen_reaches_the_panel_pixel_for_pixel(kind: str, width: int, height: int) -> None:
    code = SCRIPT % {"firmware": str(FIRMWARE_DIR), "kind": kind, "width": width, "height": height}
    proc = subprocess.run([micropython_binary(), "-X", "heapsize=2M", "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["strips"] == -(-height // 8) and result["bad"] == 0 and result["lit"] > 500


class Key:
    def __init__(self) -> None:
        self.down = False

    def pressed(self) -> bool:
        return self.down


def _press(approver: ButtonsApprover, key: Key, start: int, held: int) -> list[str | None]:
    key.down = True
    out = [approver.poll(start)]
    key.down = False
    out.append(approver.poll(start + held))
    return out


def test_buttons_press_their_roles_on_release() -> None:
    a, b, nxt = Key(), Key(), Key()
    approver = ButtonsApprover([(a, "approve"), (b, "reject"), (nxt, "next")])
    assert not approver.one_button
    approver.begin("", 0)
    assert approver.poll(0) is None                     # armed: nothing held
    assert _press(approver, nxt, 10, 50) == [None, NEXT]
    assert _press(approver, a, 100, 50) == [None, OK]
    assert _press(approver, b, 200, 50) == [None, NO]
    assert _press(approver, a, 300, 5) == [None, None]  # contact bounce


def test_a_button_held_when_asked_counts_only_after_release() -> None:
    a = Key()
    a.down = True
    approver = ButtonsApprover([(a, "approve"), (Key(), "reject"), (Key(), "next")])
    approver.begin("", 0)
    assert approver.poll(0) is None and approver.poll(5000) is None
    a.down = False
    assert approver.poll(5010) is None                  # its release is not a press
    assert _press(approver, a, 6000, 100) == [None, OK]


def test_one_button_moves_on_short_and_answers_long() -> None:
    usr = Key()
    approver = ButtonsApprover([(usr, "select")])
    assert approver.one_button
    approver.begin("", 0)
    approver.poll(0)
    assert _press(approver, usr, 10, 100) == [None, NEXT]
    assert _press(approver, usr, 1000, LONG_PRESS_MS) == [None, HOLD]


def test_cpython_draws_through_the_stand_in_framebuf() -> None:
    """Under CPython (host tools, the firmware's CPython tests) the display layer draws with
    quillfw.ui.framebuf_py: the same strips reach the panel, glyphs as blocks."""
    from quillfw.ui.display import Display
    from quillfw.ui.screen import Screen
    from quillfw.ui.ssd1306 import SSD1306

    class Bus:
        def __init__(self) -> None:
            self.pages: list[bytes] = []

        def writeto(self, address: int, data: bytes) -> None:
            if data[0] == 0x40:
                self.pages.append(bytes(data[1:]))

    bus = Bus()
    display = Display(SSD1306(bus))
    screen = Screen("address", "Check address", [("Address:", "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk")])
    display.draw(screen, display.page_rows(screen, 0), 0, display.pages(screen), "1/2 next>")
    assert len(bus.pages) == 8 and all(len(p) == 128 for p in bus.pages)
    assert bus.pages[0] != bytes(128) and bus.pages[7] != bytes(128)    # title bar, footer
