"""The bodies of the multisig methods (quillfw.multisig.methods), imported per
request and forgotten after it: between requests only the method table stays
in RAM (protocol/SPEC.md §12 has the rules).
"""
import gc

from quillfw.multisig.match import master_fingerprint
from quillfw.multisig.methods import MAX_WALLETS, REFUSED
from quillfw.wire.errors import INVALID_PARAMS, DeviceError


def _own_key(boot, wallet):
    """The index of the signer that is this device's key; DeviceError otherwise."""
    from quillfw.keys.bip32 import format_path, master_node
    fingerprint = master_fingerprint(boot)
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


class Registry:
    def __init__(self, confirmation, boot, address):
        self.confirmation = confirmation
        self.boot = boot
        self.address = address      # quillfw.psbt's address encoder (the room above lends it)

    def multisig_register(self, ctx, p):
        from quillfw.multisig.policy import describe, from_params
        from quillfw.multisig.store import MultisigStore
        from quillfw.multisig.wallet import script_pubkey
        try:
            wallet = from_params(p["name"], p["script_type"], p["sorted"], p["threshold"],
                                 p["signers"], p["network"])
        except ValueError as e:
            raise DeviceError(INVALID_PARAMS, "Invalid multisig wallet: %s" % e) from None
        # the decoded signers were allocated together: freed together, they leave the
        # contiguous room that the prompt of a 10-cosigner wallet (~1.5 KB) needs
        p["signers"] = None
        store = MultisigStore(self.boot)
        wallets = store.names()
        for _, other in wallets:
            if other == wallet.name:
                raise DeviceError(INVALID_PARAMS, "A multisig wallet named '%s' is already registered"
                                  % wallet.name)
        if len(wallets) >= MAX_WALLETS:
            raise DeviceError(INVALID_PARAMS, "%d multisig wallets are registered: remove one first"
                              % MAX_WALLETS)
        own = _own_key(self.boot, wallet)
        gc.collect()
        first = self.address(script_pubkey(wallet.script_type, wallet.script(0, 0, {})), wallet.network)
        prompt = describe(wallet, first, own)
        from quillfw.signing.confirm import drop, flow
        try:
            flow().ask(self.confirmation, ctx, prompt, REFUSED)
        finally:
            drop(self.confirmation.approver)
        store.add(wallet)
        return {"name": wallet.name, "address": first}

    def multisig_list(self, ctx, p):
        from quillfw.multisig.policy import summary
        from quillfw.multisig.store import MultisigStore
        return [summary(wallet) for _, wallet in MultisigStore(self.boot).wallets()]

    def multisig_remove(self, ctx, p):
        from quillfw.multisig.store import MultisigStore
        if not MultisigStore(self.boot).remove(p["name"]):
            raise DeviceError(INVALID_PARAMS, "No multisig wallet named '%s'" % p["name"])
        return None
