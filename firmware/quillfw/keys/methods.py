"""The seed and key methods of the device protocol (protocol/SPEC.md §9).

    register(dispatcher, seed_path, pin_rounds)   a board's start-up (and quill-emu --keys)

This module stays small: each method's table and code (quillfw.keys.keyring)
is loaded per request and forgotten after it, so only the unlocked seed and
this module stay in RAM between requests.

    seed_generate {words, pin, ? entropy, ? passphrase} -> {mnemonic, fingerprint}
                  (on a device with a display: -> {fingerprint}; the words are shown
                  and checked on the device only, quillfw.ui.seed)
    seed_restore  {mnemonic, pin, ? passphrase}         -> {fingerprint}
    unlock        {? pin}                               -> {fingerprint}
                  (no pin: entered on the device's buttons, on a device with a display)
    lock          {}                                    -> null
    change_pin    {}                                    -> {fingerprint}
                  (a device with a display: the current PIN and the new one twice, on its
                  buttons; INVALID_PARAMS on one without)
    wipe          {}                                    -> null
    get_xpub      {path, ? network}                     -> {xpub, fingerprint}

The device is "uninitialized" (no seed), "locked" (a seed on flash, none in
RAM) or "unlocked"; get_xpub and every other key operation answer LOCKED
otherwise. A seed stored without a PIN (only the emulator's test seed) is
unlocked by the first key operation.

state (kept by register's handlers between requests): [seed_path (None: the seed in
RAM), pin_rounds (None: the default), [seed, fingerprint] while unlocked,
[the seed record] when it is kept in RAM, [functions that the rooms above add, called
when the seed is wiped (quillfw.multisig: erase the registrations)]].
"""
UNINITIALIZED = "uninitialized"
LOCKED_STATE = "locked"
UNLOCKED = "unlocked"

CAPABILITIES = ("seed", "bip39", "bip32", "pin")
DEFAULT_PIN_ROUNDS = 2000          # per board: register(dispatcher, seed_path, pin_rounds)
DEFAULT_MAX_PIN_ATTEMPTS = 10
SEED_FILE = "quill_seed.bin"   # on a board's filesystem, beside the confirmation policy
METHODS = ("seed_generate", "seed_restore", "unlock", "lock", "wipe", "get_xpub", "change_pin")


def _handler(state, name):
    def handler(ctx, params):
        import gc
        import sys
        # the code loaded below needs whole blocks: the last request's garbage out first
        gc.collect()
        loaded = set(sys.modules)
        try:
            from quillfw.keys.keyring import method
            result = method(state, name).handler(ctx, params)
        except MemoryError:
            # out of memory while importing the keyring: keyring.run never got to drop
            # what was half loaded, and a module left loaded would stay for good
            _forget_new(loaded)
            raise
        _settle(state[2])
        return result
    return handler


def _settle(held):
    """Move the unlocked seed and its fingerprint to the lowest free blocks, now that the
    request's code is gone (the allocator is first-fit from the bottom): made amid the
    keyring's code, they would stay there, splitting the free heap that a signing session
    needs whole (the Pico's largest free block went from 71 KB to 24 KB at the first get_xpub).
    The old copy of the seed is wiped."""
    import gc
    seed = held[0]
    if seed is None:
        return
    gc.collect()
    held[0] = bytearray(seed)
    for i in range(len(seed)):
        seed[i] = 0
    if held[1] is not None:
        held[1] = bytes(memoryview(held[1]))


def _forget_new(loaded):
    import gc
    import sys

    from quillfw.compat import forget
    gc.collect()
    for module in [m for m in sys.modules if m not in loaded]:
        forget(module)


def register(dispatcher, seed_path=None, pin_rounds=None):
    """seed_path: the seed's file (None: in RAM); pin_rounds: the PIN KDF's rounds,
    measured per board (None: DEFAULT_PIN_ROUNDS). Returns the keys' state, which
    quillfw.psbt.methods.register takes."""
    from quillfw.wire.dispatcher import ANY, Method
    state = [seed_path, pin_rounds, [None, None], None, []]
    # any of these names passes the dispatcher; the keyring checks each method's own
    names = {}
    for key in ("words", "pin", "entropy", "passphrase", "mnemonic", "path", "network"):
        names[key] = (ANY, False)
    dispatcher.register([Method(name, _handler(state, name), names) for name in METHODS],
                        info=lambda: info(state))
    return state


def info(state, _unused=None):
    """get_info's fields, from the seed file's header and what RAM holds."""
    keys = {"state": UNINITIALIZED, "max_pin_attempts": DEFAULT_MAX_PIN_ATTEMPTS}
    head = b""
    if state[0] is not None:
        try:
            with open(state[0], "rb") as f:
                head = f.read(13)
        except OSError:
            pass
    elif state[3] is not None and state[3][0] is not None:
        head = state[3][0][:13]
    # quillfw.keys.store's layout: magic[6] rounds[4] max_attempts failures has_pin
    if len(head) == 13 and head[:6] == b"QSEED1":
        keys["state"] = LOCKED_STATE if head[12] and state[2][0] is None else UNLOCKED
        keys["pin_set"] = head[12] == 1
        keys["max_pin_attempts"] = head[10]
        keys["pin_attempts_left"] = head[10] - head[11]
    if state[2][1] is not None:
        keys["fingerprint"] = state[2][1]
    return {"capabilities": list(CAPABILITIES), "keys": keys}
