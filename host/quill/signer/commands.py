"""quill-signer's commands, each a function of a link to the device: the one
implementation that `quill-signer --device`, quilld's `signercommand` RPC (what
`quill-signer --bridge` asks) and quilld's own external-signer wallets run.

    parser = build_parser(local=True)        # quill-signer's command line
    status, answer = execute(args, link)     # 0 and the answer, or 1 and {"error", "code"}

A link (DeviceLink) opens a connected DeviceClient for one command: quill-signer
opens the serial port and closes it after; quilld lends the client it keeps, on
its device queue, so the command holds the device from start to end.

Answers are HWI's shapes: a list of devices for enumerate, {"receive",
"internal"} for getdescriptors, {"xpub"} for getxpub, {"address"} for
displayaddress, importdescriptors requests for getkeypool, {"psbt"} for signtx;
an export answers the file a wallet imports (quill.signer.exports): a JSON
object (coldcard) or text (bsms, descriptors). Files named on quill-signer's
command line (signtx --in/--out, register --bsms, export --out) are read and
written by quill-signer itself, never by quilld: `remote_argv` turns them into
values before a command crosses the bridge.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, Protocol

from quill.chainparams import CHAINS as BASE_CHAINS
from quill.device import hwkeys
from quill.device import multisig as device_multisig
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.hwkeys import device_network
from quill.signer import bsms, exports, message
from quill.signer.errors import (
    BAD_ARGUMENT,
    DEVICE_CONN_ERROR,
    DEVICE_NOT_READY,
    UNKNOWN_ERROR,
    SignerError,
)
from quill.signer.multisig import RegistrationError, registration
from quill.signing.errors import DeviceCannotSign
from quill.signing.psbt_own_keys import PsbtSigningError, sign_psbt_with_device
from quill.tx.descriptor import add_checksum
from quill.tx.psbt import PSBTError, decode_base64_psbt, encode_base64_psbt

CHAINS = tuple(BASE_CHAINS)
MODEL = "quill"
# HWI's address types (hwilib.common.AddressType), in its order, and their BIP44-style purposes
ADDR_TYPES = ("legacy", "wit", "sh_wit", "tap")
_PURPOSE = {"legacy": 44, "sh_wit": 49, "wit": 84, "tap": 86}
_TEMPLATE = dict(hwkeys.ACCOUNT_TYPES)     # purpose -> descriptor template
_SCRIPT_TYPE = {"legacy": "p2pkh", "sh_wit": "p2sh-p2wpkh", "wit": "p2wpkh", "tap": "p2tr"}
EXPORT_FORMATS = ("coldcard", "bsms", "descriptors")
COMMANDS = ("enumerate", "getdescriptors", "getxpub", "displayaddress", "getkeypool", "signtx", "signmessage",
            "export", "register", "registered", "unregister", "setchain")


class DeviceLink(Protocol):
    """Where a command finds the device."""

    @property
    def path(self) -> str: ...                            # what enumerate shows

    def connect(self) -> Iterator[DeviceClient]: ...      # a generator: the client for one command

    def default_chain(self, client: DeviceClient) -> str | None: ...  # the chain without --chain


class PortLink:
    """quill-signer --device=PORT: the serial port, opened for one command."""

    def __init__(self, port: str) -> None:
        self.path = port

    def connect(self) -> Iterator[DeviceClient]:
        client = DeviceClient(self.path).open()
        try:
            yield client
        finally:
            client.close()

    def default_chain(self, client: DeviceClient) -> str | None:
        """The chain the device's user chose (get_info's `chain`, protocol/SPEC.md §8)."""
        chain = client.get_info().get("chain")
        return chain if chain in CHAINS else None


def _unquote(value: str | None) -> str | None:
    """Core quotes some values ("73c5da0a"); the quotes are taken off."""
    if value is not None and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


class _RemoteParser(argparse.ArgumentParser):
    """signercommand's parser: a bad argument is the caller's error, never an exit of quilld."""

    def error(self, message: str) -> NoReturn:
        raise SignerError(f"quill-signer: error: {message}", BAD_ARGUMENT)


def build_parser(local: bool) -> argparse.ArgumentParser:
    """quill-signer's arguments. `local`: quill-signer's own command line, with the options
    that choose the device and name files; otherwise what quilld's signercommand takes."""
    kind = argparse.ArgumentParser if local else _RemoteParser
    parser = kind(prog="quill-signer", add_help=local)
    if local:
        parser.add_argument("--device", help="serial port path or pyserial URL (default: find a board)")
        parser.add_argument("--bridge", nargs="?", const="", metavar="URL",
                            help="ask quilld for its device: http://USER:PASS@HOST:PORT, or alone "
                                 "the local quilld of the chain (its cookie)")
        parser.add_argument("--datadir", help="quilld's data directory, for --bridge's cookie")
        parser.add_argument("--stdin", action="store_true", help="read the command from stdin")
    parser.add_argument("--fingerprint", help="master key fingerprint of the device to use")
    parser.add_argument("--chain", help="main, test, testnet4, signet or regtest (default: the device's)")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("enumerate")
    descriptors = commands.add_parser("getdescriptors")
    descriptors.add_argument("--account", type=int, default=0)
    xpub = commands.add_parser("getxpub")
    xpub.add_argument("path")
    display = commands.add_parser("displayaddress")
    which = display.add_mutually_exclusive_group(required=True)
    which.add_argument("--desc")
    which.add_argument("--path")
    display.add_argument("--addr-type", choices=ADDR_TYPES, default="wit")
    keypool = commands.add_parser("getkeypool")
    keypool.add_argument("--keypool", action="store_true", dest="keypool", default=True)
    keypool.add_argument("--nokeypool", action="store_false", dest="keypool")
    keypool.add_argument("--internal", action="store_true")
    kinds = keypool.add_mutually_exclusive_group()
    kinds.add_argument("--addr-type", choices=ADDR_TYPES, default="wit")
    kinds.add_argument("--all", action="store_true")
    keypool.add_argument("--account", type=int, default=0)
    keypool.add_argument("--path")
    keypool.add_argument("start", type=int)
    keypool.add_argument("end", type=int)
    sign = commands.add_parser("signtx")
    sign.add_argument("psbt", nargs="?" if local else None, help="base64 PSBT")
    signmessage = commands.add_parser("signmessage")
    signmessage.add_argument("message")
    signmessage.add_argument("path")
    export = commands.add_parser("export")
    export.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    export.add_argument("--account", type=int, default=0)
    export.add_argument("--path", help="bsms: the key's path (default m/48h/COINh/ACCOUNTh/2h)")
    export.add_argument("--label", help="bsms: the key's description (80 characters at most)")
    register = commands.add_parser("register")
    register.add_argument("--desc", action="append")
    register.add_argument("--name", required=True)
    register.add_argument("--bsms-record", help=argparse.SUPPRESS)
    commands.add_parser("registered")
    unregister = commands.add_parser("unregister")
    unregister.add_argument("--name", required=True)
    setchain = commands.add_parser("setchain")
    setchain.add_argument("new_chain", choices=CHAINS)
    if local:
        sign.add_argument("--in", dest="infile", help="read the PSBT from this file (binary or base64)")
        sign.add_argument("--out", dest="outfile", help="write the signed PSBT to this file")
        export.add_argument("--out", dest="outfile", help="write the export to this file")
        register.add_argument("--bsms", help="a BIP129 descriptor record file (round 2)")
    return parser


def check_args(args: argparse.Namespace) -> None:
    """What argparse cannot say; raises SignerError(BAD_ARGUMENT)."""
    args.fingerprint = _unquote(args.fingerprint)
    args.chain = _unquote(args.chain)
    if args.chain is not None and args.chain not in CHAINS:
        raise SignerError(f"--chain must be one of {', '.join(CHAINS)}", BAD_ARGUMENT)
    if args.command is None:
        raise SignerError("a command is required: " + ", ".join(COMMANDS), BAD_ARGUMENT)
    account = getattr(args, "account", 0)
    if account < 0 or account >= hwkeys.HARDENED:
        raise SignerError("Account must be between 0 and 2^31 - 1", BAD_ARGUMENT)
    if args.command == "register" and not args.desc and not args.bsms_record and not getattr(args, "bsms", None):
        raise SignerError("register needs --desc or --bsms", BAD_ARGUMENT)


def remote_argv(args: argparse.Namespace) -> list[str]:
    """The command as quilld's signercommand takes it: files already read (quill.signer.main)."""
    argv: list[str] = []
    if args.fingerprint:
        argv += ["--fingerprint", args.fingerprint]
    if args.chain:
        argv += ["--chain", args.chain]
    argv.append(args.command)
    command = args.command
    if command == "getdescriptors":
        argv += ["--account", str(args.account)]
    elif command == "getxpub":
        argv.append(args.path)
    elif command == "displayaddress":
        argv += ["--desc", args.desc] if args.desc is not None else ["--path", args.path]
        argv += ["--addr-type", args.addr_type]
    elif command == "getkeypool":
        argv += ["--keypool" if args.keypool else "--nokeypool", "--account", str(args.account)]
        argv += ["--internal"] if args.internal else []
        argv += ["--all"] if args.all else ["--addr-type", args.addr_type]
        argv += ["--path", args.path] if args.path is not None else []
        argv += [str(args.start), str(args.end)]
    elif command == "signtx":
        argv.append(args.psbt)
    elif command == "signmessage":
        argv += [args.message, args.path]
    elif command == "export":
        argv += ["--format", args.format, "--account", str(args.account)]
        argv += ["--path", args.path] if args.path is not None else []
        argv += ["--label", args.label] if args.label is not None else []
    elif command == "register":
        for desc in args.desc or []:
            argv += ["--desc", desc]
        argv += ["--bsms-record", args.bsms_record] if args.bsms_record is not None else []
        argv += ["--name", args.name]
    elif command == "unregister":
        argv += ["--name", args.name]
    elif command == "setchain":
        argv.append(args.new_chain)
    return argv


def parse_remote(argv: list[str]) -> argparse.Namespace:
    """signercommand's arguments, or SignerError(BAD_ARGUMENT) with argparse's reason."""
    args = build_parser(local=False).parse_args(argv)
    check_args(args)
    return args


# ---- running a command ---------------------------------------------------------------

def execute(args: argparse.Namespace, link: DeviceLink) -> tuple[int, Any]:
    """(0, answer) or (1, {"error", "code"}): quill-signer's exit status and its output."""
    try:
        return 0, run(args, link)
    except SignerError as e:
        return 1, {"error": e.message, "code": e.code}
    except DeviceError as e:
        return 1, {"error": e.message, "code": UNKNOWN_ERROR}
    except DeviceUnavailable as e:
        return 1, {"error": str(e), "code": DEVICE_CONN_ERROR}


def run(args: argparse.Namespace, link: DeviceLink) -> Any:
    if args.command == "enumerate":
        return enumerate_devices(link)
    with _opened(link, args.fingerprint) as (client, fingerprint):
        chain = args.chain or link.default_chain(client) or "main"
        return _COMMANDS[args.command](client, fingerprint, chain, args)


def enumerate_devices(link: DeviceLink) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"type": MODEL, "model": MODEL, "label": None, "path": link.path,
                             "needs_pin_sent": False, "needs_passphrase_sent": False}
    try:
        with contextmanager(link.connect)() as client:
            state = hwkeys.key_state(client.get_info())
            if state.state == "unlocked" and state.fingerprint is None:
                state = hwkeys.KeyState(state.state, hwkeys.master_fingerprint(client))
    except (DeviceUnavailable, DeviceError, hwkeys.KeysUnavailable) as e:
        entry["error"] = f"Could not open device: {e}"
        entry["code"] = DEVICE_CONN_ERROR
        return [entry]
    if state.state == "locked":
        entry["needs_pin_sent"] = True
        entry["error"] = "Device is locked: unlock it with its PIN"
        entry["code"] = DEVICE_NOT_READY
    elif state.state != "unlocked" or state.fingerprint is None:
        entry["error"] = "Device has no seed: generate or restore one first"
        entry["code"] = DEVICE_NOT_READY
    else:
        entry["fingerprint"] = state.fingerprint
    return [entry]


@contextmanager
def _opened(link: DeviceLink, wanted: str | None) -> Iterator[tuple[DeviceClient, str]]:
    """The client and its master fingerprint, once the device is unlocked and is the one asked for."""
    with contextmanager(link.connect)() as client:
        try:
            state = hwkeys.key_state(client.get_info())
        except hwkeys.KeysUnavailable as e:
            raise SignerError(str(e), DEVICE_NOT_READY) from None
        if state.state != "unlocked":
            raise SignerError(f"Device is {state.state}", DEVICE_NOT_READY)
        fingerprint = hwkeys.master_fingerprint(client)
        if wanted and fingerprint != wanted.lower():
            raise SignerError(f"No device with fingerprint {wanted}", DEVICE_CONN_ERROR)
        yield client, fingerprint


def parse_path(text: str) -> str:
    """A BIP32 path as the device takes it ("m/84h/1h/0h"); ' and H are read as h."""
    path = text.strip().replace("'", "h").replace("H", "h")
    if not re.fullmatch(r"m(/[0-9]+h?)*", path) or any(
            int(p.rstrip("h")) >= hwkeys.HARDENED for p in path.split("/")[1:]):
        raise SignerError(f"Invalid path: {text}", BAD_ARGUMENT)
    return path


def _getdescriptors(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    return hwkeys.account_descriptors(client, chain, args.account)


def _getxpub(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    return {"xpub": hwkeys.get_xpub(client, parse_path(args.path), chain)[0]}


# The descriptors Core's walletdisplayaddress passes (InferDescriptor of one address):
# pkh/sh(wpkh)/wpkh/tr of one key with its origin, e.g. wpkh([73c5da0a/84h/1h/0h/0/0]02ab...)
_DISPLAY_FORMS = (("pkh(", ")", "p2pkh"), ("sh(wpkh(", "))", "p2sh-p2wpkh"),
                  ("wpkh(", ")", "p2wpkh"), ("tr(", ")", "p2tr"))
_ORIGIN = re.compile(r"^\[([0-9a-fA-F]{8})((?:/[0-9]+[hH']?)*)\]([0-9A-Za-z]+)((?:/[0-9]+[hH']?)*)$")


def display_request(desc: str, fingerprint: str) -> tuple[str, str]:
    """(path, script type) of a single-key descriptor of this device's key."""
    body = desc.split("#", 1)[0]
    forms = [(body[len(prefix):len(body) - len(suffix)], kind) for prefix, suffix, kind in _DISPLAY_FORMS
             if body.startswith(prefix) and body.endswith(suffix)]
    if not forms:
        raise SignerError("Unsupported descriptor: the device displays pkh, sh(wpkh), wpkh "
                          "and tr addresses of one key", BAD_ARGUMENT)
    key, script_type = forms[0]
    match = _ORIGIN.match(key)
    if match is None:
        raise SignerError("Descriptor key has no key origin", BAD_ARGUMENT)
    if match.group(1).lower() != fingerprint:
        raise SignerError("Descriptor key is not this device's", BAD_ARGUMENT)
    path = "m" + (match.group(2) + match.group(4)).replace("'", "h").replace("H", "h")
    return path, script_type


def _displayaddress(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    if args.desc is not None:
        path, script_type = display_request(args.desc, fingerprint)
    else:
        path, script_type = parse_path(args.path), _SCRIPT_TYPE[args.addr_type]
    result = client.call("display_address", {"path": path, "script_type": script_type,
                                              "network": device_network(chain)}, awaits_user=True)
    return {"address": result["address"]}


def _keypool_entry(client: DeviceClient, fingerprint: str, chain: str, addr_type: str, path: str,
                   internal: bool, args: argparse.Namespace) -> dict[str, Any]:
    """HWI's getkeypool_inner: the descriptor of `path` (ending /*) below its last hardened step."""
    steps = parse_path(path[:-2] if path.endswith("/*") else "").split("/")[1:]
    hardened = max((i + 1 for i, step in enumerate(steps) if step.endswith("h")), default=0)
    base = "m" + "".join("/" + s for s in steps[:hardened])
    xpub = hwkeys.get_xpub(client, base, chain)[0]
    origin = "".join("/" + s for s in steps[:hardened])
    suffix = "".join("/" + s for s in steps[hardened:]) + "/*"
    desc = _TEMPLATE[_PURPOSE[addr_type]].format(key=f"[{fingerprint}{origin}]{xpub}{suffix}")
    return {"desc": add_checksum(desc), "range": [args.start, args.end], "timestamp": "now",
            "internal": internal, "keypool": args.keypool, "active": args.keypool, "watchonly": True}


def _getkeypool(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    """HWI's getkeypool: importdescriptors requests (receive and change of each type asked, or
    of --path)."""
    if args.path is not None:
        if not args.path.startswith("m") or not args.path.endswith("/*"):
            raise SignerError("Path must start with m/ and end with /*", BAD_ARGUMENT)
        return [_keypool_entry(client, fingerprint, chain, args.addr_type, args.path, args.internal, args)]
    kinds = ADDR_TYPES if args.all else (args.addr_type,)
    branches = (True,) if args.internal else (False, True)
    coin = hwkeys.coin_type(chain)
    return [_keypool_entry(client, fingerprint, chain, kind,
                           f"m/{_PURPOSE[kind]}h/{coin}h/{args.account}h/{int(internal)}/*", internal, args)
            for kind in kinds for internal in branches]


def _signtx(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    """HWI's signtx: the PSBT with the device's signatures added."""
    try:
        psbt = decode_base64_psbt(args.psbt or "")
    except PSBTError as e:
        raise SignerError(f"TX decode failed {e}", BAD_ARGUMENT) from None
    try:
        sign_psbt_with_device(client, client.get_info(), psbt, bytes.fromhex(fingerprint),
                              device_network(chain))
    except (PsbtSigningError, DeviceCannotSign) as e:
        raise SignerError(str(e), BAD_ARGUMENT) from None
    return {"psbt": encode_base64_psbt(psbt)}


def _signmessage(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    """HWI's signmessage: {"signature": base64}, Bitcoin Core's signmessage format (the device shows
    the text first)."""
    try:
        return {"signature": message.sign_message(client, parse_path(args.path), args.message, chain)}
    except message.MessageError as e:
        raise SignerError(str(e), BAD_ARGUMENT) from None


def _export(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    if args.format == "coldcard":
        return exports.coldcard(client, fingerprint, chain, args.account)
    if args.format == "descriptors":
        return exports.descriptors(client, fingerprint, chain, args.account)
    path = parse_path(args.path) if args.path else f"m/48h/{hwkeys.coin_type(chain)}h/{args.account}h/2h"
    label = args.label if args.label is not None else f"Quill {fingerprint}"
    try:
        return bsms.key_record(client, fingerprint, chain, path, label)
    except bsms.BsmsError as e:
        raise SignerError(str(e), BAD_ARGUMENT) from None


def _register(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    try:
        if args.bsms_record is None:
            return device_multisig.register(client, registration(args.desc, args.name, chain,
                                                                 device_network(chain)))
        body, address = bsms.read_descriptor_record(args.bsms_record)
        wallet = registration([body], args.name, chain, device_network(chain))
        bsms.check_descriptor_record(client, fingerprint, chain, wallet, body, address)
    except (RegistrationError, bsms.BsmsError) as e:
        raise SignerError(str(e), BAD_ARGUMENT) from None
    return device_multisig.register(client, wallet)


def _registered(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    return device_multisig.registered(client)


def _unregister(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    device_multisig.remove(client, args.name)
    return {"removed": args.name}


def _setchain(client: DeviceClient, fingerprint: str, chain: str, args: argparse.Namespace) -> Any:
    """The chain the device keeps for hosts that are not told one (its user confirms)."""
    client.call("set_chain", {"chain": args.new_chain}, awaits_user=True)
    return {"chain": args.new_chain}


_COMMANDS = {"setchain": _setchain, "getdescriptors": _getdescriptors, "getxpub": _getxpub,
             "displayaddress": _displayaddress, "getkeypool": _getkeypool, "signtx": _signtx,
             "signmessage": _signmessage, "export": _export, "register": _register,
             "registered": _registered, "unregister": _unregister}
