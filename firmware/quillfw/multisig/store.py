"""Registered multisig wallets on flash (protocol/SPEC.md §12), one file per
slot beside the seed (`quill_ms<N>.bin` on a board; quill-emu: in its data
directory), or in RAM for a device whose seed is kept in RAM:

    "QMS1" | tag[32] | body (quillfw.multisig.wallet's record)

tag = HMAC-SHA256(HMAC-SHA256(BIP32 seed, "quill multisig"), body): a record
that another seed wrote (the device was wiped and set up again), or that was
changed on the flash, fails its tag and counts as an empty slot, so only
wallets this seed's user confirmed are ever matched.

    store = MultisigStore(boot)      quillfw.keys.methods' state; the seed must be unlocked
    store.wallets() -> [(slot, Wallet), ...]
    store.add(wallet) -> slot        store.remove(name) -> bool
"""
import os

from quillfw.crypto.hashes import hmac_sha256
from quillfw.multisig.methods import MAX_WALLETS
from quillfw.multisig.wallet import Wallet

MAGIC = b"QMS1"
_TAG = 32


def ram_slots(boot):
    """The RAM slots of a device without a seed file, kept in the keys' state."""
    if len(boot) < 5:
        boot.append([None] * MAX_WALLETS)
    return boot[4]


class MultisigStore:
    def __init__(self, boot):
        seed_path = boot[0]
        self._dir = None if seed_path is None else seed_path[:seed_path.rfind("/") + 1]
        self._ram = ram_slots(boot) if seed_path is None else None
        self._key = hmac_sha256(boot[2][0], b"quill multisig")

    def _path(self, slot):
        return "%squill_ms%d.bin" % (self._dir, slot)

    def _read(self, slot):
        if self._ram is not None:
            return self._ram[slot]
        try:
            with open(self._path(slot), "rb") as f:
                return f.read()
        except OSError:
            return None

    def _body(self, slot):
        record = self._read(slot)
        if record is None or len(record) < 4 + _TAG or record[:4] != MAGIC:
            return None
        body = record[4 + _TAG:]
        if hmac_sha256(self._key, body) != record[4:4 + _TAG]:
            return None
        return body

    def wallets(self):
        found = []
        for slot in range(MAX_WALLETS):
            body = self._body(slot)
            if body is not None:
                try:
                    found.append((slot, Wallet.decode(body)))
                except (ValueError, IndexError):
                    pass
        return found

    def add(self, wallet):
        """The slot the wallet was written to; ValueError when none is free."""
        taken = [slot for slot, _ in self.wallets()]
        for slot in range(MAX_WALLETS):
            if slot not in taken:
                body = wallet.encode()
                self._write(slot, MAGIC + hmac_sha256(self._key, body) + body)
                return slot
        raise ValueError("%d multisig wallets are registered: remove one first" % MAX_WALLETS)

    def remove(self, name):
        for slot, wallet in self.wallets():
            if wallet.name == name:
                self._write(slot, None)
                return True
        return False

    def _write(self, slot, record):
        if self._ram is not None:
            self._ram[slot] = record
            return
        path = self._path(slot)
        if record is None:
            try:
                os.remove(path)
            except OSError:
                pass
            return
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(record)
        os.rename(tmp, path)
