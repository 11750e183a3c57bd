"""Which registered multisig wallet an input or a change output belongs to
(protocol/SPEC.md §12), for quillfw.psbt.session:

    registered = Registered(boot)       loads the wallets once per signing session
    registered.find(script_pubkey, path, own_pubkey, change=False) -> (wallet, script) or None

A wallet matches when this device's key at `path` (from the PSBT's BIP32
fields) is one of its cosigners at /<chain>/<index>, and its script there
(the multi or sortedmulti script, from every cosigner's xpub) pays exactly
`script_pubkey`. Change must be at chain 1.
"""
from quillfw.multisig.store import MultisigStore
from quillfw.multisig.wallet import script_pubkey as pays_to


class Registered:
    def __init__(self, boot):
        self._fingerprint = boot[2][1]
        self.wallets = [wallet for _, wallet in MultisigStore(boot).wallets()]
        self._cache = {}

    def find(self, script_pubkey, path, own_pubkey, change=False):
        spk = bytes(script_pubkey)
        for wallet in self.wallets:
            signer = wallet.own(self._fingerprint, path)
            if signer < 0 or (change and path[-2] != 1):
                continue
            script = wallet.script(path[-2], path[-1], self._cache, (signer, own_pubkey))
            if pays_to(wallet.script_type, script) == spk:
                return wallet, script
        return None
