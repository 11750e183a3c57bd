"""The signing methods of the device protocol (protocol/SPEC.md §7): one
protocol request per streaming-Session step, registered through
runtime.EXTENSIONS.

    sign_begin        {version, locktime, n_inputs, n_outputs, algorithms, ? network}
                                                                            -> {heap_free}
                      (network: main|test|regtest, the addresses' form on the review screen)
    sign_add_key      {secret, ? compressed}                                -> key index
    sign_add_inputs   {inputs: [[txid, vout, sequence, amount, script_pubkey], ...]}
                                                                            -> [token, ...]
    sign_add_outputs  {outputs: [[amount, script_pubkey], ...]}             -> [token, ...]
    sign_stage        {name, data}                                          -> null
    sign_segwit_v0    {input_index, txin, txin_token, ? script_code, hash_type, key_index,
                       ? txout, ? txout_token}                              -> signature
    sign_taproot      {input_index, hash_type, key_index, ? merkle_root, ? tweak, ? aux,
                       ? leaf_hash, ? codesep_pos, ? annex, ? txin, ? txin_token,
                       ? txout, ? txout_token}                              -> signature
    sign_legacy_begin {input_index, ? script_code, hash_type, key_index}    -> null
    sign_legacy_finish {}                                                   -> signature
    sign_end {} / sign_abort {}                                             -> null

Inputs and outputs travel in batches so that a transaction costs a few round
trips per pass instead of one per input. sign_stage exists because a sign
request may carry up to three scripts of up to max_script_size bytes each
(script code, the input's and the output's script_pubkey), more than one
message can hold: the host stages the large ones first ("script_code",
"txin_script_pubkey", "txout_script_pubkey") and leaves them out of (or empty
in) the request, which takes each staged value once.

Session errors become error replies whose data is the session's error code
(e.g. "tx_changed"); every error reply resets the session (the dispatcher's
reset hook), which wipes the keys. A device whose boot self-test failed
refuses sign_begin.

User confirmation (quillfw.signing.confirm): the first pass's amounts are counted for
the policy, and every sign request (sign_segwit_v0, sign_taproot,
sign_legacy_begin) arriving once the transaction is complete passes through
Confirmation.before_signature() before the session signs anything, so no
signature leaves a session the policy wants confirmed and the user did not
confirm. sign_begin, sign_end and every reset start a new, unconfirmed session.
"""
import gc

from quillfw.limits import MAX_SCRIPT_SIZE
from quillfw.wire.dispatcher import ARRAY, BOOL, BYTES, TEXT, UINT, Method
from quillfw.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LIMIT_EXCEEDED,
    LOCKED,
    PROTOCOL_ERROR,
    STALE_SESSION,
    DeviceError,
)

SCRIPT_TYPES = ("p2pk", "p2pkh", "p2ms", "p2sh", "p2wpkh", "p2wsh", "p2sh-p2wpkh", "p2sh-p2wsh",
                "p2tr")
SIGHASH_TYPES = (0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83)
STAGE_NAMES = ("script_code", "txin_script_pubkey", "txout_script_pubkey")

_PROTOCOL_CODES = ("out_of_order", "count_mismatch", "not_declared", "tx_changed")

# Between items of a batch, look at the link this often (ping stays answered).
POLL_EVERY = 16


def heap_free():
    try:
        return gc.mem_free()
    except AttributeError:  # CPython has no fixed heap
        return 0


def device_error(e):
    """A session's SessionError as the protocol's error (the PSBT methods' too)."""
    if e.code == "limit_exceeded":
        code = LIMIT_EXCEEDED
    elif e.code == "locked":
        code = LOCKED
    elif e.code in _PROTOCOL_CODES:
        code = PROTOCOL_ERROR
    else:
        code = INVALID_PARAMS
    return DeviceError(code, e.message, e.code)


class SigningMethods:
    def __init__(self, dispatcher):
        self._session = None
        self.staged = {}
        self.dispatcher = dispatcher
        self.confirmation = dispatcher.confirmation
        self.session_id = None      # the current signing session's id (sign_begin's answer)
        self._sessions = 0

    @property
    def session(self):
        # Made at the first sign_begin and kept: its key slots, MAC pads and hash
        # states are allocated once. Its modules cost ~25 KB of heap on the 64-bit
        # emulator, which a device asked only for keys keeps for the key methods.
        if self._session is None:
            from quillfw.signing.session import Session
            self._session = Session()
        return self._session

    def _check(self, p):
        """A request that names a session (its "session" parameter) must name the
        current one: after a restart or a newer sign_begin it is refused, distinctly,
        before it can act."""
        sid = p.get("session")
        if sid is not None and sid != self.session_id:
            raise DeviceError(STALE_SESSION, "Request of a previous signing session or boot")

    def reset(self):
        self.staged = {}
        self.session_id = None
        self.confirmation.reset()
        if self._session is not None:
            self._session.abort()

    def _run(self, step, *args, **kwargs):
        from quillfw.signing.session import SessionError
        try:
            return step(*args, **kwargs)
        except SessionError as e:
            self.staged = {}
            raise device_error(e) from None

    def _take(self, name, value):
        """The request's value, or the staged one when the request left it out or empty."""
        staged = self.staged.pop(name, None)
        if staged is not None and not value:
            return staged
        return value

    def _txin(self, txin):
        if isinstance(txin, list) and len(txin) == 5:
            txin[4] = self._take("txin_script_pubkey", txin[4])
        return txin

    def _txout(self, txout):
        if isinstance(txout, list) and len(txout) == 2:
            txout[1] = self._take("txout_script_pubkey", txout[1])
        return txout

    def _first_pass(self):
        """Whether inputs/outputs now arriving are the first pass's (counted for the policy)."""
        from quillfw.signing.session import INPUTS, OUTPUTS
        return self.session.state in (INPUTS, OUTPUTS)

    def _confirm(self, ctx, hash_type):
        """The user's confirmation, before a signature of a complete transaction.
        (In any other state the session refuses the request as out of order.)"""
        from quillfw.signing.session import READY
        if self.session.state == READY:
            self.confirmation.before_signature(ctx, hash_type)

    # ---- the transaction ------------------------------------------------------

    def begin(self, ctx, p):
        boot = p.get("boot_id")
        if boot is not None and boot != self.dispatcher.boot_id:
            raise DeviceError(STALE_SESSION, "Request of a previous boot: the device restarted")
        self.staged = {}
        self.confirmation.reset(p.get("network", "main"), p["locktime"])
        if self.dispatcher.selftest != "ok":
            # wrong arithmetic could leak the key through its nonces: never sign
            raise DeviceError(INTERNAL_ERROR, "Self-test failed: the device does not sign")
        self.session_id = None
        # A session the host left unfinished (its sign_abort lost with a dropped link) is
        # wiped: sign_begin starts over, as psbt_begin does. Only an existing one: the first
        # sign_begin makes the Session after the collection below, so that its long-lived
        # modules and buffers pack into a collected heap. Made before it, amid the boot's and
        # the link's garbage, they left the 97K heap too fragmented to begin a session after
        # a restart ('Out of memory' at sign_begin: the restart soak, 1 kill in ~30).
        if self._session is not None:
            self._session.abort()
        gc.collect()
        self._run(self.session.begin, p["version"], p["locktime"], p["n_inputs"],
                  p["n_outputs"], p["algorithms"])
        gc.collect()
        self._sessions += 1
        self.session_id = "%s%x" % (self.dispatcher.boot_id[:8], self._sessions)
        # what is left for the requests to come: the host sizes its batches from it
        return {"heap_free": heap_free(), "session": self.session_id}

    def add_key(self, ctx, p):
        self._check(p)
        return self._run(self.session.add_key, p["secret"], p.get("compressed", True))

    def add_inputs(self, ctx, p):
        self._check(p)
        tokens = []
        for i, txin in enumerate(p["inputs"]):
            if not isinstance(txin, list) or len(txin) != 5:
                self.reset()
                raise DeviceError(INVALID_PARAMS, "each input must be [txid, vout, sequence, "
                                                  "amount, script_pubkey]")
            counted = self._first_pass()
            tokens.append(self._run(self.session.add_input, *txin))
            if counted:
                self.confirmation.count(txin[3], False, txin[4], sequence=txin[2])
            if i % POLL_EVERY == POLL_EVERY - 1:
                ctx.poll_link()
        return tokens

    def add_outputs(self, ctx, p):
        self._check(p)
        tokens = []
        for i, txout in enumerate(p["outputs"]):
            if not isinstance(txout, list) or len(txout) != 2:
                self.reset()
                raise DeviceError(INVALID_PARAMS, "each output must be [amount, script_pubkey]")
            counted = self._first_pass()
            tokens.append(self._run(self.session.add_output, *txout))
            if counted:
                self.confirmation.count(txout[0], True, txout[1])
            if i % POLL_EVERY == POLL_EVERY - 1:
                ctx.poll_link()
        return tokens

    def stage(self, ctx, p):
        self._check(p)
        name = p["name"]
        if name not in STAGE_NAMES:
            raise DeviceError(INVALID_PARAMS, "cannot stage '%s'" % name)
        if len(p["data"]) > MAX_SCRIPT_SIZE:
            raise DeviceError(LIMIT_EXCEEDED, "%s larger than %d bytes" % (name, MAX_SCRIPT_SIZE))
        # Kept for a later request, so copied out of this request's frame, into a block
        # found after a collection. A real transaction stages at most one script per
        # sign request (a script code near the limit beside a SIGHASH_SINGLE output near
        # it). A buffer kept for it would cost the 97K heap more than signing can spare:
        # measured, the mixed script-type corpus then runs out of memory.
        gc.collect()
        self.staged[name] = bytes(p["data"])
        return None

    # ---- signatures -----------------------------------------------------------

    def sign_segwit_v0(self, ctx, p):
        self._check(p)
        script_code = self._take("script_code", p.get("script_code", b""))
        txin = self._txin(p["txin"])
        txout = self._txout(p.get("txout"))
        self._confirm(ctx, p["hash_type"])
        ctx.poll_link()
        gc.collect()
        return self._run(self.session.sign_segwit_v0, p["input_index"], txin, p["txin_token"],
                         script_code, p["hash_type"], p["key_index"], txout,
                         p.get("txout_token"))

    def sign_taproot(self, ctx, p):
        self._check(p)
        txin = self._txin(p.get("txin"))
        txout = self._txout(p.get("txout"))
        self._confirm(ctx, p["hash_type"])
        ctx.poll_link()
        gc.collect()
        return self._run(self.session.sign_taproot, p["input_index"], p["hash_type"],
                         p["key_index"], p.get("merkle_root"), p.get("tweak", True),
                         p.get("leaf_hash"), p.get("codesep_pos", 0xFFFFFFFF), p.get("annex"),
                         p.get("aux"), txin, p.get("txin_token"), txout, p.get("txout_token"))

    def legacy_begin(self, ctx, p):
        self._check(p)
        script_code = self._take("script_code", p.get("script_code", b""))
        self._confirm(ctx, p["hash_type"])
        self._run(self.session.begin_legacy_pass, p["input_index"], script_code,
                  p["hash_type"], p["key_index"])
        return None

    def legacy_finish(self, ctx, p):
        self._check(p)
        ctx.poll_link()
        gc.collect()
        return self._run(self.session.finish_legacy_pass)

    def end(self, ctx, p):
        self._check(p)
        self.staged = {}
        self._run(self.session.end)
        self.session_id = None
        self.confirmation.reset()
        return None

    def abort(self, ctx, p):
        self._check(p)
        self.reset()
        return None

    def methods(self):
        u = (UINT, True)
        return [
            Method("sign_begin", self.begin, {"version": u, "locktime": u, "n_inputs": u,
                                              "n_outputs": u, "algorithms": (ARRAY, True),
                                              "boot_id": (TEXT, False),
                                              "network": (TEXT, False)}),
            Method("sign_add_key", self.add_key, {"secret": (BYTES, True),
                                                  "compressed": (BOOL, False)}),
            # views=True: scripts arrive as views of the request's frame (no copy)
            Method("sign_add_inputs", self.add_inputs, {"inputs": (ARRAY, True)}, views=True),
            Method("sign_add_outputs", self.add_outputs, {"outputs": (ARRAY, True)}, views=True),
            Method("sign_stage", self.stage, {"name": (TEXT, True), "data": (BYTES, True)},
                   views=True),
            Method("sign_segwit_v0", self.sign_segwit_v0, {
                "input_index": u, "txin": (ARRAY, True), "txin_token": (BYTES, True),
                "script_code": (BYTES, False), "hash_type": u, "key_index": u,
                "txout": (ARRAY, False), "txout_token": (BYTES, False)}, views=True),
            Method("sign_taproot", self.sign_taproot, {
                "input_index": u, "hash_type": u, "key_index": u,
                "merkle_root": (BYTES, False), "tweak": (BOOL, False), "aux": (BYTES, False),
                "leaf_hash": (BYTES, False), "codesep_pos": (UINT, False),
                "annex": (BYTES, False), "txin": (ARRAY, False), "txin_token": (BYTES, False),
                "txout": (ARRAY, False), "txout_token": (BYTES, False)}, views=True),
            Method("sign_legacy_begin", self.legacy_begin, {
                "input_index": u, "script_code": (BYTES, False), "hash_type": u,
                "key_index": u}, views=True),
            Method("sign_legacy_finish", self.legacy_finish),
            Method("sign_end", self.end),
            Method("sign_abort", self.abort),
        ]


def register(dispatcher):
    signing = SigningMethods(dispatcher)
    dispatcher.register(signing.methods(), SCRIPT_TYPES, SIGHASH_TYPES, signing.reset)
