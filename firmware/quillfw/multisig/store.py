"""Registered multisig wallets on flash (protocol/SPEC.md §12), one file per
slot beside the seed (`quill_ms<N>.bin` on a board; quill-emu: in its data
directory), or in RAM for a device whose seed is kept in RAM:

    "QMS1" | tag[32] | body (quillfw.multisig.wallet's record)

tag = HMAC-SHA256(HMAC-SHA256(BIP32 seed, "quill multisig"), body): a record
that another seed wrote (the device was wiped and set up again), or that was
changed on the flash, fails its tag and counts as an empty slot, so only
wallets this seed's user confirmed are ever matched.

    store = MultisigStore(boot)      quillfw.keys.methods' state; the seed must be unlocked
    store.wallets() -> [(slot, Wallet), ...]      store.names() -> [(slot, name), ...]
    store.wallet(slot) -> Wallet or None
    store.add(wallet) -> slot        store.remove(name) -> bool
    erase(boot)                      every slot emptied, without the seed (wipe)
"""
import os

from quillfw.crypto.hashes import hmac_sha256
from quillfw.multisig.methods import MAX_WALLETS
from quillfw.multisig.wallet import Wallet

MAGIC = b"QMS1"
_TAG = 32


def ram_slots(boot):
    """The RAM slots of a device without a seed file, kept in the keys' state."""
    if len(boot) < 6:
        boot.append([None] * MAX_WALLETS)
    return boot[5]


def _slot_path(folder, slot):
    return "%squill_ms%d.bin" % (folder, slot)


def _folder(seed_path):
    return seed_path[:seed_path.rfind("/") + 1]


def erase(boot):
    """Empty every slot, whatever seed wrote it (quillfw.keys' wipe: the seed is
    gone, so the tags cannot be checked and need not be)."""
    if boot[0] is None:
        slots = ram_slots(boot)
        for slot in range(MAX_WALLETS):
            slots[slot] = None
        return
    for slot in range(MAX_WALLETS):
        try:
            os.remove(_slot_path(_folder(boot[0]), slot))
        except OSError:
            pass


class MultisigStore:
    def __init__(self, boot):
        seed_path = boot[0]
        self._dir = None if seed_path is None else _folder(seed_path)
        self._ram = ram_slots(boot) if seed_path is None else None
        self._key = hmac_sha256(boot[2][0], b"quill multisig")

    def _path(self, slot):
        return _slot_path(self._dir, slot)

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

    def wallet(self, slot, script_types=None):
        """The Wallet in slot, or None (empty, another seed's, malformed, or not of
        one of script_types: indices into SCRIPT_TYPES, checked before decoding)."""
        body = self._body(slot)
        if body is None or (script_types is not None and body[0] not in script_types):
            return None
        try:
            return Wallet.decode(body)
        except (ValueError, IndexError):
            return None

    def wallets(self):
        found = []
        for slot in range(MAX_WALLETS):
            wallet = self.wallet(slot)
            if wallet is not None:
                found.append((slot, wallet))
        return found

    def names(self):
        """[(slot, name), ...] of the registered wallets, without decoding them (heap)."""
        found = []
        for slot in range(MAX_WALLETS):
            body = self._body(slot)
            if body is not None and len(body) > 6:
                found.append((slot, bytes(body[6:6 + body[5]]).decode()))
        return found

    def add(self, wallet):
        """The slot the wallet was written to; ValueError when none is free."""
        taken = [slot for slot, _ in self.names()]
        for slot in range(MAX_WALLETS):
            if slot not in taken:
                from quillfw.multisig.policy import encode
                body = encode(wallet)
                self._write(slot, MAGIC + hmac_sha256(self._key, body) + body)
                return slot
        raise ValueError("%d multisig wallets are registered: remove one first" % MAX_WALLETS)

    def remove(self, name):
        for slot, registered in self.names():
            if registered == name:
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
