"""The device's keys: the seed's state (uninitialized, locked, unlocked), its
set-up, PIN unlock, lock and wipe, and BIP32 derivation with a cache. The
protocol methods (quillfw.keys.methods) import this module on first use.

The BIP32 seed is held in one bytearray while unlocked and zeroed at lock;
derived nodes are cached within the unlock and dropped with it. seed_generate
mixes host entropy into os.urandom's through SHA-256, so the host can add to
the device's randomness but never choose it; its answer carries the words
once, for the user to write down. No error text ever quotes a word, a PIN or
a passphrase.
"""
import gc
import hashlib
import os
import sys

from quillfw.compat import forget
from quillfw.keys.methods import (
    CAPABILITIES,
    DEFAULT_MAX_PIN_ATTEMPTS,
    DEFAULT_PIN_ROUNDS,
    LOCKED_STATE,
    UNINITIALIZED,
    UNLOCKED,
)
from quillfw.keys.store import WrongPin
from quillfw.wire.dispatcher import BYTES, TEXT, UINT, Method
from quillfw.wire.errors import INVALID_PARAMS, LOCKED, DeviceError

MIN_PIN, MAX_PIN = 4, 64
MAX_PASSPHRASE = 100
_CACHE_SIZE = 16
_NETWORKS = ("main", "test")


# each method's parameters, checked as the dispatcher checks a Method's
PARAMS = {
    "seed_generate": {"words": (UINT, True), "pin": (TEXT, True), "entropy": (BYTES, False),
                      "passphrase": (TEXT, False)},
    "seed_restore": {"mnemonic": (TEXT, True), "pin": (TEXT, True), "passphrase": (TEXT, False)},
    "unlock": {"pin": (TEXT, False)},     # none: entered on the device's buttons (display)
    "change_pin": {},                     # on a device with a display: every PIN on its buttons
    "lock": {},
    "wipe": {},
    "get_xpub": {"path": (TEXT, True), "network": (TEXT, False)},
}


def _poll(ctx):
    """The server's link poll (ping stays answered during the slow KDFs), if any."""
    return getattr(ctx, "poll_link", None)


def _check_pin(pin):
    if len(pin) < MIN_PIN or len(pin) > MAX_PIN:
        raise DeviceError(INVALID_PARAMS, "PIN must be %d to %d characters" % (MIN_PIN, MAX_PIN))


def _check_passphrase(passphrase):
    # BIP39 normalises the passphrase with NFKD, which the firmware cannot do:
    # printable ASCII is its own NFKD form.
    if len(passphrase) > MAX_PASSPHRASE:
        raise DeviceError(INVALID_PARAMS, "Passphrase is longer than %d characters" % MAX_PASSPHRASE)
    for ch in passphrase:
        if ch < " " or ch > "~":
            raise DeviceError(INVALID_PARAMS, "Passphrase must be printable ASCII")


def new_mnemonic(words, host_entropy=b""):
    """A new BIP39 mnemonic of words words from the device's own randomness (os.urandom,
    with host_entropy mixed in through SHA-256: the host can add to it, never choose it)."""
    from quillfw.keys import bip39
    entropy = hashlib.sha256(os.urandom(32) + host_entropy).digest()
    return bip39.mnemonic_from_entropy(entropy[:words * 4 // 3])


def seed_of(mnemonic, passphrase="", poll=None):
    """The BIP39 seed of mnemonic; the word list's module is freed after."""
    from quillfw.keys import bip39
    seed = bip39.seed_from_mnemonic(mnemonic, passphrase, poll)
    forget("quillfw.keys.bip39")
    return seed


def new_seed(words, host_entropy=b"", passphrase="", poll=None):
    """(mnemonic, seed): new_mnemonic and its seed."""
    mnemonic = new_mnemonic(words, host_entropy)
    return mnemonic, seed_of(mnemonic, passphrase, poll)


class Keys:
    def __init__(self, store, pin_rounds=DEFAULT_PIN_ROUNDS, max_attempts=DEFAULT_MAX_PIN_ATTEMPTS,
                 held=None, on_wipe=()):
        """held: [seed or None, master fingerprint or None], kept by the caller
        across Keys objects (quillfw.keys.methods drops this code between requests);
        on_wipe: functions called once the seed is wiped (wipe, or the last wrong
        PIN), which erase what the rooms above keep beside the seed (quillfw.multisig's
        registrations)."""
        self.store = store
        self._on_wipe = on_wipe
        self.pin_rounds = pin_rounds
        self.max_attempts = max_attempts
        self._held = held if held is not None else [None, None]
        self._cache = {}
        if self._held[0] is None:
            status = store.status()
            if status is not None and not status[0]:
                self._unlock("")    # a seed stored without a PIN (the emulator's test seed)

    @property
    def _seed(self):
        return self._held[0]

    @property
    def _fingerprint(self):
        return self._held[1]

    # ---- state ------------------------------------------------------------------

    def state(self):
        if self._seed is not None:
            return UNLOCKED
        return LOCKED_STATE if self.store.exists() else UNINITIALIZED

    def info(self):
        status = self.store.status()
        keys = {"state": self.state(), "max_pin_attempts": self.max_attempts}
        if status is not None:
            keys["max_pin_attempts"] = status[1]
            keys["pin_attempts_left"] = status[1] - status[2]
            keys["pin_set"] = status[0]
        if self._fingerprint is not None:
            keys["fingerprint"] = self._fingerprint
        return {"capabilities": list(CAPABILITIES), "keys": keys}

    def lock(self, ctx=None, params=None):
        seed = self._held[0]
        if seed is not None:
            for i in range(len(seed)):
                seed[i] = 0
        self._held[0] = self._held[1] = None
        self._cache = {}
        secp256k1 = sys.modules.get("quillfw.crypto.secp256k1")
        if secp256k1 is not None:
            secp256k1.clear_key_cache()   # it holds public keys of our secrets

    def _unlock(self, pin, poll=None):
        seed = self.store.unlock(pin, poll)
        if seed is None:
            return None
        self.lock()
        self._held[0] = seed
        self._held[1] = self.node([]).fingerprint()
        return self._held[1]

    # ---- key material -----------------------------------------------------------

    def require_unlocked(self):
        if self._seed is None:
            if self.store.exists():
                raise DeviceError(LOCKED, "Device is locked: unlock it with its PIN", "locked")
            raise DeviceError(LOCKED, "Device has no seed: generate or restore one first", "no_seed")

    def node(self, path):
        """The BIP32 node at path (a list of indices), derived from the nearest
        ancestor cached by this Keys object."""
        self.require_unlocked()
        key = tuple(path)
        found = self._cache.get(key)
        if found is not None:
            return found
        from quillfw.keys.bip32 import master_node
        depth = len(path)
        while depth > 0 and tuple(path[:depth]) not in self._cache:
            depth -= 1
        node = self._cache.get(tuple(path[:depth])) or master_node(self._seed)
        for i in range(depth, len(path)):
            node = node.child(path[i])
        if len(self._cache) >= _CACHE_SIZE:
            self._cache = {}   # dicts are unordered on MicroPython: no LRU
        self._cache[key] = node
        return node

    def fingerprint(self):
        self.require_unlocked()
        return self._fingerprint

    # ---- protocol methods ---------------------------------------------------------

    def _install(self, seed, pin, poll):
        self.lock()
        self.store.save(seed, pin, self.pin_rounds, self.max_attempts, poll)
        return self._unlock(pin, poll)

    def _refuse_if_seeded(self):
        if self.store.exists():
            raise DeviceError(INVALID_PARAMS, "Device already has a seed: wipe it first")

    def seed_generate(self, ctx, params):
        words = params["words"]
        if words not in (12, 24):
            raise DeviceError(INVALID_PARAMS, "Parameter 'words' must be 12 or 24")
        _check_pin(params["pin"])
        passphrase = params.get("passphrase", "")
        _check_passphrase(passphrase)
        self._refuse_if_seeded()
        mnemonic = new_mnemonic(words, params.get("entropy", b""))
        conf = getattr(getattr(ctx, "dispatcher", None), "confirmation", None)
        shown = conf is not None and conf.display is not None
        if shown:
            # a device with a display: the words on its screen only, checked before the
            # seed is kept (quillfw.ui.seed); nothing of them in the answer
            from quillfw.ui.seed import backup
            try:
                backup(conf, ctx, mnemonic.split())
            finally:
                _release(conf)
        seed = seed_of(mnemonic, passphrase, _poll(ctx))
        fingerprint = self._install(seed, params["pin"], _poll(ctx))
        if shown:
            return {"fingerprint": fingerprint}
        return {"mnemonic": mnemonic, "fingerprint": fingerprint}

    def seed_restore(self, ctx, params):
        _check_pin(params["pin"])
        passphrase = params.get("passphrase", "")
        _check_passphrase(passphrase)
        self._refuse_if_seeded()
        from quillfw.keys import bip39
        try:
            bip39.entropy_from_mnemonic(bip39.normalized(params["mnemonic"]))
        except ValueError as e:
            raise DeviceError(INVALID_PARAMS, "Invalid mnemonic: %s" % e) from None
        seed = bip39.seed_from_mnemonic(params["mnemonic"], passphrase, _poll(ctx))
        forget("quillfw.keys.bip39")
        return {"fingerprint": self._install(seed, params["pin"], _poll(ctx))}

    def unlock(self, ctx, params):
        if not self.store.exists():
            raise DeviceError(LOCKED, "Device has no seed: generate or restore one first", "no_seed")
        pin = params.get("pin")
        if pin is None:
            pin = _pin_on_device(ctx)
        try:
            fingerprint = self._unlock(pin, _poll(ctx))
        except WrongPin as e:
            self._wrong_pin(e)
        if fingerprint is None:
            raise DeviceError(LOCKED, "Device has no seed: generate or restore one first", "no_seed")
        return {"fingerprint": fingerprint}

    def _wrong_pin(self, e):
        self.lock()
        if e.attempts_left == 0:
            self._wiped()
            raise DeviceError(LOCKED, "Wrong PIN: too many attempts, the seed was wiped",
                              "wiped") from None
        raise DeviceError(LOCKED, "Wrong PIN, %d attempts left" % e.attempts_left,
                          "wrong_pin") from None

    def change_pin(self, ctx, params):
        """The current PIN, then the new one twice, all on the device's buttons (a wrong
        current PIN counts as an unlock's); the seed is stored again under the new one."""
        if not self.store.exists():
            raise DeviceError(LOCKED, "Device has no seed: generate or restore one first", "no_seed")
        old = _pin_on_device(ctx, "Current PIN")
        try:
            fingerprint = self._unlock(old, _poll(ctx))
        except WrongPin as e:
            self._wrong_pin(e)
        new = _pin_on_device(ctx, "New PIN")
        if _pin_on_device(ctx, "New PIN again") != new:
            raise DeviceError(INVALID_PARAMS, "The new PINs differ: the PIN is unchanged")
        _check_pin(new)
        self.store.save(self._held[0], new, self.pin_rounds, self.max_attempts, _poll(ctx))
        return {"fingerprint": fingerprint}

    def wipe(self, ctx, params):
        conf = getattr(getattr(ctx, "dispatcher", None), "confirmation", None)
        if conf is not None and conf.display is not None and self.store.exists():
            # a device with a display: its user agrees on it first (quillfw.ui)
            from quillfw.ui.flow import ask
            from quillfw.ui.screens import message
            try:
                ask(conf, ctx, message("wipe", "Wipe the seed?", [
                    "This erases the seed and the registered multisig wallets.",
                    "Without its words, its coins are lost."], "Wipe"), "Wipe refused on the device")
            finally:
                _release(conf)
        self.lock()
        self.store.wipe()
        self._wiped()

    def _wiped(self):
        for erase in self._on_wipe:
            erase()

    def get_xpub(self, ctx, params):
        from quillfw.keys.bip32 import TPUB, XPUB, parse_path
        network = params.get("network", "main")
        if network not in _NETWORKS:
            raise DeviceError(INVALID_PARAMS, "Parameter 'network' must be main or test")
        try:
            path = parse_path(params["path"])
        except ValueError as e:
            raise DeviceError(INVALID_PARAMS, "Invalid path: %s" % e) from None
        self.require_unlocked()
        node = self.node(path)
        return {"xpub": node.xpub(XPUB if network == "main" else TPUB),
                "fingerprint": self._fingerprint}


def _pin_on_device(ctx, title="Enter the PIN"):
    """The PIN entered on the device's buttons (quillfw.ui.pin): unlock without a pin
    and change_pin on a device with a display; INVALID_PARAMS on one without."""
    conf = getattr(getattr(ctx, "dispatcher", None), "confirmation", None)
    if conf is None or conf.display is None:
        raise DeviceError(INVALID_PARAMS, "Missing parameter 'pin' (this device has no display "
                                          "to enter it on)")
    from quillfw.ui.pin import enter
    try:
        return enter(conf, ctx, title)
    finally:
        _release(conf)


def _release(conf):
    """The display's and the approver's modules out (quillfw.ui.flow.release)."""
    from quillfw.ui.flow import release
    release(conf.display, conf.approver)


# ---- the protocol's entry (quillfw.keys.methods loads this module per request) ----

_MODULES = ("quillfw.keys.keyring", "quillfw.keys.store", "quillfw.keys.kdf",
            "quillfw.keys.bip32", "quillfw.keys.base58", "quillfw.keys.bip39",
            "quillfw.keys.wordlist", "quillfw.keys.methods", "quillfw.keys")


def _keys(boot):
    from quillfw.keys.store import SeedStore
    if boot[0] is None:
        if boot[3] is None:
            boot[3] = [None]
        store = SeedStore(None, boot[3])
    else:
        store = SeedStore(boot[0])
    return Keys(store, boot[1] or DEFAULT_PIN_ROUNDS, DEFAULT_MAX_PIN_ATTEMPTS, boot[2], boot[4])


def release(loaded):
    """Forget this room's modules, and every module the request imported that was
    not loaded before it (loaded: sys.modules' names then): only the unlocked
    seed stays in RAM between requests, and signing gets the heap back."""
    for name in _MODULES:
        forget(name)
    secp256k1 = sys.modules.get("quillfw.crypto.secp256k1")
    if secp256k1 is not None:
        secp256k1.clear_key_cache()   # public keys of our secrets, and heap
    # after an out-of-memory error, the list below needs the request's garbage gone
    gc.collect()
    for name in list(sys.modules):
        if name not in loaded:
            forget(name)


def method(state, name):
    """The Method for name, with its own parameter check."""
    forget("quillfw.keys.keyring")   # the Method holds it for this request only

    def handler(ctx, params):
        Method(name, None, PARAMS[name]).check_params(params)
        return run(state, name, ctx, params)
    return Method(name, handler, PARAMS[name])


def _seeded(boot):
    """A seed in RAM or stored (without reading or decrypting it)."""
    if boot[2][0] is not None:
        return True
    if boot[0] is None:
        return boot[3] is not None and boot[3][0] is not None
    try:
        os.stat(boot[0])
        return True
    except OSError:
        return False


def run(boot, name, ctx, params):
    loaded = set(sys.modules)
    loaded.discard("quillfw.keys.keyring")
    try:
        if name in ("seed_generate", "seed_restore", "unlock") or (
                name == "get_xpub" and _seeded(boot)):
            # long-lived first, then the KDFs' garbage: a fragmented heap of the
            # board's size has no 1 KB hole left for SHA-512's schedule otherwise
            from quillfw.crypto.hashes import sha512
            from quillfw.keys import bip32  # noqa: F401
            sha512(b"")
        return getattr(_keys(boot), name)(ctx, params)
    finally:
        try:
            release(loaded)
        except MemoryError:
            # a module left loaded would stay for good: its heap lost to every request
            gc.collect()
            release(loaded)
