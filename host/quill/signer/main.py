"""quill-signer: Bitcoin Core's external signer (doc/external-signer.md) for a
Quill device, so that `bitcoind -signer="quill-signer --device=PORT"` keeps a
wallet's keys on the device.

    quill-signer [--device=PORT] enumerate
    quill-signer [--device=PORT] --fingerprint=FP --chain=CHAIN getdescriptors --account N
    quill-signer [--device=PORT] --fingerprint=FP --chain=CHAIN displayaddress --desc DESC
    quill-signer [--device=PORT] --stdin --fingerprint=FP --chain=CHAIN   (stdin: signtx PSBT)

Answers are one JSON document on stdout, shaped as HWI's: a list of devices
for enumerate, {"receive": [...], "internal": [...]} for getdescriptors,
{"address": ...} for displayaddress, {"psbt": ...} for signtx, and
{"error": ..., "code": ...} when something fails (exit status 1).
--device is a serial port path or a pyserial URL; the default finds a
supported USB board as `quilld -device=auto` does. Core quotes some values
("73c5da0a"); the quotes are taken off.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from quill.device import hwkeys
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.manager import find_board

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
    args = parser.parse_args(argv)
    if args.stdin:
        words = shlex.split(sys.stdin.read())
        args = parser.parse_args(argv + words)
    args.fingerprint = _unquote(args.fingerprint)
    args.chain = _unquote(args.chain)
    if args.chain not in CHAINS:
        parser.error(f"--chain must be one of {', '.join(CHAINS)}")
    if args.command is None:
        parser.error("a command is required: enumerate, getdescriptors, displayaddress or signtx")
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
        raise SignerError("displayaddress is not supported yet", UNKNOWN_ERROR)
    raise SignerError("signtx is not supported yet: the device cannot sign PSBTs", UNKNOWN_ERROR)


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
    print(json.dumps(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
