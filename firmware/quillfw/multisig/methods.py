"""The multisig registration methods of the device protocol (protocol/SPEC.md
§12), Coldcard/Jade style: a wallet's policy and name are shown to the user,
confirmed on the device and kept on its flash; the PSBT session then signs the
wallet's inputs and recognises its change (quillfw.multisig.match).

    multisig_register {name, script_type, sorted, threshold, signers, network}
                                                  -> {name, address}: the first receive address
    multisig_list     {}                          -> [{name, script_type, sorted, threshold, n}]
    multisig_remove   {name}                      -> null

Checks before the user is asked: the name (1..16 printable characters, not
registered yet), the script type, 1 <= threshold <= n <= 10, every xpub valid
for the network, no key twice, and this device's own key among the signers:
a signer with its master fingerprint whose xpub is the device's own at that
origin path. Every method needs the unlocked seed (LOCKED otherwise).

register(dispatcher, boot, psbt) is called by quillfw.psbt.methods.register; the
bodies (quillfw.multisig.registry) are imported per request and forgotten
after it.
"""
import gc
import sys

from quillfw.compat import forget
from quillfw.wire.dispatcher import ARRAY, BOOL, TEXT, UINT, Method

REFUSED = "Registration refused on the device"
SCRIPT_TYPES = ("p2sh", "p2wsh", "p2sh-p2wsh")
# P2SH's 520-byte redeem script would hold 15 keys; 10 is what registers and signs a 10-input
# PSBT beside five other registered wallets at the smallest board's heap, 97K (quill-emu
# --frozen; tests/bench/bench_psbt_multisig.py)
MAX_COSIGNERS = 10
MAX_WALLETS = 8


def _handler(confirmation, boot, psbt, name):
    def handler(ctx, p):
        loaded = set(sys.modules)
        gc.collect()    # the code loaded below needs whole blocks
        try:
            psbt[0](boot)
            from quillfw.multisig.registry import Registry
            return getattr(Registry(confirmation, boot, psbt[1]), name)(ctx, p)
        finally:
            gc.collect()
            for module in list(sys.modules):
                if module not in loaded:
                    forget(module)
            gc.collect()
    return handler


def info():
    """get_info's `multisig` limits, and "multisig" added to the keys' capabilities
    (registered after them: quillfw.keys.methods.register's state is ours)."""
    from quillfw.keys.methods import CAPABILITIES
    return {"capabilities": list(CAPABILITIES) + ["multisig"],
            "multisig": {"script_types": list(SCRIPT_TYPES), "max_wallets": MAX_WALLETS,
                         "max_cosigners": MAX_COSIGNERS}}


def _erase_registrations(boot):
    """A wiped device keeps no multisig wallet: restoring the same seed must not bring
    back registrations its user never confirmed for that set-up (SPEC §12)."""
    from quillfw.multisig.store import erase
    erase(boot)


def register(dispatcher, boot, psbt):
    """psbt: what the PSBT room above lends (quillfw.psbt.methods):
    (require_unlocked(boot), address(script_pubkey, network))."""
    boot[4].append(lambda: _erase_registrations(boot))     # the keys' wipe calls it
    c = dispatcher.confirmation
    dispatcher.register([
        Method("multisig_register", _handler(c, boot, psbt, "multisig_register"), {
            "name": (TEXT, True), "script_type": (TEXT, True), "sorted": (BOOL, True),
            "threshold": (UINT, True), "signers": (ARRAY, True), "network": (TEXT, True)}),
        Method("multisig_list", _handler(c, boot, psbt, "multisig_list")),
        Method("multisig_remove", _handler(c, boot, psbt, "multisig_remove"), {"name": (TEXT, True)}),
    ], info=info)
