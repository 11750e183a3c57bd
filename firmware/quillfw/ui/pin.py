"""A PIN entered on the device's buttons (issue 26): it never crosses the link.

    enter(conf, ctx, title) -> the PIN (str); DeviceError when cancelled or no press came

One choice at a time: the digits 0-9, "done" and "delete". Next/prev move between
them (a new digit starts at 0), approve takes the one shown (a one-button board: a
long press), reject cancels. The screen shows a star per digit taken, never the
digits. quill-emu's auto approver cannot enter a PIN: a device that must ask for
one refuses then.
"""
from quillfw.signing.confirm import APPROVED, REFUSED
from quillfw.ui.screen import Screen

CHOICES = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "done", "delete")
MAX_DIGITS = 16
PIN_CANCELLED = "PIN entry cancelled on the device"
PIN_TIMED_OUT = "PIN entry timed out on the device"


def enter(conf, ctx, title):
    from quillfw.signing.confirm import auto_approves
    from quillfw.signing.confirm_flow import approver
    from quillfw.ui.flow import HOLD, NEXT, NO, OK, PREV, _close, make_display, sleep_ms, ticks_diff, ticks_ms
    from quillfw.wire.errors import CONFIRM_TIMEOUT, USER_CANCELLED, DeviceError
    if auto_approves(conf.approver):
        raise DeviceError(USER_CANCELLED, "No one to enter the PIN on the device")
    user = approver(conf.approver)
    if user is None:
        raise DeviceError(USER_CANCELLED, PIN_CANCELLED)
    display = make_display(conf.display)
    digits = bytearray()
    index, shown = 0, None
    user.begin(title, ticks_ms())       # presses from before this point do not count
    ctx.awaiting_user(True)
    pressed_at = ticks_ms()
    try:
        while True:
            if (index, len(digits)) != shown:
                shown = (index, len(digits))
                screen = Screen("pin", title, [("PIN: " + "*" * len(digits),),
                                               ("Choose: " + CHOICES[index],)], "Take", True)
                display.draw(screen, display.page_rows(screen, 0), index, len(CHOICES),
                             "%s? (%d)" % (CHOICES[index], len(digits)))
            now = ticks_ms()
            press = user.poll(now)
            if press is not None:
                pressed_at = now
            if press in (NO, REFUSED):
                raise DeviceError(USER_CANCELLED, PIN_CANCELLED)
            if press == NEXT:
                index = (index + 1) % len(CHOICES)
            elif press == PREV:
                index = (index - 1) % len(CHOICES)
            elif press in (OK, HOLD, APPROVED):
                choice = CHOICES[index]
                if choice == "done":
                    if digits:
                        return digits.decode()
                elif choice == "delete":
                    digits = digits[:-1]
                elif len(digits) < MAX_DIGITS:
                    digits.append(ord(choice))
                    index = 0
            if ticks_diff(now, pressed_at) >= conf.timeout_ms:
                raise DeviceError(CONFIRM_TIMEOUT, PIN_TIMED_OUT)
            ctx.poll_link()
            sleep_ms(20)
    finally:
        for i in range(len(digits)):
            digits[i] = 0
        user.end()
        ctx.awaiting_user(False)
        _close(display, conf)
