"""The multisig registration methods of the device protocol (protocol/SPEC.md
§12), Coldcard/Jade style: a wallet's policy and name are shown to the user,
confirmed on the device and kept on its flash; the PSBT session then signs the
wallet's inputs and recognises its change (quillfw.multisig.match).

    multisig_register {name, script_type, sorted, threshold, signers, network}
                                                  -> {name, address}: the first receive address
    multisig_list     {}                          -> [{name, script_type, sorted, threshold, n}]
    multisig_remove   {name}                      -> null

Checks before the user is asked: the name (1..16 printable characters, not
registered yet), the script type, 1 <= threshold <= n <= 15, every xpub valid
for the network, no key twice, and this device's own key among the signers:
a signer with its master fingerprint whose xpub is the device's own at that
origin path. Every method needs the unlocked seed (LOCKED otherwise).

register(dispatcher, boot) is called by quillfw.psbt.methods.register; the
code is imported per request and forgotten after it.
"""
import gc
import sys

from quillfw.compat import forget
from quillfw.wire.dispatcher import ARRAY, BOOL, TEXT, UINT, Method
from quillfw.wire.errors import INVALID_PARAMS, DeviceError

REFUSED = "Registration refused on the device"
SCRIPT_TYPES = ("p2sh", "p2wsh", "p2sh-p2wsh")
MAX_COSIGNERS = 15      # P2SH's 520-byte redeem script holds 15 compressed keys
MAX_WALLETS = 8


def _own_key(boot, wallet):
    """The index of the signer that is this device's key; DeviceError otherwise."""
    from quillfw.keys.bip32 import format_path, master_node
    fingerprint = boot[2][1]
    own = -1
    for i, (signer_fp, path, xpub74) in enumerate(wallet.signers):
        if signer_fp != fingerprint:
            continue
        node = master_node(boot[2][0])
        for index in path:
            node = node.child(index)
        if node.chain_code != xpub74[9:41] or node.pubkey() != xpub74[41:74]:
            raise DeviceError(INVALID_PARAMS, "Signer %d has this device's fingerprint but not its "
                                              "key at %s" % (i + 1, format_path(path)), "not_cosigner")
        own = i
    if own < 0:
        raise DeviceError(INVALID_PARAMS, "This device's key is not one of the cosigners",
                          "not_cosigner")
    return own


class MultisigMethods:
    def __init__(self, dispatcher, boot):
        self.confirmation = dispatcher.confirmation
        self.boot = boot

    def _run(self, step, ctx, p):
        loaded = set(sys.modules)
        try:
            from quillfw.psbt.methods import require_unlocked
            require_unlocked(self.boot)
            return step(ctx, p)
        finally:
            gc.collect()
            for name in list(sys.modules):
                if name not in loaded:
                    forget(name)
            gc.collect()

    def register_wallet(self, ctx, p):
        return self._run(self._register, ctx, p)

    def _register(self, ctx, p):
        from quillfw.multisig.store import MultisigStore
        from quillfw.multisig.wallet import Wallet, script_pubkey
        try:
            wallet = Wallet.from_params(p["name"], p["script_type"], p["sorted"], p["threshold"],
                                        p["signers"], p["network"])
        except ValueError as e:
            raise DeviceError(INVALID_PARAMS, "Invalid multisig wallet: %s" % e) from None
        store = MultisigStore(self.boot)
        wallets = store.wallets()
        for _, other in wallets:
            if other.name == wallet.name:
                raise DeviceError(INVALID_PARAMS, "A multisig wallet named '%s' is already registered"
                                  % wallet.name)
        if len(wallets) >= MAX_WALLETS:
            raise DeviceError(INVALID_PARAMS, "%d multisig wallets are registered: remove one first"
                              % MAX_WALLETS)
        own = _own_key(self.boot, wallet)
        gc.collect()
        from quillfw.psbt.address import address
        first = address(script_pubkey(wallet.script_type, wallet.script(0, 0, {})), wallet.network)
        prompt = "Register multisig '%s': %s; first address %s (this device: %d)?" % (
            wallet.name, wallet.describe(), first, own + 1)
        from quillfw.signing.confirm import drop, flow
        try:
            flow().ask(self.confirmation, ctx, prompt, REFUSED)
        finally:
            drop(self.confirmation.approver)
        store.add(wallet)
        return {"name": wallet.name, "address": first}

    def list_wallets(self, ctx, p):
        return self._run(self._list, ctx, p)

    def _list(self, ctx, p):
        from quillfw.multisig.store import MultisigStore
        return [wallet.summary() for _, wallet in MultisigStore(self.boot).wallets()]

    def remove_wallet(self, ctx, p):
        return self._run(self._remove, ctx, p)

    def _remove(self, ctx, p):
        from quillfw.multisig.store import MultisigStore
        if not MultisigStore(self.boot).remove(p["name"]):
            raise DeviceError(INVALID_PARAMS, "No multisig wallet named '%s'" % p["name"])
        return None

    def methods(self):
        return [
            Method("multisig_register", self.register_wallet, {
                "name": (TEXT, True), "script_type": (TEXT, True), "sorted": (BOOL, True),
                "threshold": (UINT, True), "signers": (ARRAY, True), "network": (TEXT, True)}),
            Method("multisig_list", self.list_wallets),
            Method("multisig_remove", self.remove_wallet, {"name": (TEXT, True)}),
        ]


def info():
    """get_info's `multisig` limits, and "multisig" added to the keys' capabilities
    (registered after them: quillfw.keys.methods.register's state is ours)."""
    from quillfw.keys.methods import CAPABILITIES
    return {"capabilities": list(CAPABILITIES) + ["multisig"],
            "multisig": {"script_types": list(SCRIPT_TYPES), "max_wallets": MAX_WALLETS,
                         "max_cosigners": MAX_COSIGNERS}}


def register(dispatcher, boot):
    methods = MultisigMethods(dispatcher, boot)
    dispatcher.register(methods.methods(), info=info)
