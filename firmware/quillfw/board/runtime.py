"""Boot the protocol server: build the method table and serve a transport.

The method table is the core methods (ping, get_info) plus every module named
in EXTENSIONS: each exposes `register(dispatcher)`, which calls
`dispatcher.register(methods, script_types, sighash_types, reset)`. The
signing integration adds its module here; get_info then reports its methods
and what it can sign. The user confirmation (quillfw.signing.confirm) is part of
every build: its set_confirm_policy method, its get_info fields, and the
Confirmation object the signing methods ask before their first signature.
So is the chain its user chose (set_chain, get_info's `chain`): what a host
uses when it is not told which chain (quill-signer without --chain), as a
Coldcard or a Jade keeps its network setting.
"""
import sys

from quillfw.board.info import core_methods
from quillfw.signing.confirm import DEFAULT_TIMEOUT_MS, Confirmation
from quillfw.wire.dispatcher import TEXT, UINT, Dispatcher, Method
from quillfw.wire.errors import INVALID_PARAMS, DeviceError
from quillfw.wire.framing import DEFAULT_IDLE_MS
from quillfw.wire.server import LinkBuffers, Server

EXTENSIONS = ("quillfw.signing.methods",)
CHAINS = ("main", "test", "testnet4", "signet", "regtest")
CHAIN_FILE = "quill_chain.txt"     # beside the confirmation policy's file
CHAIN_REFUSED = "Chain refused on the device"


class ChainSetting:
    """set_chain {chain} -> null, once the user agreed; kept on flash (in RAM without a
    policy file); get_info's `chain` when one was set."""

    def __init__(self, policy_path, confirmation):
        self.path = None if policy_path is None else \
            policy_path[:policy_path.rfind("/") + 1] + CHAIN_FILE
        self.confirmation = confirmation
        self.memory = None

    def current(self):
        if self.path is None:
            return self.memory
        try:
            with open(self.path) as f:
                chain = f.read().strip()
        except OSError:
            return None
        return chain if chain in CHAINS else None

    def set_chain(self, ctx, params):
        chain = params["chain"]
        if chain not in CHAINS:
            raise DeviceError(INVALID_PARAMS, "chain must be one of " + ", ".join(CHAINS))
        from quillfw.signing.confirm import drop, flow
        try:
            prompt = "Use chain " + chain
            if self.confirmation.display is not None:
                from quillfw.ui.screens import chain as screen
                prompt = screen(chain)
            flow().ask(self.confirmation, ctx, prompt, CHAIN_REFUSED)
        finally:
            drop(self.confirmation.approver)
        if self.path is None:
            self.memory = chain
        else:
            with open(self.path, "w") as f:
                f.write(chain)
        return None

    def info(self):
        chain = self.current()
        return {} if chain is None else {"chain": chain}


def build_dispatcher(board, emulator=False, approver=None, policy_path=None,
                     confirm_timeout_ms=DEFAULT_TIMEOUT_MS, target=None, boot_id=None,
                     display=None):
    """approver: who confirms, a spec of quillfw.signing.confirm (None: nobody, so
    whatever the policy asks to confirm is refused); policy_path: the policy's
    file (None: kept in memory); display: the display's spec (None: a device
    without one), quillfw.signing.confirm.Confirmation. Extensions find the
    Confirmation as dispatcher.confirmation."""
    # Heap (the allocator is first-fit from the bottom): the link's frame buffer is
    # allocated first, before the self-test's garbage, so that it lies at the bottom
    # instead of splitting the free heap later; the signing session's buffers come
    # with its first sign_begin (quillfw.signing.methods) and are reused after.
    link_buffers = LinkBuffers()
    dispatcher = Dispatcher()
    dispatcher.link_buffers = link_buffers
    dispatcher.register(core_methods(dispatcher, board, emulator, target, boot_id))
    confirmation = Confirmation(approver, policy_path, confirm_timeout_ms, display)
    dispatcher.confirmation = confirmation
    dispatcher.register([Method("set_confirm_policy", confirmation.set_policy,
                                {"policy": (TEXT, True), "amount": (UINT, False)})],
                        info=confirmation.info)
    chain = ChainSetting(policy_path, confirmation)
    dispatcher.register([Method("set_chain", chain.set_chain, {"chain": (TEXT, True)})], info=chain.info)
    for name in EXTENSIONS:
        module = __import__(name, None, None, ["register"])
        module.register(dispatcher)
    if display is not None:
        _intern(display)
    return dispatcher


# the signers load after the review where the code is in RAM (quillfw.signing.session): their
# names are interned at boot too
SIGNERS = ("quillfw.sighash.segwit_v0", "quillfw.sighash.taproot", "quillfw.sighash.legacy")


def _intern(display):
    """Import the display's modules once at boot and drop them again: their names are
    interned for good (MicroPython's qstr pools are never freed), now, at the bottom of a
    whole heap. Interned at the first confirmation instead, they lay a pool amid a signing
    session, and fill it sooner: its successor (the pools double: ~13 KB at 1280 names on
    the emulator's 64-bit port) may then be needed mid-session, as a contiguous block the
    session's heap no longer has ('Out of memory' with kilobytes free). A firmware frozen
    into flash keeps its names there."""
    import gc

    from quillfw.compat import forget
    from quillfw.ui.flow import MODULES
    loaded = set(sys.modules)
    for name in MODULES + ("quillfw.signing.confirm_flow", display[1]) + SIGNERS:
        __import__(name)
    for module in list(sys.modules):
        if module not in loaded:
            forget(module)
    gc.collect()


def serve(transport, dispatcher, idle_ms=DEFAULT_IDLE_MS, log=None):
    """Serve until end of input; returns normally then (the emulator's pipe closed)."""
    server = Server(transport, dispatcher, idle_ms=idle_ms, log=log,
                    buffers=getattr(dispatcher, "link_buffers", None))
    try:
        server.serve_forever()
    except EOFError:
        pass
