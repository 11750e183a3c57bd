"""A new seed's words, shown only on the device, then checked (issue 26): the words
never leave it (seed_generate answers without them on a device with a display).

    backup(conf, ctx, words)     words: the mnemonic's list. The words' screens, then
                                 CHECKS positions chosen here at random, each asked
                                 as a choice among CHOICES words (the right one and
                                 decoys from the BIP39 list): next/prev move between
                                 them, approve picks the one shown. A wrong pick,
                                 a refusal or no press ends it with DeviceError, and
                                 the caller installs nothing.

quill-emu's auto approver stands for a user who wrote the words down: it picks
the right word.
"""
import os

from quillfw.signing.confirm import APPROVED
from quillfw.ui.screen import Screen

CHECKS = 3
CHOICES = 4
SEED_REFUSED = "Seed backup refused on the device"
CHECK_FAILED = "Seed check failed: write the words down and start again"


def _random(n):
    return int.from_bytes(os.urandom(2), "big") % n


def words_screen(words):
    items = [("%2d. %s" % (i + 1, w),) for i, w in enumerate(words)]
    return Screen("seed-words", "Write %d words" % len(words), items, "Done", True)


def _check(conf, ctx, display, user, words, position):
    from quillfw.keys.bip39 import word
    from quillfw.ui.flow import HOLD, NEXT, NO, OK, PREV, sleep_ms, ticks_diff, ticks_ms
    right = words[position]
    choices = [right]
    while len(choices) < CHOICES:
        candidate = word(_random(2048))
        if candidate not in choices:
            choices.append(candidate)
    first = _random(CHOICES)
    choices[0], choices[first] = choices[first], choices[0]
    title = "Word %d of %d?" % (position + 1, len(words))
    shown = -1
    index = 0
    pressed_at = ticks_ms()
    while True:
        if index != shown:
            shown = index
            screen = Screen("seed-check", title, [("Is it: %s" % choices[index],)], "Pick", True)
            display.draw(screen, display.page_rows(screen, 0), index, CHOICES,
                         "%d/%d pick?" % (index + 1, CHOICES))
        if user is None:        # quill-emu auto: the user who wrote the words down
            if choices[index] == right:
                return True
            index += 1
            continue
        now = ticks_ms()
        press = user.poll(now)
        if press is not None:
            pressed_at = now
        if press in (OK, HOLD, APPROVED):
            return choices[index] == right
        if press in (NO, "refuse"):
            return None
        if press == NEXT:
            index = (index + 1) % CHOICES
        elif press == PREV:
            index = (index - 1) % CHOICES
        if ticks_diff(now, pressed_at) >= conf.timeout_ms:
            return None
        ctx.poll_link()
        sleep_ms(20)


def backup(conf, ctx, words):
    from quillfw.signing.confirm import auto_approves
    from quillfw.signing.confirm_flow import approver, ask
    from quillfw.wire.errors import USER_CANCELLED, DeviceError
    ask(conf, ctx, words_screen(words), SEED_REFUSED)
    from quillfw.ui.flow import _close, make_display
    user = None if auto_approves(conf.approver) else approver(conf.approver)
    display = make_display(conf.display)
    ctx.awaiting_user(True)
    positions = []
    try:
        while len(positions) < CHECKS:
            position = _random(len(words))
            if position in positions:
                continue
            positions.append(position)
            if user is not None:
                user.begin("Check word %d" % (position + 1), 0)
            try:
                result = _check(conf, ctx, display, user, words, position)
            finally:
                if user is not None:
                    user.end()
            if result is None:
                raise DeviceError(USER_CANCELLED, SEED_REFUSED)
            if not result:
                raise DeviceError(USER_CANCELLED, CHECK_FAILED)
    finally:
        ctx.awaiting_user(False)
        _close(display, conf)
