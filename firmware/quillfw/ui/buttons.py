"""A board's buttons as the user's side of a confirmation on a display
(quillfw.ui.flow): each press, debounced and taken on release, is its role's code.

    approver(name, buttons, led=None, led_kind="gpio")
        the spec ("buttons", "quillfw.ui.buttons", buttons, led, led_kind) of a
        board's main.py; buttons: ((pin, role, active_low), ...) from board.json,
        role next / prev / approve / reject, or select: a one-button board (a short
        press moves on, a press held LONG_PRESS_MS answers on the last pages)

A button already held when the wait starts counts only after it was released, so
a stuck or pre-pressed button never presses anything. The LED blinks while the
device waits, as on a board without a display (quillfw.signing.approvers).
"""
from quillfw.compat import const
from quillfw.ui.flow import HOLD, NEXT, NO, OK, PREV

DEBOUNCE_MS = const(30)
LONG_PRESS_MS = const(1500)
BLINK_MS = const(250)
CODES = {"next": NEXT, "prev": PREV, "approve": OK, "reject": NO}

try:
    from time import ticks_diff as _diff
except ImportError:  # CPython
    def _diff(a, b):
        return a - b


class ButtonsApprover:
    name = "buttons"

    def __init__(self, buttons, led=None):
        """buttons: [(object with pressed(), role)]."""
        self.buttons = buttons
        self.led = led
        self.one_button = len(buttons) == 1 and buttons[0][1] == "select"
        self._down = [None] * len(buttons)      # when each was pressed, None: released
        self._armed = [False] * len(buttons)
        self._start = 0

    def begin(self, prompt, now_ms):
        self._start = now_ms
        for i in range(len(self.buttons)):
            self._down[i] = None
            self._armed[i] = False

    def poll(self, now_ms):
        if self.led is not None:
            (self.led.on if (_diff(now_ms, self._start) // BLINK_MS) % 2 == 0 else self.led.off)()
        for i, (button, role) in enumerate(self.buttons):
            down = button.pressed()
            if not self._armed[i]:
                self._armed[i] = not down
                continue
            if down:
                if self._down[i] is None:
                    self._down[i] = now_ms
                continue
            if self._down[i] is not None:
                held = _diff(now_ms, self._down[i])
                self._down[i] = None
                if held >= DEBOUNCE_MS:
                    if role == "select":
                        return HOLD if held >= LONG_PRESS_MS else NEXT
                    return CODES[role]
        return None

    def end(self):
        if self.led is not None:
            self.led.off()


def approver(name, buttons, led=None, led_kind="gpio"):
    from quillfw.board.hal import Button, Led, NeoPixelLed
    made = [(Button(pin, active_low), role) for pin, role, active_low in buttons]
    if led is not None:
        led = NeoPixelLed(led) if led_kind == "neopixel" else Led(led)
    return ButtonsApprover(made, led)
