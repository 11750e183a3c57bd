"""quill-emu --keys: the seed and key methods (quillfw.keys, protocol/SPEC.md
§9), the seed kept encrypted in <datadir>/seed.bin.

Only on request: with the default ROMFS image every loaded module's names and
function objects stay on the heap, and at the 97K heap the key methods and a
signing session do not both fit; with the firmware frozen (quill-emu --frozen),
as a board's frozen firmware keeps them in flash, they do. Boards register the
keys at start-up (boards/*/main.py). quill-emu --test-mnemonic writes seed.bin before the
firmware starts, as a board's flash would be provisioned; quill-emu --seed=generate has the
firmware make one itself at its first start (generate_seed).
"""
from quillfw.keys import methods
from quillfw.psbt import methods as psbt_methods

SEED_FILE = "seed.bin"


def register_keys(dispatcher, datadir):
    """The key methods, and the PSBT signing with those keys (quillfw.psbt); datadir
    None (a qemu target, without a filesystem): the seed is kept in RAM."""
    seed_path = None if datadir is None else datadir + "/" + SEED_FILE
    psbt_methods.register(dispatcher, methods.register(dispatcher, seed_path))


def generate_seed(datadir, log):
    """quill-emu --seed=generate, run once before the firmware serves: when the device has
    no seed, make one as seed_generate makes it (quillfw.keys.keyring.new_seed: 12 words
    from the device's own randomness) and keep it in <datadir>/seed.bin without a PIN,
    as --test-mnemonic keeps its seed. The words never leave this process: no reply, no
    log line, no file has them (a board with a screen shows them there; this one has
    none, so they are dropped). Returns whether a seed was made."""
    from quillfw.keys.keyring import new_seed
    from quillfw.keys.methods import DEFAULT_MAX_PIN_ATTEMPTS, DEFAULT_PIN_ROUNDS
    from quillfw.keys.store import SeedStore
    store = SeedStore(datadir + "/" + SEED_FILE)
    if store.exists():
        return False
    seed = new_seed(12)[1]
    store.save(seed, "", DEFAULT_PIN_ROUNDS, DEFAULT_MAX_PIN_ATTEMPTS)
    log("generated a new seed on the device, kept in " + datadir + "/" + SEED_FILE + " (no PIN)")
    return True
