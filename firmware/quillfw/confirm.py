"""User confirmation on the device (protocol/SPEC.md §8): the policy, where it
is kept, and the wait for the user's answer.

Policy, persisted on the device (load_policy/save_policy: a small JSON file on the board's
flash, in the emulator's data dir):

    always          every signing session asks the user (the default, and what
                    an unreadable policy file falls back to)
    above <amount>  a session asks when its amount exceeds <amount> satoshis
    never           no session asks

The amount of a session is the larger of the input amounts' total and the
output amounts' total, as the device saw them in the first streamed pass. The
outputs are what every SIGHASH_ALL/DEFAULT signature commits to, so their total
is a floor a host cannot lower; the inputs' total adds the fee, which an honest
host always states. (A legacy signature does not commit to its input's amount,
so a dishonest host can understate legacy inputs and hide a fee; the outputs'
total still holds.) A signature that does not commit to every output
(SIGHASH_NONE, SIGHASH_SINGLE) asks whatever the amount, because the outputs it
is spent to can be replaced after signing.

When: once per signing session, at its first signature request that needs it,
which the session accepts only after the whole transaction was streamed (state
READY) and which comes before any signature; the session then stays confirmed
until it ends. sign_begin, sign_end, sign_abort and every error reply start
over (reset()), so a second transaction is never covered by an earlier answer.

Who may change the policy: the host asks with set_confirm_policy. Tightening
(asking in more cases) takes effect at once; loosening (asking in fewer cases)
is itself confirmed by the user on the device first, so a compromised host can
never silently weaken what the user set.

The wait: ctx.awaiting_user() makes ping answer "awaiting_user"; the link stays
polled (ping and get_info answered, anything else BUSY); the approver
(quillfw.approvers) shows the request and reads the answer. A refusal is
USER_CANCELLED, no answer within timeout_ms is CONFIRM_TIMEOUT; either error
reply resets the signing session and wipes its keys.
"""
import json
import os
import time

from quillfw.compat import const
from quillfw.dispatcher import TEXT, UINT, Method
from quillfw.errors import (CONFIRM_TIMEOUT, INTERNAL_ERROR, INVALID_PARAMS, USER_CANCELLED,
                            DeviceError)

# an approver's answers (quillfw.approvers, firmware/emulator_approval.py)
APPROVED = "approve"
REFUSED = "refuse"

ALWAYS = "always"
ABOVE = "above"
NEVER = "never"
# How many kinds of transaction each policy asks for: a smaller rank asks less.
_RANK = {NEVER: 0, ABOVE: 1, ALWAYS: 2}

MAX_MONEY = const(2100000000000000)
DEFAULT_TIMEOUT_MS = const(120000)
POLICY_FILE = "quill_confirm.json"      # on a board: in the filesystem's root
_POLL_MS = const(20)

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


def commits_all_outputs(hash_type):
    # the low bits: 0 DEFAULT (taproot) and 1 ALL commit every output; 2 NONE, 3 SINGLE do not
    return (hash_type & 3) in (0, 1)


# A policy is its protocol map: {"policy": "always"|"never"} or {"policy": "above", "amount": sats}.

def make_policy(policy, amount=None):
    """The policy map, or DeviceError(INVALID_PARAMS) naming what is wrong."""
    if policy not in _RANK:
        raise DeviceError(INVALID_PARAMS, "policy must be always, above or never")
    if policy != ABOVE:
        if amount is not None:
            raise DeviceError(INVALID_PARAMS, "amount is only for policy 'above'")
        return {"policy": policy}
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= MAX_MONEY:
        raise DeviceError(INVALID_PARAMS, "policy 'above' needs an amount in 0..%d satoshis"
                          % MAX_MONEY)
    return {"policy": ABOVE, "amount": amount}


def asks(policy, amount):
    """Whether a session of this amount needs the user's confirmation."""
    if policy["policy"] == ABOVE:
        return amount > policy["amount"]
    return policy["policy"] == ALWAYS


def loosens(old, new):
    """Whether `new` leaves out some case where `old` asks."""
    if old["policy"] == ABOVE and new["policy"] == ABOVE:
        return new["amount"] > old["amount"]
    return _RANK[new["policy"]] < _RANK[old["policy"]]


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
        raise DeviceError(INTERNAL_ERROR, "Cannot store the confirmation policy")


class Confirmation:
    """The device's confirmation: policy, the current session's amounts, the wait.
    approver None: nobody can answer, so whatever the policy asks is refused."""

    def __init__(self, approver=None, path=None, timeout_ms=DEFAULT_TIMEOUT_MS):
        self.approver = approver
        self.path = path
        self.timeout_ms = timeout_ms
        self.policy = load_policy(path)
        self.reset()

    # ---- the signing session ------------------------------------------------------

    def reset(self):
        """A new session (or none): nothing confirmed, nothing counted."""
        self.confirmed = False
        self.n_inputs = self.n_outputs = 0
        self.inputs_total = self.outputs_total = 0

    def add_input(self, amount):
        self.n_inputs += 1
        self.inputs_total += amount

    def add_output(self, amount):
        self.n_outputs += 1
        self.outputs_total += amount

    def amount(self):
        return max(self.inputs_total, self.outputs_total)

    def before_signature(self, ctx, hash_type):
        """Ask the user if this session needs it and has not been confirmed yet."""
        if self.confirmed:
            return
        whole = commits_all_outputs(hash_type)
        if whole and not asks(self.policy, self.amount()):
            return
        prompt = "Sign: %d inputs %s BTC, %d outputs %s BTC" % (
            self.n_inputs, btc(self.inputs_total), self.n_outputs, btc(self.outputs_total))
        if not whole:
            prompt += ", outputs not committed (sighash 0x%02x)" % hash_type
        self.ask(ctx, prompt + "?", SIGN_REFUSED)
        self.confirmed = True

    # ---- the policy -----------------------------------------------------------------

    def set_policy(self, ctx, params):
        new = make_policy(params["policy"], params.get("amount"))
        if loosens(self.policy, new):
            self.ask(ctx, "Change policy from %s to %s?" % (describe(self.policy), describe(new)),
                     POLICY_REFUSED)
        save_policy(self.path, new)
        self.policy = new
        return new

    def info(self):
        fields = dict(self.policy)
        fields["approver"] = "none" if self.approver is None else self.approver.name
        fields["timeout_ms"] = self.timeout_ms
        return {"confirmation": fields}

    def methods(self):
        return [Method("set_confirm_policy", self.set_policy,
                       {"policy": (TEXT, True), "amount": (UINT, False)})]

    # ---- the wait ---------------------------------------------------------------------

    def ask(self, ctx, prompt, refused_message):
        """Return once the user approved; DeviceError when refused or timed out."""
        approver = self.approver
        if approver is None:
            raise DeviceError(USER_CANCELLED, refused_message)
        start = ticks_ms()
        ctx.awaiting_user(True)
        approver.begin(prompt, start)
        try:
            while True:
                now = ticks_ms()
                answer = approver.poll(now)
                if answer == APPROVED:
                    return
                if answer == REFUSED:
                    raise DeviceError(USER_CANCELLED, refused_message)
                if ticks_diff(now, start) >= self.timeout_ms:
                    raise DeviceError(CONFIRM_TIMEOUT, TIMED_OUT)
                ctx.poll_link()
                sleep_ms(_POLL_MS)
        finally:
            approver.end()
            ctx.awaiting_user(False)
