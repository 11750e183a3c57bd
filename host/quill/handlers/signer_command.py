"""quilld lends its device (issue 25): `signercommand`, the one Quill-only RPC through which
`quill-signer --bridge` runs a quill-signer command with the device quilld holds, and the
signer that quilld's own external-signer wallets use when quilld has no -signer.

Both run quill.signer.commands, the code quill-signer --device runs, with quilld's DeviceClient
(DeviceManagerLink) on the device queue, for the whole command: a bridged signtx, quilld's own
signing (signrawtransactionwithkey) and its external-signer wallets take turns at the one board,
and nothing else opens its port.
"""
from __future__ import annotations

import concurrent.futures
import shlex
import threading
from collections.abc import Iterator
from typing import Any

from quill.device.client import DeviceClient
from quill.device.errors import DeviceUnavailable
from quill.device.pool import DevicePool, NoDeviceHolds
from quill.device.queue import DEVICE_THREAD, DeviceQueueFull
from quill.extsigner.errors import ExternalSignerError
from quill.extsigner.signer import SignerSource
from quill.handlers.device import device_of
from quill.rpc.errors import RPC_INVALID_PARAMETER, RPCError
from quill.rpc.registry import ARR, DEVICE, Method, Param
from quill.signer import commands
from quill.signer.errors import SignerError


class DeviceManagerLink:
    """The device as quilld holds it: its open client, lent for one command (never closed here)."""

    def __init__(self, device: Any, chain: str, repeatable: bool = False) -> None:
        self.device = device
        self.chain = chain
        self.repeatable = repeatable    # the command may be made again on another device

    @property
    def path(self) -> str:
        return str(self.device.spec)

    def connect(self) -> Iterator[DeviceClient]:
        try:
            yield self.device.client()
        except DeviceUnavailable as e:  # lost while the command used it (or never reached)
            if self.repeatable:
                self.device.note_lost(e)    # a pool makes it again on another device
            raise

    def default_chain(self, client: DeviceClient) -> str | None:
        return self.chain


def run_command(ctx: Any, argv: list[str]) -> tuple[int, Any]:
    """quill-signer's (exit status, answer) for argv, run with quilld's device. The caller is
    on the device queue."""
    try:
        args = commands.parse_remote(argv)
    except SignerError as e:
        return 1, {"error": e.message, "code": e.code}
    device, chain = device_of(ctx), ctx.node.chain_name
    if isinstance(device, DevicePool) and len(device.members) > 1:
        if args.command == "enumerate":     # every device of the pool, in order
            return 0, [entry for member in device.members
                       for entry in commands.enumerate_devices(DeviceManagerLink(member.manager, chain))]
        holder = device.holder(args.fingerprint) if args.fingerprint else None
        if holder is not None and holder is not device.current():
            # signercommand is queued on the least busy device: the command runs on the device
            # holding its key, from here (that device's session lock keeps its own calls apart)
            return commands.execute(args, DeviceManagerLink(holder.manager, chain))
    return commands.execute(args, DeviceManagerLink(device, chain, repeatable=args.command in REPEATABLE))


def signercommand(ctx: Any, args: list[Any]) -> Any:
    argv = args[0]
    if not all(isinstance(word, str) for word in argv):
        raise RPCError(RPC_INVALID_PARAMETER, "args must be an array of strings")
    return run_command(ctx, argv)[1]


def own_device_runner(ctx: Any) -> Any:
    """What runs the external signer's commands when quilld has no -signer: quill-signer's
    argv (as Core's ExternalSigner passes them, after the signer's own command) run on the
    device queue, answering as run_command_parse_json (a failure is ExternalSignerError).
    With a pool of devices (several -device), a command bound to a fingerprint goes to a
    device holding it (run_command: `enumerate` asks every device), and a command made again
    on another device when its own was lost is one of REPEATABLE's."""
    def run(argv: list[str], stdin: str, timeout: float) -> Any:
        words = [word for word in argv if word != "--stdin"] + shlex.split(stdin)
        command = _command_name(words)
        if threading.current_thread().name == DEVICE_THREAD:
            # already at the device (a call on its queue): queueing again would wait for itself
            status, answer = run_command(ctx, words)
        else:
            try:
                future = ctx.node.device_queue.submit(f"signer {command}", run_command, ctx, words,
                                                      fingerprint=_fingerprint(words),
                                                      repeatable=command in REPEATABLE)
                status, answer = future.result(timeout)
            except NoDeviceHolds as e:
                raise ExternalSignerError(f"Quill device: {e}") from None
            except (DeviceQueueFull, concurrent.futures.TimeoutError):
                raise ExternalSignerError(f"Quill device: no answer within {timeout:g} seconds") from None
        if status:
            raise ExternalSignerError(f"Quill device: {answer['error']}")
        return answer
    return run


# The signer's commands that read the device or sign (the same answer from any device holding
# the key): made once more on another device when theirs is lost mid-command.
REPEATABLE = frozenset(("getdescriptors", "getxpub", "displayaddress", "getkeypool", "signtx", "signmessage"))


def _fingerprint(words: list[str]) -> str | None:
    """The --fingerprint a command is bound to (Core's ExternalSigner always names it)."""
    for i, word in enumerate(words):
        if word.startswith("--fingerprint="):
            return word.split("=", 1)[1].strip('"')
        if word == "--fingerprint" and i + 1 < len(words):
            return words[i + 1].strip('"')
    return None


def signer_source(ctx: Any) -> SignerSource | None:
    """The node's signers: Core's -signer, else quilld's own device when it has one (issue 25:
    quill-signer's commands run with it on the device queue), else none."""
    if ctx.node.signer:
        return SignerSource(ctx.node.signer)
    device = getattr(ctx.node, "device", None)
    if device is not None and device.configured and getattr(ctx.node, "device_queue", None) is not None:
        return SignerSource("", own_device_runner(ctx))
    return None


def _command_name(words: list[str]) -> str:
    return next((w for w in words if w in commands.COMMANDS), "command")


HELP_RESULT = """(json value)    What quill-signer prints for the command: a JSON array (enumerate), a JSON object
                (getdescriptors, getxpub, displayaddress, signtx, export --format=coldcard, register,
                ...), a string (export --format=bsms or descriptors), or {"error": "str", "code": n}
                when the command fails (HWI's error codes)."""

METHODS = [
    Method(
        "signercommand", "device", signercommand, [Param("args", ARR, required=True, placeholder='["arg",...]',
                                                         help="quill-signer's arguments after --bridge, "
                                                              "files already read")],
        description="Runs one quill-signer command with the device quilld holds, as\n"
                    "`quill-signer --device` would run it, and answers what quill-signer prints.\n"
                    "This is what `quill-signer --bridge` calls, so that Bitcoin Core's -signer,\n"
                    "desktop wallets' tools and quilld's own wallets share one board: the command\n"
                    "holds the device queue from start to end. Without --chain, quilld's chain.\n"
                    "Files (signtx --in/--out, register --bsms, export --out) are read and written\n"
                    "by quill-signer, never by quilld.",
        result=HELP_RESULT,
        examples='> quill-cli signercommand \'["getxpub", "m/84h/1h/0h"]\'\n'
                 '> quill-signer --bridge=http://USER:PASS@127.0.0.1:18443 getxpub m/84h/1h/0h',
        lane=DEVICE,
    ),
]
