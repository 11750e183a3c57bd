"""The core methods every firmware answers: ping and get_info.

get_info is what the host gates features on: protocol version, the method
table, the declared limits and the script and sighash types that the
registered signing methods support.
"""
import gc
import sys

from quillfw import limits
from quillfw.board.version import FIRMWARE_VERSION, PROTOCOL_VERSION
from quillfw.compat import forget
from quillfw.wire.dispatcher import Method


def _heap_free():
    try:
        return gc.mem_free()
    except AttributeError:  # CPython has no fixed heap
        return 0


def _micropython_version():
    version = sys.implementation.version
    return "%d.%d.%d" % (version[0], version[1], version[2])


def new_boot_id():
    """16 hex digits, new at every start: the host compares them to notice a restart.
    (A port without os.urandom gets a seed from its entry point instead.)"""
    from binascii import hexlify
    from os import urandom
    return hexlify(urandom(8)).decode()


class DeviceInfo:
    """Answers get_info for one board; `board` names the hardware (or the emulator),
    `target` what runs the firmware (quill-emu's --target; a board's port name)."""

    def __init__(self, dispatcher, board, emulator=False, target=None):
        self.dispatcher = dispatcher
        self.board = board
        self.emulator = emulator
        self.target = target or sys.platform

    def get_info(self, ctx, params):
        # resident since the self-test signed (imported here, not at boot, so that
        # the signing table keeps its place in the heap)
        from quillfw.crypto.secp256k1 import NATIVE
        gc.collect()
        info = {
            "firmware_version": FIRMWARE_VERSION,
            "protocol_version": PROTOCOL_VERSION,
            "board": self.board,
            "emulator": self.emulator,
            "target": self.target,
            "boot_id": self.dispatcher.boot_id,
            "implementation": sys.implementation.name,
            "implementation_version": _micropython_version(),
            "heap_free": _heap_free(),
            "max_message_size": limits.MAX_MESSAGE_SIZE,
            "limits": {
                "max_inputs": limits.MAX_INPUTS,
                "max_outputs": limits.MAX_OUTPUTS,
                "max_script_size": limits.MAX_SCRIPT_SIZE,
                "max_keys": limits.MAX_KEYS,
            },
            "methods": self.dispatcher.method_names(),
            "script_types": list(self.dispatcher.script_types),
            "sighash_types": list(self.dispatcher.sighash_types),
            "selftest": self.dispatcher.selftest,
            "crypto_backend": "python" if NATIVE is None else "native",
        }
        for hook in self.dispatcher.info_hooks:
            info.update(hook())
        return info


def ping(ctx, params):
    return ctx.state


def core_methods(dispatcher, board, emulator=False, target=None, boot_id=None):
    dispatcher.boot_id = boot_id or new_boot_id()
    # Boot: run the known-answer self-test now, before the first request is served,
    # keep its status and free its code and known answers.
    from quillfw.board import selftest
    dispatcher.selftest = selftest.run()
    forget("quillfw.board.selftest")
    info = DeviceInfo(dispatcher, board, emulator, target)
    return [
        Method("ping", ping, out_of_band=True),
        Method("get_info", info.get_info, out_of_band=True),
    ]
