"""User confirmation on the device (protocol/SPEC.md §8): the policy, where it
is kept, and the wait for the user's answer.

Policy, persisted on the device (confirm_flow.load_policy/save_policy: a small
JSON file on the board's flash, in the emulator's data dir):

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
polled (ping and get_info answered, anything else BUSY); the approver shows the
request and reads the answer. A refusal is USER_CANCELLED, no answer within
timeout_ms is CONFIRM_TIMEOUT; either error reply resets the signing session
and wipes its keys.

Approvers are named by a spec that the entry point passes in (a board's
main.py, quill-emu's main_emulator.py); this package names no approver module
itself, so no emulator-only code is ever reachable from a board's firmware.
The approver is built only while it is needed:

    None                            nobody can answer: what the policy asks is refused
    AUTO                            approved at once, here, with nothing imported (quill-emu's
                                    default: the emulator's heap stands in for the smallest
                                    board's during signing)
    (name, module, *args)           `module` is imported while a confirmation waits and
                                    dropped afterwards; module.approver(name, *args) builds
                                    the approver; get_info reports `name`. Boards:
                                    ("button", "quillfw.board.hal", button, led, led_kind);
                                    quill-emu: (kind, <its approval module>, datadir)
    an object with name/begin/poll/end   used as is (tests)

Heap: this module holds only the policy, the session's counts and the decision;
reading and changing the policy, the wait and the approvers are in
quillfw.signing.confirm_flow (and the approver's modules), imported when needed and
dropped again (flow()/drop()), so the ~97 KB board keeps its signing heap.
"""
import gc
import os

from quillfw.compat import const, forget

# an approver's answers
APPROVED = "approve"
REFUSED = "refuse"

ALWAYS = "always"
ABOVE = "above"
NEVER = "never"

DEFAULT_TIMEOUT_MS = const(120000)
POLICY_FILE = "quill_confirm.json"      # on a board: in the filesystem's root

AUTO = ("auto",)

# imported for a confirmation or a policy change, dropped afterwards (with the
# approver spec's own module)
# (the display's modules are dropped by quillfw.ui.flow.release, when the screen is done)
_TRANSIENT = ("quillfw.signing.confirm_flow", "quillfw.signing.approvers")

# The review lists the first _MAX_LISTED outputs from RAM (~40 bytes of script and ~50 of
# list each). A device with a filesystem (the policy's file) also writes each output of the
# first pass to REVIEW_FILE beside it: a transaction with more outputs is listed from there,
# read back one at a time (a bounded heap). Without one (a qemu board) the rest are summed.
# (Few names here: this module is loaded at boot, where every name is interned.)
REVIEW_FILE = "quill_review.bin"
_MAX_LISTED = const(32)
# the record's fields (Confirmation.review)
_OUTPUTS = const(0)     # [(index, amount, script, change)] of the first _MAX_LISTED outputs
_OTHERS = const(1)      # the outputs after them: [count, total]
_CHANGE = const(2)      # the change's total
_NONFINAL = const(3)    # an input's sequence below 0xffffffff: the locktime applies
_WEIGHT = const(4)      # estimated BIP141 weight, for the fee rate (approximate)
_NETWORK = const(5)     # main, test or regtest: the addresses' form
_LOCKTIME = const(6)


def auto_approves(spec):
    """Every confirmation approved at once (quill-emu --approve=auto)."""
    return spec == AUTO


def flow():
    gc.collect()  # the session's garbage out first: importing needs whole blocks
    from quillfw.signing import confirm_flow
    return confirm_flow


def drop(spec=None):
    """Forget the transient modules (and the approver spec's module) so that the
    collector can free them."""
    for name in _TRANSIENT:
        forget(name)
    if isinstance(spec, tuple) and len(spec) > 1:
        forget(spec[1])


class Confirmation:
    def __init__(self, approver=None, path=None, timeout_ms=DEFAULT_TIMEOUT_MS, display=None):
        """display: None (a device without a display: the approver gets one line of
        text), or (info, module, *args): get_info's "display" map, and the module
        whose display(*args) builds the panel while a confirmation waits
        (quillfw.ui.boards on a board, the emulator's own in quill-emu)."""
        self.approver = approver
        self.path = path
        self.timeout_ms = timeout_ms
        self.display = display
        self.policy = None          # the stored policy's map, read on first use
        # the outputs' file: beside the policy's, None without a filesystem or a display
        self.outputs = None
        if path is not None and display is not None:
            self.outputs = path[:path.rfind("/") + 1] + REVIEW_FILE
        self._spool = None
        self.reset()

    def reset(self, network="main", locktime=0):
        """A new session (or none): nothing confirmed, nothing counted. network: the
        session's (main, test or regtest), the form of the addresses it shows."""
        self.confirmed = False
        self.counts = [0, 0, 0, 0]  # inputs, their total, outputs, their total
        if self.outputs is not None:
            self.close_outputs()
            try:
                os.remove(self.outputs)     # the last transaction's outputs leave the flash
            except OSError:
                pass
        # what the review shows (quillfw.ui.screens.review): the fields _OUTPUTS.._LOCKTIME;
        # 42: the weight of version, counts, locktime and the segwit marker (BIP141)
        self.review = None if self.display is None else [[], [0, 0], 0, False, 42, network,
                                                         locktime]

    def count(self, amount, output=False, script=b"", change=False, sequence=0xFFFFFFFF):
        """One input (or output) of the session's first pass: its amount, script
        (the review's address), whether the device derived it as change."""
        i = 2 if output else 0
        self.counts[i] += 1
        self.counts[i + 1] += amount
        if self.display is None:
            return                  # nobody is shown more than the counts
        r = self.review
        n = len(script)
        if not output:
            # estimated weight of the input, its signature's space included: P2WPKH 41
            # bytes + a 108-byte witness, P2TR key path 41 + 66, P2WSH taken as 2-of-3
            # multisig, P2SH as P2SH-P2WPKH, the rest as P2PKH (148 bytes)
            first = script[0] if n else 1
            r[_WEIGHT] += (272 if n == 22 and first == 0 else 230 if n == 34 and first == 0x51
                           else 418 if n == 34 and first == 0 else 364 if n == 23 else 592)
            if sequence != 0xFFFFFFFF:
                r[_NONFINAL] = True
            return
        r[_WEIGHT] += 4 * (9 + n)
        if change:
            r[_CHANGE] += amount
        if self.outputs is not None:
            # a record: amount (8 bytes, little-endian), change, the script's size (2 bytes), script
            f = self._spool
            if f is None:
                f = self._spool = open(self.outputs, "wb")
            f.write(amount.to_bytes(8, "little"))
            f.write(bytes((1 if change else 0, n & 0xFF, n >> 8)))
            f.write(script)
        if len(r[_OUTPUTS]) < _MAX_LISTED:
            r[_OUTPUTS].append((self.counts[2] - 1, amount, bytes(script), change))
        else:
            r[_OTHERS][0] += 1
            r[_OTHERS][1] += amount

    def close_outputs(self):
        """The outputs' file complete (the review reads it)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def current(self):
        if self.policy is None:
            try:
                os.stat(self.path)
            except (OSError, TypeError):    # never stored (or kept in memory): the default
                self.policy = {"policy": ALWAYS}
                return self.policy
            try:
                self.policy = flow().load_policy(self.path)
            finally:
                drop(self.approver)
        return self.policy

    def before_signature(self, ctx, hash_type):
        """Return once this session may sign: confirmed now or earlier, or not
        needing it (a DeviceError when the user refused or did not answer).
        The user is shown the review (quillfw.ui.screens.review)."""
        if self.confirmed:
            return
        if auto_approves(self.approver) and self.display is None:
            self.confirmed = True
            return
        policy = self.current()
        amount = max(self.counts[1], self.counts[3])
        # hash type low bits 0 (DEFAULT) and 1 (ALL) commit every output; NONE and SINGLE do not
        if (hash_type & 3) < 2 and (policy["policy"] == NEVER or
                                    (policy["policy"] == ABOVE and amount <= policy["amount"])):
            return
        try:
            flow().confirm_signature(self, ctx, hash_type)
        finally:
            drop(self.approver)
        self.confirmed = True

    def set_policy(self, ctx, params):
        """The set_confirm_policy method."""
        self.current()
        try:
            return flow().change_policy(self, ctx, params)
        finally:
            drop(self.approver)

    def info(self):
        fields = dict(self.current())
        spec = self.approver
        if spec is None:
            fields["approver"] = "none"
        elif isinstance(spec, tuple):
            fields["approver"] = spec[0]
        else:
            fields["approver"] = spec.name
        fields["timeout_ms"] = self.timeout_ms
        return {"confirmation": fields, "display": None if self.display is None else self.display[0]}
