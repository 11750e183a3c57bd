"""Which registered multisig wallet an input or a change output belongs to
(protocol/SPEC.md §12), for quillfw.psbt.session:

    registered = Registered(boot)       the registered slots, once per signing session
    registered.find(script_pubkey, path, own_pubkey, change=False) -> (wallet, script) or None

A wallet matches when this device's key at `path` (from the PSBT's BIP32
fields) is one of its cosigners at /<chain>/<index>, and its script there
(the multi or sortedmulti script, from every cosigner's xpub) pays exactly
`script_pubkey`. Change must be at chain 1.
"""
from quillfw.multisig.store import MultisigStore
from quillfw.multisig.wallet import script_pubkey as pays_to


def master_fingerprint(boot):
    """The unlocked seed's master fingerprint (derived again when an unlock ran out of
    memory after it had the seed)."""
    held = boot[2]
    if held[1] is None:
        from quillfw.keys.bip32 import master_node
        held[1] = master_node(held[0]).fingerprint()
    return held[1]


class Registered:
    """One wallet decoded at a time (a session's inputs are usually one wallet's;
    eight decoded 10-cosigner wallets would not fit the heap beside a session)."""

    def __init__(self, boot):
        self._fingerprint = master_fingerprint(boot)
        self._store = MultisigStore(boot)
        self.slots = [slot for slot, _ in self._store.names()]
        self._last = None           # (slot, Wallet) that matched last
        self._cache = {}            # its cosigners' /<chain> derivations

    def find(self, script_pubkey, path, own_pubkey, change=False):
        if change and path[-2] != 1:
            return None
        spk = bytes(script_pubkey)
        # the script types that could pay it (indices into SCRIPT_TYPES): P2WSH, P2SH or P2SH-P2WSH
        types = (1,) if len(spk) == 34 and spk[0] == 0 else (0, 2) if len(spk) == 23 else ()
        if self._last is not None:
            found = self._try(self._last[1], spk, path, own_pubkey)
            if found is not None:
                return found
        for slot in self.slots:
            if self._last is not None and slot == self._last[0]:
                continue
            wallet = None               # one decoded wallet at a time, also while decoding
            wallet = self._store.wallet(slot, types)
            if wallet is None or wallet.own(self._fingerprint, path) < 0:
                continue
            self._last, self._cache = None, {}
            found = self._try(wallet, spk, path, own_pubkey)
            if found is not None:
                self._last = (slot, wallet)
                return found
        return None

    def _try(self, wallet, spk, path, own_pubkey):
        signer = wallet.own(self._fingerprint, path)
        if signer < 0:
            return None
        script = wallet.script(path[-2], path[-1], self._cache, (signer, own_pubkey))
        if pays_to(wallet.script_type, script) == spk:
            return wallet, script
        return None
