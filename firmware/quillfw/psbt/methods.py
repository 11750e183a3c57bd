"""The PSBT signing methods of the device protocol (protocol/SPEC.md §11): the
device signs with its own keys, derived from its seed (quillfw.keys), the
inputs whose paths the host names, after checking them and after the user
confirmed what is sent (quillfw.psbt.session has the rules).

    psbt_begin         {version, locktime, n_inputs, n_outputs, network, ? boot_id, ? multisig}
                                                            -> {heap_free, session}
    psbt_prev_tx       {vout, data, ? more}                 -> null
    psbt_add_inputs    {inputs: [[txid, vout, sequence, amount, script_pubkey], ...]}
                                                            -> [token, ...]
    psbt_add_outputs   {outputs: [[amount, script_pubkey, ? path], ...]}
                                                            -> [token, ...]
    psbt_sign          {input_index, txin, txin_token, path, hash_type, ? txout, ? txout_token,
                        ? multisig}
                                                            -> signature, or null (P2PKH: stream
                                                               the transaction again, then
                                                               psbt_legacy_finish)
    psbt_legacy_finish {}                                   -> signature
    psbt_end {} / psbt_abort {}                             -> null
    display_address    {path, script_type, network}         -> {address}
    sign_message       {path, message}                      -> {signature}: r || s, 64 bytes

register(dispatcher, boot) is called with quillfw.keys.methods' state by the
entry that registers the keys (a board's main.py, quill-emu's key module).
The session's code is imported by psbt_begin and display_address.
"""
import gc
import sys

from quillfw.compat import forget
from quillfw.signing.methods import POLL_EVERY, device_error, heap_free
from quillfw.wire.dispatcher import ARRAY, BOOL, BYTES, TEXT, UINT, Method
from quillfw.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    PROTOCOL_ERROR,
    STALE_SESSION,
    DeviceError,
)

SCRIPT_TYPES = ("p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr")
ADDRESS_REFUSED = "Address refused on the device"
MESSAGE_REFUSED = "Message refused on the device"
MAX_SIGNED_MESSAGE = 1024          # bytes of text: a BIP129 key record is ~200
# Bitcoin Core's MESSAGE_MAGIC (common/signmessage.cpp), with its length byte
MESSAGE_MAGIC = b"\x18Bitcoin Signed Message:\n"

def require_unlocked(boot):
    """LOCKED unless the seed is in RAM (a seed stored without a PIN, the
    emulator's test seed, is unlocked here as by any key operation)."""
    if boot[2][0] is not None:
        return
    from quillfw.keys import (
        bip32,  # noqa: F401  (long-lived first: see keyring.run)
        keyring,
    )
    try:
        keyring._keys(boot).require_unlocked()
    finally:
        for name in ("quillfw.keys.keyring", "quillfw.keys.store", "quillfw.keys.kdf"):
            forget(name)


class PsbtMethods:
    def __init__(self, dispatcher, boot):
        self.dispatcher = dispatcher
        self.confirmation = dispatcher.confirmation
        self.boot = boot
        self._psbt = None
        self._loaded = None         # sys.modules' names before the session's code came in
        self.session_id = None
        self._sessions = 0

    @property
    def psbt(self):
        if self._psbt is None:
            if self._loaded is None:
                self._loaded = set(sys.modules)
            from quillfw.psbt.session import PsbtSession
            self._psbt = PsbtSession(self.boot)
        return self._psbt

    def reset(self):
        self.session_id = None
        if self._psbt is not None:
            self._psbt.abort()
            self._release()

    def _release(self):
        """Drop the session and every module it brought in: the key methods and
        the other signing sessions get the heap back between PSBTs."""
        self._psbt = None
        secp256k1 = sys.modules.get("quillfw.crypto.secp256k1")
        if secp256k1 is not None:
            secp256k1.clear_key_cache()
        loaded, self._loaded = self._loaded, None
        for name in list(sys.modules):
            if loaded is not None and name not in loaded:
                forget(name)
        gc.collect()

    def _check(self, p):
        sid = p.get("session")
        if sid is not None and sid != self.session_id:
            raise DeviceError(STALE_SESSION, "Request of a previous signing session or boot")
        if self.session_id is None:
            raise DeviceError(PROTOCOL_ERROR, "No PSBT signing session: psbt_begin first",
                              "out_of_order")

    def _run(self, step, *args):
        from quillfw.signing.session import SessionError
        try:
            return step(*args)
        except SessionError as e:
            raise device_error(e) from None

    def begin(self, ctx, p):
        boot = p.get("boot_id")
        if boot is not None and boot != self.dispatcher.boot_id:
            raise DeviceError(STALE_SESSION, "Request of a previous boot: the device restarted")
        self.reset()
        self.confirmation.reset(p["network"], p["locktime"])
        if self.dispatcher.selftest != "ok":
            raise DeviceError(INTERNAL_ERROR, "Self-test failed: the device does not sign")
        require_unlocked(self.boot)
        gc.collect()
        if p.get("multisig", False):
            # the registered wallets' code before the session's buffers: it needs whole
            # blocks, which a 120K heap no longer has once the session runs (§12)
            if self._loaded is None:
                self._loaded = set(sys.modules)
            import quillfw.multisig.match  # noqa: F401
        self._run(self.psbt.begin, p["version"], p["locktime"], p["n_inputs"], p["n_outputs"],
                  p["network"], p.get("multisig", False))
        gc.collect()
        self._sessions += 1
        self.session_id = "p%s%x" % (self.dispatcher.boot_id[:8], self._sessions)
        return {"heap_free": heap_free(), "session": self.session_id}

    def prev_tx(self, ctx, p):
        self._check(p)
        self._run(self.psbt.prev_tx, p["vout"], p["data"], p.get("more", False))
        return None

    def add_inputs(self, ctx, p):
        self._check(p)
        tokens = []
        for i, txin in enumerate(p["inputs"]):
            if not isinstance(txin, list) or len(txin) != 5:
                raise DeviceError(INVALID_PARAMS, "each input must be [txid, vout, sequence, "
                                                  "amount, script_pubkey]")
            first = self.psbt.session.state == "inputs"
            tokens.append(self._run(self.psbt.add_input, *txin))
            if first:
                self.confirmation.count(txin[3], False, txin[4], sequence=txin[2])
            if i % POLL_EVERY == POLL_EVERY - 1:
                ctx.poll_link()
        return tokens

    def add_outputs(self, ctx, p):
        self._check(p)
        tokens = []
        for i, txout in enumerate(p["outputs"]):
            if not isinstance(txout, list) or len(txout) not in (2, 3):
                raise DeviceError(INVALID_PARAMS, "each output must be [amount, script_pubkey, "
                                                  "? path]")
            first = self.psbt.session.state in ("inputs", "outputs")
            tokens.append(self._run(self.psbt.add_output, *txout))
            if first:   # a path that did not pass as change was refused by add_output
                self.confirmation.count(txout[0], True, txout[1], len(txout) == 3)
            if i % POLL_EVERY == POLL_EVERY - 1:
                ctx.poll_link()
        return tokens

    def sign(self, ctx, p):
        self._check(p)
        from quillfw.signing.session import READY
        if self.psbt.session.state == READY and self.psbt.in_total >= self.psbt.out_total:
            if not self.confirmation.confirmed and self.confirmation.display is not None:
                self.psbt.before_review()
            self.confirmation.before_signature(ctx, p["hash_type"])
        ctx.poll_link()
        gc.collect()
        return self._run(self.psbt.sign, p["input_index"], p["txin"], p["txin_token"], p["path"],
                         p["hash_type"], p.get("txout"), p.get("txout_token"),
                         p.get("multisig", False))

    def legacy_finish(self, ctx, p):
        self._check(p)
        ctx.poll_link()
        gc.collect()
        return self._run(self.psbt.finish_legacy)

    def end(self, ctx, p):
        self._check(p)
        self._run(self.psbt.end)
        self.session_id = None
        self.confirmation.reset()
        self._release()
        return None

    def abort(self, ctx, p):
        sid = p.get("session")
        if sid is not None and sid != self.session_id:
            raise DeviceError(STALE_SESSION, "Request of a previous signing session or boot")
        self.reset()
        self.confirmation.reset()
        return None

    def _outside_session(self, method, ctx, p):
        """`method`, whose modules are freed again after it unless a signing session holds
        them (they load on demand: the heap is the session's)."""
        if self._psbt is None:
            self._loaded = set(sys.modules)
        try:
            return method(ctx, p)
        finally:
            if self._psbt is None:
                self._release()

    def display_address(self, ctx, p):
        return self._outside_session(self._display_address, ctx, p)

    def _path(self, text):
        """The request's path, parsed, once the seed is unlocked."""
        require_unlocked(self.boot)
        from quillfw.keys.bip32 import parse_path
        try:
            return parse_path(text)
        except ValueError as e:
            raise DeviceError(INVALID_PARAMS, "Invalid path: %s" % e) from None

    def _node(self, path):
        """The BIP32 node at path, from the unlocked seed."""
        from quillfw.keys.bip32 import master_node
        node = master_node(self.boot[2][0])
        for index in path:
            node = node.child(index)
        return node

    def _node_at(self, text):
        """(path, BIP32 node) at the request's path."""
        path = self._path(text)
        return path, self._node(path)

    def _display_address(self, ctx, p):
        from quillfw.psbt import owned
        if p["script_type"] not in SCRIPT_TYPES:
            raise DeviceError(INVALID_PARAMS, "script_type must be one of " + ", ".join(SCRIPT_TYPES))
        if p["network"] not in owned.NETWORKS:
            raise DeviceError(INVALID_PARAMS, "network must be main, test or regtest")
        path, node = self._node_at(p["path"])
        from quillfw.keys.bip32 import format_path
        from quillfw.psbt.address import address as encode
        address = encode(owned.script_for(p["script_type"], node.pubkey()), p["network"])
        from quillfw.signing.confirm import drop, flow
        try:
            from quillfw.ui.screens import address as screen
            flow().ask(self.confirmation, ctx, screen(address, format_path(path)), ADDRESS_REFUSED)
        finally:
            drop(self.confirmation.approver)
        return {"address": address}

    def sign_message(self, ctx, p):
        return self._outside_session(self._sign_message, ctx, p)

    def _sign_message(self, ctx, p):
        """Core's signmessage digest (MessageHash: double SHA-256 of the magic, the text's
        compact size and the text), signed after the user saw the text. The host makes the
        compact signature's recovery byte: it knows the key (protocol/SPEC.md §11)."""
        message = p["message"]
        if len(message) > MAX_SIGNED_MESSAGE:
            raise DeviceError(INVALID_PARAMS, "message is longer than %d bytes" % MAX_SIGNED_MESSAGE)
        try:
            text = message.decode()
        except UnicodeError:
            raise DeviceError(INVALID_PARAMS, "message must be UTF-8 text") from None
        # asked before the key is derived: the screen's modules and the key's arithmetic
        # take turns on the heap
        path = self._path(p["path"])
        from quillfw.keys.bip32 import format_path
        from quillfw.signing.confirm import drop, flow
        try:
            prompt = "Sign message with %s: %s" % (format_path(path), text)
            if self.confirmation.display is not None:
                from quillfw.ui.screens import signed_message
                prompt = signed_message(format_path(path), text)
            flow().ask(self.confirmation, ctx, prompt, MESSAGE_REFUSED)
        finally:
            drop(self.confirmation.approver)
        node = self._node(path)
        size = len(message)
        prefix = bytes((size,)) if size < 253 else b"\xfd" + size.to_bytes(2, "little")
        from quillfw.crypto import ecdsa
        from quillfw.crypto.hashes import sha256d
        r, s = ecdsa.der_decode(ecdsa.sign(node.secret, sha256d(MESSAGE_MAGIC + prefix + message)))
        return {"signature": r.to_bytes(32, "big") + s.to_bytes(32, "big")}

    def methods(self):
        u = (UINT, True)
        return [
            Method("psbt_begin", self.begin, {
                "version": u, "locktime": u, "n_inputs": u, "n_outputs": u,
                "network": (TEXT, True), "boot_id": (TEXT, False), "multisig": (BOOL, False)}),
            Method("psbt_prev_tx", self.prev_tx, {"vout": u, "data": (BYTES, True),
                                                  "more": (BOOL, False)}),
            Method("psbt_add_inputs", self.add_inputs, {"inputs": (ARRAY, True)}),
            Method("psbt_add_outputs", self.add_outputs, {"outputs": (ARRAY, True)}),
            Method("psbt_sign", self.sign, {
                "input_index": u, "txin": (ARRAY, True), "txin_token": (BYTES, True),
                "path": (TEXT, True), "hash_type": u, "txout": (ARRAY, False),
                "txout_token": (BYTES, False), "multisig": (BOOL, False)}),
            Method("psbt_legacy_finish", self.legacy_finish),
            Method("psbt_end", self.end),
            Method("psbt_abort", self.abort),
            Method("display_address", self.display_address, {
                "path": (TEXT, True), "script_type": (TEXT, True), "network": (TEXT, True)}),
            Method("sign_message", self.sign_message, {"path": (TEXT, True), "message": (BYTES, True)}),
        ]


def register(dispatcher, boot):
    methods = PsbtMethods(dispatcher, boot)
    dispatcher.register(methods.methods(), reset=methods.reset,
                        info=lambda: {"psbt": {"script_types": list(SCRIPT_TYPES)}})
    from quillfw.multisig.methods import register as register_multisig
    # the multisig room below borrows the unlock check and the address encoder
    register_multisig(dispatcher, boot, (require_unlocked, _address))   # wallets psbt_sign signs for (§12)


def _address(script_pubkey, network):
    from quillfw.psbt.address import address
    return address(script_pubkey, network)
