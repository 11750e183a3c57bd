"""The user's side of a confirmation on a device with a display: the screen's
pages, the buttons, and the answer (quillfw.signing.confirm_flow comes here when
the Confirmation has a display; none of this is loaded on a device without one).

    confirm(conf, ctx, screen, user) -> APPROVED or REFUSED (DeviceError on a timeout)
        user: the approver, or None for quill-emu's auto (every page shown, approved)
    review(conf, hash_type) -> the transaction's Screen (its address modules dropped after)
    show(conf, screen)      draw a screen that asks nothing (an error, a result)
    run(display, screen, user, ctx, timeout_ms, auto=False) -> APPROVED, REFUSED or None
        (None: no press for timeout_ms)

The user (an approver, quillfw.signing.approvers) reports presses from poll():
NEXT, PREV, OK (approve), NO (reject) and HOLD (a one-button board's long press),
or a whole answer (APPROVED / REFUSED: the emulator's ask and channel approvers).
Approving is deliberate: OK counts only on the last page, after every page was
shown. NO refuses on any page. A one-button board (user.one_button) gets two
more pages after the content: "hold to <action>" and "hold to reject"; a short
press moves on (and wraps around), a long press on one of those pages answers.
auto (quill-emu --approve=auto): every page is shown, then the last is approved.
"""
from quillfw.compat import sleep_ms, ticks_diff, ticks_ms
from quillfw.signing.confirm import APPROVED, REFUSED

# an approver's button presses (without a display, quillfw.signing.confirm_flow
# takes OK as approval and NO as refusal)
NEXT = "n"
PREV = "p"
OK = "a"
NO = "r"
HOLD = "h"

_POLL_MS = 20

def _footer(page, n, last, one_button, content, action):
    mark = "%d/%d" % (page + 1, n)
    if one_button and page >= content:
        return mark + " hold"
    if page == last:
        return mark + " " + action + "?"
    return mark + " next>"


def run(display, screen, user, ctx, timeout_ms, auto=False):
    content = display.pages(screen)
    one_button = getattr(user, "one_button", False)
    n = content + 2 if one_button else content
    last = n - 1 if not one_button else content - 1
    page = -1
    target = 0
    pressed_at = ticks_ms()
    while True:
        if target != page:
            page = target
            rows = display.page_rows(screen, page) if page < content else [
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


# what a screen brings in, dropped when it is done (release): the smallest board's heap
# has no room for idle code beside a signing session
_TEXT = ("quillfw.ui.screens", "quillfw.psbt.address", "quillfw.keys.base58")
# every module of this layer that a device with a display loads (quillfw.board.runtime
# interns their names at boot)
MODULES = ("quillfw.ui.screens", "quillfw.ui.display", "quillfw.ui.seed", "quillfw.ui.pin",
           "quillfw.psbt.address")
_DRAWING = ("quillfw.ui.display", "quillfw.ui.screen", "quillfw.ui.boards", "quillfw.ui.st7789",
            "quillfw.ui.ssd1306", "quillfw.ui.buttons", "quillfw.ui.seed", "quillfw.ui.pin",
            "quillfw.ui.flow")


def release(spec=None, approver=None):
    """Forget the display layer's modules (and the panel's, spec: the display spec), so
    that the collector frees them; this module too (its running functions keep it).
    approver: the approver spec whose modules go as well (quillfw.signing.confirm.drop's)."""
    from quillfw.compat import forget
    for name in _TEXT + _DRAWING:
        forget(name)
    if spec is not None:
        forget(spec[1])
    if approver is not None:
        from quillfw.signing.confirm import drop
        drop(approver)


def review(conf, hash_type):
    from quillfw.compat import forget
    from quillfw.ui.screens import review as make
    screen = make(conf, hash_type)
    # the text is made: the modules that made it (addresses, base58) leave the heap
    # before the display's come in (a small heap holds one set at a time)
    for name in _TEXT:
        forget(name)
    return screen


def make_display(spec):
    """The Display of a spec (info, module, *args) (quillfw.signing.confirm)."""
    import gc
    gc.collect()    # the display's buffers need whole blocks
    from quillfw.ui.display import Display
    module = __import__(spec[1], None, None, ["display"])
    return Display(module.display(*spec[2:]))


def _close(display, conf):
    """The screen is done: the panel closed (when its driver has a close), the display's
    modules forgotten."""
    close = getattr(display.panel, "close", None)
    if close is not None:
        close()
    release(conf.display)


def show(conf, screen):
    display = make_display(conf.display)
    n = display.pages(screen)
    try:
        display.draw(screen, display.page_rows(screen, 0), 0, n,
                     _footer(0, n, n - 1, False, n, screen.action))
    finally:
        _close(display, conf)


def _error(display, title, line):
    from quillfw.ui.screen import Screen
    screen = Screen("error", title, [(line,)], "OK")
    display.draw(screen, display.page_rows(screen, 0), 0, 1, "1/1")


def ask(conf, ctx, screen, refused_message):
    """The rooms below the signing one (keys) ask here (quillfw.signing.confirm_flow.ask)."""
    from quillfw.signing.confirm_flow import ask as confirm_ask
    confirm_ask(conf, ctx, screen, refused_message)


def confirm(conf, ctx, screen, user):
    from quillfw.signing.confirm_flow import TIMED_OUT
    from quillfw.wire.errors import CONFIRM_TIMEOUT, DeviceError
    display = make_display(conf.display)
    ctx.awaiting_user(True)
    if user is not None:
        user.begin(screen, ticks_ms())     # the Screen: its text is the approver's to write
    try:
        answer = run(display, screen, user, ctx, conf.timeout_ms, auto=user is None)
        if answer != APPROVED:      # the error screen: what happened, on the device
            _error(display, "Refused" if answer == REFUSED else "Timed out",
                   "Nothing was done." if answer == REFUSED else "No answer: nothing was done.")
    finally:
        if user is not None:
            user.end()
        ctx.awaiting_user(False)
        _close(display, conf)
        display = None
    if answer is None:
        raise DeviceError(CONFIRM_TIMEOUT, TIMED_OUT)
    return answer
