"""quill-signer: Bitcoin Core's external signer (doc/external-signer.md) and an HWI-style tool
for a Quill device, so that `bitcoind -signer="quill-signer --device=PORT"` keeps a wallet's
keys on the device, and desktop wallets get its keys as files.

    quill-signer [--device=PORT | --bridge[=URL]] [--fingerprint=FP] [--chain=CHAIN] COMMAND
      enumerate
      getdescriptors [--account N]
      getxpub PATH                                     {"xpub": ...}
      displayaddress (--desc DESC | --path PATH [--addr-type legacy|wit|sh_wit|tap])
      getkeypool [--keypool|--nokeypool] [--internal] [--addr-type T | --all] [--account N]
                 [--path PATH/*] START END             importdescriptors requests, as HWI
      signtx [PSBT] [--in FILE] [--out FILE]           FILE: binary or base64
      signmessage MESSAGE PATH                         {"signature": ...}, Core's signmessage form
      export --format=coldcard|bsms|descriptors [--account N] [--path P] [--label L] [--out FILE]
      register (--desc DESC [--desc DESC] | --bsms RECORD_FILE) --name NAME
      registered
      unregister --name NAME
      setchain CHAIN                                   the device keeps it: --chain's default
    quill-signer ... --stdin    (the command on stdin, as Core sends `signtx <psbt>`)

--device is a serial port path or a pyserial URL (the default finds a supported USB board as
`quilld -device=auto` does); --bridge asks a running quilld for the device it holds
(quill.signer.bridge), so one board serves quilld and other programs. --chain, when not given,
is quilld's chain through the bridge, else the one the device keeps (setchain), else main.
Answers are one JSON document on stdout, shaped as HWI's (quill.signer.commands), or the
export's file; {"error": ..., "code": ...} when something fails (exit status 1).
"""
from __future__ import annotations

import argparse
import base64
import binascii
import json
import shlex
import sys
from typing import Any

from quill.device.manager import find_board
from quill.signer import bridge, commands
from quill.signer.errors import BAD_ARGUMENT, NO_DEVICE_TYPE, SignerError

PSBT_MAGIC = b"psbt\xff"


def parse_args(argv: list[str]) -> argparse.Namespace:
    # a bare --bridge takes no value: the word after it is the command (Core appends `enumerate`)
    argv = ["--bridge=" if word == "--bridge" else word for word in argv]
    parser = commands.build_parser(local=True)
    parser.description = (__doc__ or "").split("\n\n")[0]
    args = parser.parse_args(argv)
    if args.stdin:
        args = parser.parse_args(argv + shlex.split(sys.stdin.read()))
    if args.device is not None and args.bridge is not None:
        parser.error("give --device or --bridge, not both")
    try:
        commands.check_args(args)
    except SignerError as e:
        parser.error(e.message)
    return args


def read_files(args: argparse.Namespace) -> bool | None:
    """Put the files the command names into its arguments; True when signtx's PSBT came as
    binary (the signed one is written the same way), None without --in."""
    if args.command == "register" and args.bsms:
        args.bsms_record = _read_text(args.bsms)
    if args.command != "signtx":
        return None
    if (args.psbt is None) == (args.infile is None):
        raise SignerError("signtx takes a PSBT or --in FILE", BAD_ARGUMENT)
    if args.infile is None:
        return None
    data = _read_bytes(args.infile)
    if data.startswith(PSBT_MAGIC):
        args.psbt = base64.b64encode(data).decode()
        return True
    args.psbt = data.decode(errors="replace").strip()
    return False


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise SignerError(f"Cannot read {path}: {e.strerror}", BAD_ARGUMENT) from None


def _read_text(path: str) -> str:
    return _read_bytes(path).decode(errors="replace")


def _write(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise SignerError(f"Cannot write {path}: {e.strerror}", BAD_ARGUMENT) from None


def write_files(args: argparse.Namespace, answer: Any, binary: bool | None) -> Any:
    """Write --out; the answer printed then (signtx: still {"psbt"}, export: {"file"})."""
    outfile = getattr(args, "outfile", None)
    if outfile is None:
        return answer
    if args.command == "signtx":
        signed = str(answer["psbt"])
        _write(outfile, binascii.a2b_base64(signed) if binary is not False else signed.encode() + b"\n")
        return answer
    text = answer if isinstance(answer, str) else json.dumps(answer, indent=4) + "\n"
    _write(outfile, text.encode())
    return {"file": outfile}


def run(args: argparse.Namespace) -> tuple[int, Any]:
    binary = read_files(args)
    if args.bridge is not None:
        status, answer = bridge.connect(args.bridge, args.chain, args.datadir).run(commands.remote_argv(args))
    else:
        port = args.device or find_board()
        if not port:
            if args.command == "enumerate":
                return 0, []
            raise SignerError("No Quill device found", NO_DEVICE_TYPE)
        status, answer = commands.execute(args, commands.PortLink(port))
    return status, (write_files(args, answer, binary) if status == 0 else answer)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        status, result = run(args)
    except SignerError as e:
        status, result = 1, {"error": e.message, "code": e.code}
    if status:
        # Core's RunCommandParseJSON reports only stderr when a signer fails
        print(f"quill-signer: {result['error']}", file=sys.stderr)
    if isinstance(result, str):
        sys.stdout.write(result)
    else:
        print(json.dumps(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
