"""quill-signer: Bitcoin Core's external signer (doc/external-signer.md) for a
Quill device, so that `bitcoind -signer="quill-signer --device=PORT"` keeps a
wallet's keys on the device.

    quill-signer [--device=PORT] enumerate
    quill-signer [--device=PORT] --fingerprint=FP --chain=CHAIN getdescriptors --account N
    quill-signer [--device=PORT] --fingerprint=FP --chain=CHAIN displayaddress --desc DESC
    quill-signer [--device=PORT] --stdin --fingerprint=FP --chain=CHAIN   (stdin: signtx PSBT)
    quill-signer [--device=PORT] --chain=CHAIN register --desc DESC [--desc DESC] --name NAME
    quill-signer [--device=PORT] registered
    quill-signer [--device=PORT] unregister --name NAME

Answers are one JSON document on stdout, shaped as HWI's: a list of devices
for enumerate, {"receive": [...], "internal": [...]} for getdescriptors,
{"address": ...} for displayaddress, {"psbt": ...} for signtx, {"name": ...,
"address": <first receive address>} for register (a multisig wallet, shown on
the device and kept there: quill.signer.multisig; Core's protocol has no such
command), the registered wallets for registered, {"removed": NAME}, and
{"error": ..., "code": ...} when something fails (exit status 1).
--device is a serial port path or a pyserial URL; the default finds a
supported USB board as `quilld -device=auto` does. Core quotes some values
("73c5da0a"); the quotes are taken off.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from typing import Any

from quill.device import hwkeys
from quill.device import multisig as device_multisig
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.hwkeys import device_network
from quill.device.manager import find_board
from quill.signer.multisig import RegistrationError, registration
from quill.signing.errors import DeviceCannotSign
from quill.signing.psbt_own_keys import PsbtSigningError, sign_psbt_with_device
from quill.tx.psbt import PSBTError, decode_base64_psbt, encode_base64_psbt

CHAINS = ("main", "test", "testnet4", "signet", "regtest")
MODEL = "quill"

# HWI's error codes (hwilib.errors) for the failures an external signer reports
DEVICE_CONN_ERROR = -6
DEVICE_NOT_READY = -7
BAD_ARGUMENT = -8
NO_DEVICE_TYPE = -3
UNKNOWN_ERROR = -13


class SignerError(Exception):
    def __init__(self, message: str, code: int = UNKNOWN_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _unquote(value: str | None) -> str | None:
    if value is not None and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="quill-signer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", help="serial port path or pyserial URL (default: find a board)")
    parser.add_argument("--fingerprint", help="master key fingerprint of the device to use")
    parser.add_argument("--chain", default="main", help="main, test, testnet4, signet or regtest")
    parser.add_argument("--stdin", action="store_true", help="read the command from stdin")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("enumerate")
    descriptors = commands.add_parser("getdescriptors")
    descriptors.add_argument("--account", type=int, default=0)
    display = commands.add_parser("displayaddress")
    display.add_argument("--desc", required=True)
    sign = commands.add_parser("signtx")
    sign.add_argument("psbt")
    register = commands.add_parser("register")
    register.add_argument("--desc", required=True, action="append")
    register.add_argument("--name", required=True)
    commands.add_parser("registered")
    unregister = commands.add_parser("unregister")
    unregister.add_argument("--name", required=True)
    args = parser.parse_args(argv)
    if args.stdin:
        words = shlex.split(sys.stdin.read())
        args = parser.parse_args(argv + words)
    args.fingerprint = _unquote(args.fingerprint)
    args.chain = _unquote(args.chain)
    if args.chain not in CHAINS:
        parser.error(f"--chain must be one of {', '.join(CHAINS)}")
    if args.command is None:
        parser.error("a command is required: enumerate, getdescriptors, displayaddress, signtx, "
                     "register, registered or unregister")
    return args


def _port(args: argparse.Namespace) -> str:
    port = args.device or find_board()
    if not port:
        raise SignerError("No Quill device found", NO_DEVICE_TYPE)
    return port


def enumerate_devices(args: argparse.Namespace) -> list[dict[str, Any]]:
    port = args.device or find_board()
    if not port:
        return []
    entry: dict[str, Any] = {"type": MODEL, "model": MODEL, "label": None, "path": port,
                             "needs_pin_sent": False, "needs_passphrase_sent": False}
    try:
        with DeviceClient(port) as client:
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


def _open(args: argparse.Namespace) -> DeviceClient:
    client = DeviceClient(_port(args)).open()
    try:
        state = hwkeys.key_state(client.get_info())
        if state.state != "unlocked":
            raise SignerError(f"Device is {state.state}", DEVICE_NOT_READY)
        fingerprint = state.fingerprint or hwkeys.master_fingerprint(client)
        if args.fingerprint and fingerprint != args.fingerprint.lower():
            raise SignerError(f"No device with fingerprint {args.fingerprint}", DEVICE_CONN_ERROR)
    except BaseException:
        client.close()
        raise
    return client


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


def run(args: argparse.Namespace) -> Any:
    if args.command == "enumerate":
        return enumerate_devices(args)
    if args.command == "getdescriptors":
        if args.account < 0 or args.account >= hwkeys.HARDENED:
            raise SignerError("Account must be between 0 and 2^31 - 1", BAD_ARGUMENT)
        client = _open(args)
        try:
            return hwkeys.account_descriptors(client, args.chain, args.account)
        finally:
            client.close()
    if args.command == "displayaddress":
        client = _open(args)
        try:
            fingerprint = hwkeys.master_fingerprint(client)
            path, script_type = display_request(args.desc, fingerprint)
            result = client.call("display_address", {"path": path, "script_type": script_type,
                                                      "network": device_network(args.chain)},
                                 awaits_user=True)
            return {"address": result["address"]}
        finally:
            client.close()
    if args.command in ("register", "registered", "unregister"):
        return multisig_command(args)
    return sign_tx(args)


def multisig_command(args: argparse.Namespace) -> Any:
    if args.command == "register":
        try:
            wallet = registration(args.desc, args.name, args.chain, device_network(args.chain))
        except RegistrationError as e:
            raise SignerError(str(e), BAD_ARGUMENT) from None
    client = _open(args)
    try:
        if args.command == "register":
            return device_multisig.register(client, wallet)
        if args.command == "registered":
            return device_multisig.registered(client)
        device_multisig.remove(client, args.name)
        return {"removed": args.name}
    finally:
        client.close()


def sign_tx(args: argparse.Namespace) -> dict[str, str]:
    """HWI's signtx: the PSBT with the device's signatures added."""
    try:
        psbt = decode_base64_psbt(args.psbt)
    except PSBTError as e:
        raise SignerError(f"TX decode failed {e}", BAD_ARGUMENT) from None
    client = _open(args)
    try:
        fingerprint = bytes.fromhex(hwkeys.master_fingerprint(client))
        sign_psbt_with_device(client, client.get_info(), psbt, fingerprint,
                              device_network(args.chain))
    except (PsbtSigningError, DeviceCannotSign) as e:
        raise SignerError(str(e), BAD_ARGUMENT) from None
    finally:
        client.close()
    return {"psbt": encode_base64_psbt(psbt)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        result = run(args)
    except SignerError as e:
        result, status = {"error": e.message, "code": e.code}, 1
    except DeviceError as e:
        result, status = {"error": e.message, "code": UNKNOWN_ERROR}, 1
    except DeviceUnavailable as e:
        result, status = {"error": str(e), "code": DEVICE_CONN_ERROR}, 1
    else:
        status = 0
    if status:
        # Core's RunCommandParseJSON reports only stderr when a signer fails
        print(f"quill-signer: {result['error']}", file=sys.stderr)
    print(json.dumps(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
