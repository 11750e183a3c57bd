"""Signing a PSBT with the device's own keys (protocol/SPEC.md §11), streamed
over the signing session of quillfw.signing.session, which keeps the
transaction's digests and tokens.

    PsbtSession(boot)                   boot: quillfw.keys.methods' state
    begin(version, locktime, n_inputs, n_outputs, network, multisig=False)
                                        multisig: load the registered wallets (§12) first
    prev_tx(vout, data, more)           the next input's previous transaction, in pieces
    add_input(txid, vout, sequence, amount, script_pubkey)   -> token
    add_output(amount, script_pubkey, path=None)             -> token
    sign(input_index, txin, txin_token, path, hash_type, txout, txout_token, multisig)
        -> signature, or None for P2PKH: the host streams the transaction again
           (add_input/add_output) and calls finish_legacy()
    finish_legacy() -> signature
    end() / abort()

What the device checks before it signs:
  * an input it signs must pay to its own key at the given path, in one of the
    four single-key forms (quillfw.psbt.owned); the key is derived here, never sent;
  * before a P2PKH, P2WPKH or P2SH-P2WPKH input is signed, every input that
    is not P2TR must have been preceded by its previous transaction, whose
    txid must be the outpoint's and whose output must be the amount and
    script streamed: a legacy signature commits to no amount and a BIP143 one
    only to its own, so a host could otherwise understate the inputs and hide
    a fee (across two signing rounds). A taproot signature commits to every
    input's amount and script (BIP341), so a P2TR input needs none, and a
    P2TR signature needs no proof of the others;
  * an input signed with multisig=True must be a registered multisig wallet's
    (quillfw.multisig.match: its script rebuilt from the registered xpubs at
    the path's /<chain>/<index> pays the streamed script_pubkey), else
    `unregistered`; its script code is that script (BIP143's witness script,
    or the P2SH redeem script for a legacy signature);
  * an output with a path is change: it must pay to the device's key at that
    path, or be a registered multisig wallet's at a change path (chain 1),
    else the request is refused (as Coldcard refuses fraudulent change); it
    is left out of what the user is asked to send;
  * before the first signature the user confirms every output (the change
    marked as such), the fee and the warnings (quillfw.signing.confirm's policy,
    quillfw.ui.screens.review; the methods count the outputs for it).
Errors are SessionError (codes not_own, unregistered, unproven, prev_tx) and wipe
everything.
"""
import gc

from quillfw.compat import forget
from quillfw.keys.bip32 import format_path, parse_path
from quillfw.psbt import owned
from quillfw.signing.session import READY, Session, SessionError

ALGORITHMS = ["legacy", "segwit_v0", "taproot"]
_REGISTERED = ("quillfw.multisig.match", "quillfw.multisig.store", "quillfw.multisig.wallet")

class PsbtSession:
    def __init__(self, boot):
        self._boot = boot
        self.session = Session(1)        # one key at a time, derived per signature
        self._reset()

    def _reset(self):
        self.unproven = 0           # inputs other than P2TR streamed without their previous tx
        self._prev = None
        self._proof = None
        self._node = None           # (parent path, BIP32 node): consecutive inputs share it
        self._legacy = False
        self._multisig = None       # quillfw.multisig.match.Registered, once a multisig is seen
        self.network = None
        self.in_total = self.out_total = 0

    def abort(self):
        self.session.abort()
        self._reset()

    def _fail(self, code, message):
        self.abort()
        raise SessionError(code, message)

    # ---- keys ------------------------------------------------------------------

    def node(self, text):
        """The node at path text; LOCKED is the caller's: the seed must be in RAM."""
        seed = self._boot[2][0]
        if seed is None:
            self._node = None
            return None
        try:
            path = parse_path(text)
        except ValueError as e:
            self._fail("bad_value", "invalid path %s" % e)
        if not path:
            self._fail("bad_value", "the master key does not sign")
        parent = tuple(path[:-1])
        if self._node is None or self._node[0] != parent:
            from quillfw.keys.bip32 import master_node
            node = master_node(seed)
            for index in parent:
                node = node.child(index)
            self._node = (parent, node)
        return self._node[1].child(path[-1])

    # ---- the first pass ----------------------------------------------------------

    def begin(self, version, locktime, n_inputs, n_outputs, network, multisig=False):
        if network not in owned.NETWORKS:
            raise SessionError("bad_value", "network must be main, test or regtest")
        self.abort()
        # the previous transactions' parser now, while the heap has whole blocks: imported at
        # the first psbt_prev_tx, its names could need a new qstr pool amid the session's heap
        import quillfw.psbt.prevtx  # noqa: F401
        self.session.begin(version, locktime, n_inputs, n_outputs, ALGORITHMS)
        self.network = network
        if multisig:    # loaded now, while the heap has whole blocks (§12)
            self._load_registered()

    def prev_tx(self, vout, data, more):
        if self.session.state not in ("inputs",):
            self._fail("out_of_order", "a previous transaction comes before its input")
        from quillfw.psbt.prevtx import PrevTx
        try:
            if self._prev is None:
                self._prev = PrevTx(vout)
                self._proof = None
            elif vout != self._prev.vout:
                self._fail("prev_tx", "vout changed within a previous transaction")
            self._prev.feed(data)
            if not more:
                txid, out_hash = self._prev.finish()
                self._prev = None
                self._proof = (txid, vout, out_hash)
        except ValueError as e:
            self._fail("prev_tx", "invalid previous transaction: %s" % e)

    def add_input(self, txid, vout, sequence, amount, script_pubkey):
        first = self.session.state == "inputs"
        if first and self._prev is not None:
            self._fail("prev_tx", "the previous transaction is incomplete")
        index = self.session.inputs_seen
        token = self.session.add_input(txid, vout, sequence, amount, script_pubkey)
        if first:
            proof, self._proof = self._proof, None
            if proof is not None:
                self._check_proof(index, proof, txid, vout, amount, script_pubkey)
            elif owned.kind_of(script_pubkey) != "p2tr":
                self.unproven += 1
            self.in_total += amount
        return token

    def _check_proof(self, index, proof, txid, vout, amount, script_pubkey):
        import hashlib

        from quillfw.sighash.txstream import txout
        if proof[0] != bytes(txid) or proof[1] != vout:
            self._fail("prev_tx", "input %d: the previous transaction's txid is not the "
                                  "outpoint's" % index)
        if proof[2] != hashlib.sha256(txout(amount, script_pubkey)).digest():
            self._fail("prev_tx", "input %d: amount or script differs from the previous "
                                  "transaction's output" % index)

    def add_output(self, amount, script_pubkey, path=None):
        first = self.session.state in ("inputs", "outputs")
        index = self.session.outputs_seen
        if index == 0 and first:
            forget("quillfw.psbt.prevtx")   # the first pass's inputs are done: heap back
        token = self.session.add_output(amount, script_pubkey)
        if not first:
            return token
        self.out_total += amount
        if path is not None:
            node = self._own(path)
            if (owned.classify(script_pubkey, node.pubkey()) is None
                    and self._registered(script_pubkey, path, node, True) is None):
                self._fail("not_own", "output %d is not this device's key at %s, nor a "
                           "registered multisig wallet's change: not change" % (index, path))
        if self.session.state == READY:
            self._after_first_pass()
        return token

    def _after_first_pass(self):
        """What only the first pass needed leaves the heap before the signatures."""
        forget("quillfw.psbt.address")
        forget("quillfw.keys.base58")

    def _registered(self, script_pubkey, path, node, change=False):
        """(wallet, script) of the registered multisig wallet that pays script_pubkey
        with this device's key at path among its cosigners, or None (§12)."""
        if self._multisig is None:
            self._load_registered()
        if not self._multisig.slots:
            return None
        return self._multisig.find(script_pubkey, parse_path(path), node.pubkey(), change)

    def before_review(self):
        """The registered wallets leave the heap while the review is drawn (its screens need
        the room on a board that loads its code into RAM: the Pico's 228K, whose session then
        has ~20 KB free); the next multisig signature loads them again (_registered)."""
        self._multisig = None
        for name in _REGISTERED:
            forget(name)
        gc.collect()

    def _load_registered(self):
        if self._boot[2][0] is None:
            self._fail("locked", "Device is locked: unlock it with its PIN")
        from quillfw.multisig.match import Registered
        self._multisig = Registered(self._boot)

    def _own(self, path):
        node = self.node(path)
        if node is None:
            self._fail("locked", "Device is locked: unlock it with its PIN")
        return node

    # ---- signatures ---------------------------------------------------------------------

    def sign(self, input_index, txin, txin_token, path, hash_type, txout=None, txout_token=None,
             multisig=False):
        s = self.session
        if s.state != READY:
            self._fail("out_of_order", "unexpected message in state %s" % s.state)
        if self.in_total < self.out_total:
            self._fail("bad_value", "the outputs spend more than the inputs")
        spent = s.check_txin(input_index, txin, txin_token)
        node = self._own(path)
        pubkey = node.pubkey()
        script_code = None
        if multisig:
            found = self._registered(spent[4], path, node)
            if found is None:
                self._fail("unregistered", "input %d is not a registered multisig wallet's with "
                           "this device's key at %s" % (input_index, format_path(parse_path(path))))
            # signed as the single-key form of its algorithm (P2SH: a legacy pass), with
            # the wallet's script as the script code
            kind, script_code = ("p2pkh" if found[0].script_type == "p2sh" else "p2wpkh"), found[1]
        else:
            kind = owned.classify(spent[4], pubkey)
            if kind is not None:
                script_code = owned.script_for("p2pkh", pubkey)
        if kind is None:
            self._fail("not_own", "input %d is not this device's key at %s"
                       % (input_index, format_path(parse_path(path))))
        if kind != "p2tr" and self.unproven:
            self._fail("unproven", "amounts unproven: %d inputs without their previous "
                                   "transaction" % self.unproven)
        secret = bytearray(node.secret)
        node = None
        try:
            key = s.add_key(secret)
        finally:
            for i in range(32):
                secret[i] = 0
        gc.collect()    # the derivation's garbage out before the signature's tables
        if kind == "p2tr":
            try:
                return s.sign_taproot(input_index, hash_type, key, None, True, None, 0xFFFFFFFF,
                                      None, None, txin, txin_token, txout, txout_token)
            finally:
                s.forget_keys()
        if kind == "p2pkh":     # and P2SH multisig: the script code is the redeem script
            s.begin_legacy_pass(input_index, script_code, hash_type, key)
            self._legacy = True
            return None
        try:
            return s.sign_segwit_v0(input_index, txin, txin_token, script_code, hash_type, key,
                                    txout, txout_token)
        finally:
            s.forget_keys()

    def finish_legacy(self):
        if not self._legacy:
            self._fail("out_of_order", "no legacy signature under way")
        self._legacy = False
        try:
            return self.session.finish_legacy_pass()
        finally:
            self.session.forget_keys()

    def end(self):
        self.session.end()
        self._reset()
