"""Who answers a confirmation request on a board (quillfw.signing.confirm): its button.
(No approver at all is Confirmation(approver=None): everything the policy asks
is refused. The emulator's approvers live outside this package, so no board's
build contains them.) Built by quillfw.board.hal.approver while a confirmation
waits, and dropped afterwards, so the signing heap does not carry it.

An approver has a `name` (reported by get_info) and three calls that
quillfw.signing.confirm.Confirmation.ask() makes:

    begin(prompt, now_ms)   a confirmation starts (prompt: one line of text, or on a
                            device with a display the quillfw.ui.screen.Screen shown,
                            whose prompt() is that line: a board's buttons need none)
    poll(now_ms)            APPROVED, REFUSED or None (no answer yet); called
                            every ~20 ms while the device waits
    end()                   the wait is over, whatever its outcome
"""
from quillfw.compat import const
from quillfw.signing.confirm import APPROVED, REFUSED

BLINK_MS = const(250)          # the LED blinks at 2 Hz while a confirmation waits
DEBOUNCE_MS = const(30)        # shorter presses are contact bounce, not a press
LONG_PRESS_MS = const(2000)    # held this long: refused


try:
    from time import ticks_diff as _diff
except ImportError:  # CPython: the clock is a plain integer of ms
    def _diff(a, b):
        return a - b


class ButtonApprover:
    """A button and an LED (quillfw.board.hal). While a confirmation waits the LED
    blinks; a press shorter than LONG_PRESS_MS approves when the button is
    released; holding it LONG_PRESS_MS refuses at once. A button already held
    when the wait starts counts only after it has been released, so a stuck or
    pre-pressed button never approves. No answer within the device's timeout is
    the confirmation's own timeout error (quillfw.signing.confirm)."""
    name = "button"

    def __init__(self, button, led=None):
        self.button = button
        self.led = led
        self._start = 0
        self._armed = False
        self._pressed_at = None

    def begin(self, prompt, now_ms):
        self._start = now_ms
        self._armed = False
        self._pressed_at = None

    def _blink(self, now_ms):
        if self.led is not None:
            if (_diff(now_ms, self._start) // BLINK_MS) % 2 == 0:
                self.led.on()
            else:
                self.led.off()

    def poll(self, now_ms):
        self._blink(now_ms)
        down = self.button.pressed()
        if not self._armed:
            self._armed = not down
            return None
        if down:
            if self._pressed_at is None:
                self._pressed_at = now_ms
            elif _diff(now_ms, self._pressed_at) >= LONG_PRESS_MS:
                return REFUSED
            return None
        if self._pressed_at is not None:
            held = _diff(now_ms, self._pressed_at)
            self._pressed_at = None
            if held >= DEBOUNCE_MS:
                return APPROVED
        return None

    def end(self):
        if self.led is not None:
            self.led.off()
