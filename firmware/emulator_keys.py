"""quill-emu --keys: the seed and key methods (quillfw.keys, protocol/SPEC.md
§9), the seed kept encrypted in <datadir>/seed.bin.

Only on request: with the default ROMFS image every loaded module's names and
function objects stay on the heap, and at the 97K heap the key methods and a
signing session do not both fit; with the firmware frozen (quill-emu --frozen),
as a board's frozen firmware keeps them in flash, they do. Boards register the
keys at start-up (boards/*/main.py). quill-emu --test-mnemonic writes seed.bin before the
firmware starts, as a board's flash would be provisioned.
"""
from quillfw.keys import methods
from quillfw.psbt import methods as psbt_methods

SEED_FILE = "seed.bin"


def register_keys(dispatcher, datadir):
    """The key methods, and the PSBT signing with those keys (quillfw.psbt); datadir
    None (a qemu target, without a filesystem): the seed is kept in RAM."""
    seed_path = None if datadir is None else datadir + "/" + SEED_FILE
    psbt_methods.register(dispatcher, methods.register(dispatcher, seed_path))
