"""The emulator's debug link (like Trezor's DebugLink). EMULATOR ONLY: this
module lives outside the quillfw package, so no board's build, deploy list or
freeze manifest contains it (tests/boards checks that).

    debug_layout {}                -> {name, title, page, pages, lines} of the screen on
                                      the panel (null before the first), lines: its logical
                                      text (quillfw.ui.screen.Screen.lines; null for a
                                      secret's screen: a seed's words stay on the panel)
    debug_press  {button}          -> null: a press of next, prev, approve, reject or hold,
                                      read by the approver of a confirmation that waits
                                      (quill-emu --approve=channel)

Both are out of band: answered while the device waits for its user. main_emulator.py
registers them and imports this module at their first use (or the first screen
drawn); it then stays, with its state: a few hundred bytes.
"""
from quillfw.wire.errors import INVALID_PARAMS, DeviceError

BUTTONS = {"next": "n", "prev": "p", "approve": "a", "reject": "r", "hold": "h"}
MAX_QUEUED = 64

# the screen on the panel, in slots filled in place (no allocation amid a signing session):
# the Screen while it is drawn or waits for the user (None once the wait is over: its text
# does not stay on the heap), then its name, title, page and pages
LAYOUT = [None, None, None, 0, 0]
PRESSES = []            # presses not read yet (quillfw.ui.flow's codes)


def shown(screen, page, pages):
    LAYOUT[0], LAYOUT[1], LAYOUT[2], LAYOUT[3], LAYOUT[4] = screen, screen.name, screen.title, page, pages


def closed():
    """The wait is over: only the summary stays (its lines left out)."""
    LAYOUT[0] = None


def debug_layout(ctx, params):
    if LAYOUT[1] is None:
        return None
    screen = LAYOUT[0]
    # a secret's screen (a seed's words) stays on the panel: not on the link
    lines = None if screen is None or screen.private else screen.lines()
    return {"name": LAYOUT[1], "title": LAYOUT[2], "page": LAYOUT[3], "pages": LAYOUT[4], "lines": lines}


def debug_press(ctx, params):
    button = params["button"]
    if button not in BUTTONS:
        raise DeviceError(INVALID_PARAMS, "button must be one of next, prev, approve, reject, hold")
    if len(PRESSES) >= MAX_QUEUED:
        raise DeviceError(INVALID_PARAMS, "too many presses queued")
    PRESSES.append(BUTTONS[button])
    return None


def take_press():
    return PRESSES.pop(0) if PRESSES else None
