"""The user confirmation's transient half (quillfw.signing.confirm imports it when it
asks the user or reads or changes the policy, then drops it): the policy's
validation, file and comparison, the approvers, and the wait.

A policy is its protocol map: {"policy": "always"|"never"} or
{"policy": "above", "amount": satoshis}.
"""
import gc
import json
import os
import time

from quillfw.compat import const
from quillfw.consensus import MAX_MONEY
from quillfw.signing.confirm import ABOVE, ALWAYS, APPROVED, NEVER, NO, OK, REFUSED, auto_approves
from quillfw.wire.errors import CONFIRM_TIMEOUT, INTERNAL_ERROR, INVALID_PARAMS, USER_CANCELLED, DeviceError

_POLL_MS = const(20)
# How many kinds of transaction each policy asks for: a smaller rank asks less.
RANK = {NEVER: 0, ABOVE: 1, ALWAYS: 2}

SIGN_REFUSED = "Signing refused on the device"
POLICY_REFUSED = "Policy change refused on the device"
TIMED_OUT = "Confirmation timed out on the device"

try:
    from time import sleep_ms, ticks_diff, ticks_ms
except ImportError:  # CPython
    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

    def sleep_ms(ms):
        time.sleep(ms / 1000)


def btc(sats):
    return "%d.%08d" % (sats // 100000000, sats % 100000000)


# ---- the policy ---------------------------------------------------------------------

def make_policy(policy, amount=None):
    """The policy map, or DeviceError(INVALID_PARAMS) naming what is wrong."""
    if policy not in RANK:
        raise DeviceError(INVALID_PARAMS, "policy must be always, above or never")
    if policy != ABOVE:
        if amount is not None:
            raise DeviceError(INVALID_PARAMS, "amount is only for policy 'above'")
        return {"policy": policy}
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= MAX_MONEY:
        raise DeviceError(INVALID_PARAMS, "policy 'above' needs an amount in 0..%d satoshis"
                          % MAX_MONEY)
    return {"policy": ABOVE, "amount": amount}


def loosens(old, new):
    """Whether `new` leaves out some case where `old` asks."""
    if old["policy"] == ABOVE and new["policy"] == ABOVE:
        return new["amount"] > old["amount"]
    return RANK[new["policy"]] < RANK[old["policy"]]


def describe(policy):
    if policy["policy"] == ABOVE:
        return "confirm above %s BTC" % btc(policy["amount"])
    return "confirm " + policy["policy"]


def load_policy(path):
    """The stored policy: `always` when none was stored, and when the file is
    unreadable (the strictest policy, rather than trusting damaged bytes)."""
    if path is None:
        return make_policy(ALWAYS)
    try:
        with open(path) as f:
            data = json.loads(f.read())
        return make_policy(data.get("policy"), data.get("amount"))
    except (OSError, ValueError, AttributeError, DeviceError):
        return make_policy(ALWAYS)


def save_policy(path, policy):
    if path is None:
        return                              # kept in memory only
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(json.dumps(policy))
        os.rename(tmp, path)                # atomic: a power cut keeps the old or the new
    except OSError:
        raise DeviceError(INTERNAL_ERROR, "Cannot store the confirmation policy") from None


def change_policy(conf, ctx, params):
    """set_confirm_policy: tightening at once, loosening once the user agreed."""
    new = make_policy(params["policy"], params.get("amount"))
    if loosens(conf.policy, new):
        from quillfw.ui.screens import policy
        ask(conf, ctx, policy(describe(conf.policy), describe(new)), POLICY_REFUSED)
    save_policy(conf.path, new)
    conf.policy = new
    return new


# ---- the wait -----------------------------------------------------------------------

def approver(spec):
    """The approver a spec names (quillfw.signing.confirm), or None."""
    if not isinstance(spec, tuple):
        return spec
    module = __import__(spec[1], None, None, ["approver"])
    return module.approver(spec[0], *spec[2:])


def confirm_signature(conf, ctx, hash_type):
    """The transaction's review (quillfw.ui.screens.review), confirmed by the user."""
    from quillfw.ui.screens import review
    ask(conf, ctx, review(conf, hash_type), SIGN_REFUSED)


def ask(conf, ctx, screen, refused_message):
    """Return once the user approved screen (quillfw.ui.screen.Screen); DeviceError
    when refused or timed out. Without a display the approver gets its one-line
    prompt; with one, the screen is drawn and paged (quillfw.ui.flow)."""
    auto = auto_approves(conf.approver)
    if auto and conf.display is None:
        return
    user = None if auto else approver(conf.approver)
    if user is None and not auto:
        raise DeviceError(USER_CANCELLED, refused_message)
    if conf.display is not None:
        return _on_display(conf, ctx, screen, user, refused_message)
    start = ticks_ms()
    ctx.awaiting_user(True)
    try:
        user.begin(screen.prompt() + "?", start)
        while True:
            now = ticks_ms()
            answer = user.poll(now)
            if answer in (APPROVED, OK):
                return
            if answer in (REFUSED, NO):
                raise DeviceError(USER_CANCELLED, refused_message)
            if ticks_diff(now, start) >= conf.timeout_ms:
                raise DeviceError(CONFIRM_TIMEOUT, TIMED_OUT)
            ctx.poll_link()
            sleep_ms(_POLL_MS)
    finally:
        if user is not None:
            user.end()
        ctx.awaiting_user(False)


def show(conf, screen):
    """Draw a screen that asks nothing (an error, a step's result); nothing without a
    display."""
    if conf.display is None:
        return
    display = make_display(conf.display)
    from quillfw.ui.flow import _footer
    pages = display.pages(screen)
    display.draw(screen, pages[0], 0, len(pages), _footer(0, len(pages), len(pages) - 1, False,
                                                          len(pages), screen.action))


def make_display(spec):
    """The Display of a spec (info, module, *args) (quillfw.signing.confirm)."""
    gc.collect()    # the frame buffer needs a whole block
    from quillfw.ui.display import Display
    module = __import__(spec[1], None, None, ["display"])
    return Display(module.display(*spec[2:]))


def _on_display(conf, ctx, screen, user, refused_message):
    from quillfw.ui.flow import run
    display = make_display(conf.display)
    ctx.awaiting_user(True)
    if user is not None:
        user.begin(screen.prompt() + "?", ticks_ms())
    try:
        answer = run(display, screen, user, ctx, conf.timeout_ms, auto=user is None)
    finally:
        if user is not None:
            user.end()
        ctx.awaiting_user(False)
        display = None
    if answer == APPROVED:
        return
    if answer == REFUSED:
        raise DeviceError(USER_CANCELLED, refused_message)
    raise DeviceError(CONFIRM_TIMEOUT, TIMED_OUT)
