"""The user's side of a confirmation on a device with a display: the screen's
pages, the buttons, and the answer.

    run(display, screen, user, ctx, timeout_ms, auto=False) -> APPROVED, REFUSED or None
        (None: no press for timeout_ms: the caller's timeout)

The user (an approver, quillfw.signing.approvers) reports presses from poll():
NEXT, PREV, OK (approve), NO (reject) and HOLD (a one-button board's long press),
or a whole answer (APPROVED / REFUSED: the emulator's ask and channel approvers).
Approving is deliberate: OK counts only on the last page, after every page was
shown. NO refuses on any page. A one-button board (user.one_button) gets two
more pages after the content: "hold to <action>" and "hold to reject"; a short
press moves on (and wraps around), a long press on one of those pages answers.
auto (quill-emu --approve=auto): every page is shown, then the last is approved.
"""
from quillfw.signing.confirm import APPROVED, HOLD, NEXT, NO, OK, PREV, REFUSED

_POLL_MS = 20

try:
    from time import sleep_ms, ticks_diff, ticks_ms
except ImportError:  # CPython
    import time

    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

    def sleep_ms(ms):
        time.sleep(ms / 1000)


def _footer(page, n, last, one_button, content, action):
    mark = "%d/%d" % (page + 1, n)
    if one_button and page >= content:
        return mark + " hold"
    if page == last:
        return mark + " " + action + "?"
    return mark + " next>"


def run(display, screen, user, ctx, timeout_ms, auto=False):
    pages = display.pages(screen)
    content = len(pages)
    one_button = getattr(user, "one_button", False)
    n = content + 2 if one_button else content
    last = n - 1 if not one_button else content - 1
    page = -1
    target = 0
    pressed_at = ticks_ms()
    while True:
        if target != page:
            page = target
            rows = pages[page] if page < content else [
                ("Hold the button", False), ("to " + (screen.action if page == content
                                                      else "reject"), False)]
            display.draw(screen, rows, page, n, _footer(page, n, last, one_button, content,
                                                              screen.action))
        if auto:
            if page == last:
                return APPROVED
            target = page + 1
            continue
        now = ticks_ms()
        press = user.poll(now)
        if press in (APPROVED, REFUSED):
            return press
        if press is not None:
            pressed_at = now
        if press == NO:
            return REFUSED
        if press == OK and page == last and not one_button:
            return APPROVED
        if press == HOLD and one_button and page >= content:
            return APPROVED if page == content else REFUSED
        if press == NEXT:
            target = (page + 1) % n if one_button else min(page + 1, n - 1)
        elif press == PREV:
            target = max(page - 1, 0)
        if ticks_diff(now, pressed_at) >= timeout_ms:
            return None
        ctx.poll_link()
        sleep_ms(_POLL_MS)
