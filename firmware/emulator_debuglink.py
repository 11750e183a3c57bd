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

# the screen on the panel: (screen, page, pages) while it is drawn or waits for the user;
# the debug_layout map it left once the wait is over (so that its text does not stay
# on the heap beside a signing session)
LAYOUT = [None]
PRESSES = []            # presses not read yet (quillfw.ui.flow's codes)


def shown(screen, page, pages):
    LAYOUT[0] = (screen, page, pages)


def _layout(held):
    screen, page, pages = held
    # a secret's screen (a seed's words) stays on the panel: not on the link
    return {"name": screen.name, "title": screen.title, "page": page, "pages": pages,
            "lines": None if screen.private else screen.lines()}


def closed():
    """The wait is over: only the summary stays (its lines left out)."""
    if isinstance(LAYOUT[0], tuple):
        layout = _layout(LAYOUT[0])
        layout["lines"] = None
        LAYOUT[0] = layout


def debug_layout(ctx, params):
    held = LAYOUT[0]
    return _layout(held) if isinstance(held, tuple) else held


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
