"""The user confirmation's transient half (quillfw.signing.confirm imports it when it
asks the user or reads or changes the policy, then drops it): the policy's
validation, file and comparison, the approvers, and the wait.

A policy is its protocol map: {"policy": "always"|"never"} or
{"policy": "above", "amount": satoshis}.
"""
import json
import os

from quillfw.compat import const, sleep_ms, ticks_diff, ticks_ms
from quillfw.consensus import MAX_MONEY
from quillfw.signing.confirm import ABOVE, ALWAYS, APPROVED, NEVER, REFUSED, auto_approves
from quillfw.wire.errors import CONFIRM_TIMEOUT, INTERNAL_ERROR, INVALID_PARAMS, USER_CANCELLED, DeviceError

_POLL_MS = const(20)
# How many kinds of transaction each policy asks for: a smaller rank asks less.
RANK = {NEVER: 0, ABOVE: 1, ALWAYS: 2}

SIGN_REFUSED = "Signing refused on the device"
POLICY_REFUSED = "Policy change refused on the device"
TIMED_OUT = "Confirmation timed out on the device"

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
        prompt = "Change policy from %s to %s?" % (describe(conf.policy), describe(new))
        if conf.display is not None:
            from quillfw.ui.screens import policy
            prompt = policy(describe(conf.policy), describe(new))
        ask(conf, ctx, prompt, POLICY_REFUSED)
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
    """The transaction, confirmed by the user: its review (quillfw.ui.screens.review)
    on a device with a display."""
    if conf.display is not None:
        from quillfw.ui.flow import review
        return ask(conf, ctx, review(conf, hash_type), SIGN_REFUSED)
    # nobody reads it on a blind device (its button approves): a one-line summary that
    # needs none of the address modules (no room for them beside the smallest heap's session)
    n_in, total_in, n_out, total_out = conf.counts
    prompt = "Sign: %d inputs %s BTC, %d outputs %s BTC" % (n_in, btc(total_in), n_out,
                                                           btc(total_out))
    if (hash_type & 3) >= 2:
        prompt += ", outputs not committed (sighash 0x%02x)" % hash_type
    ask(conf, ctx, prompt + "?", SIGN_REFUSED)


def ask(conf, ctx, prompt, refused_message):
    """Return once the user approved; DeviceError when refused or timed out.
    prompt: a quillfw.ui.screen.Screen, drawn and paged on a device with a display
    (quillfw.ui.flow), or its one line of text on a device without one."""
    auto = auto_approves(conf.approver)
    if auto and conf.display is None:
        return
    user = None if auto else approver(conf.approver)
    if user is None and not auto:
        raise DeviceError(USER_CANCELLED, refused_message)
    if conf.display is not None:
        from quillfw.ui.flow import confirm
        if confirm(conf, ctx, prompt, user) == APPROVED:
            return
        raise DeviceError(USER_CANCELLED, refused_message)
    if not isinstance(prompt, str):
        prompt = prompt.prompt() + "?"
    start = ticks_ms()
    ctx.awaiting_user(True)
    try:
        user.begin(prompt, start)
        while True:
            now = ticks_ms()
            answer = user.poll(now)
            if answer in (APPROVED, "a"):     # the approve button (quillfw.ui.flow.OK)
                return
            if answer in (REFUSED, "r"):      # the reject button (quillfw.ui.flow.NO)
                raise DeviceError(USER_CANCELLED, refused_message)
            if ticks_diff(now, start) >= conf.timeout_ms:
                raise DeviceError(CONFIRM_TIMEOUT, TIMED_OUT)
            ctx.poll_link()
            sleep_ms(_POLL_MS)
    finally:
        user.end()
        ctx.awaiting_user(False)
