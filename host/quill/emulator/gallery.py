"""The screen gallery (`make screens`, issue 26): every flow that asks the user, driven
on quill-emu through its debug link (debug_layout, debug_press) as a user pressing
the buttons would, on each panel; every screen drawn is kept as the emulator writes
it (DIR/<panel>/<sequence>-<screen>.png and .txt) and listed in DIR/index.html.

    python -m quill.emulator.gallery [--out build/screens] [--check tests/ui/fixtures/screens.json]
                                     [--accept]

A screen wider than its panel makes the device refuse the request (quillfw.ui.display:
"overflow"), which fails the run. --check compares each deterministic screen (the
address check, the transaction review, the multisig registration, the policy change)
with the fixtures: its text exactly, its picture by SHA-256; --accept writes the
fixtures from this run instead (for an intended change). The seed's and the PIN's
screens change with every run (random words, random checks): they are shown, and
checked for their shape only.
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.emulator.launcher import DISPLAYS, Emulator, confirmation_options

PANELS = [d for d in DISPLAYS if d != "none"]
HEAP = "256K"               # the firmware run in place from ROMFS, with room for every flow beside the display
MNEMONIC = "abandon " * 11 + "about"
PIN = "2580"
RANDOM_SCREENS = ("seed-words", "seed-check", "pin")
# BIP32 test vector 1's master seed and an all-ones one: the other two cosigners
COSIGNER_SEEDS = (bytes.fromhex("000102030405060708090a0b0c0d0e0f"), bytes(range(1, 33)))
ACCOUNT = "m/48h/1h/0h/2h"


class GalleryError(RuntimeError):
    pass


def _wait_asking(client: DeviceClient, worker: threading.Thread, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not worker.is_alive():
            return False
        if client.ping() == "awaiting_user":
            return True
        time.sleep(0.05)
    raise GalleryError("the device never asked")


def _press(client: DeviceClient, button: str) -> None:
    client.out_of_band("debug_press", {"button": button})


def _layout(client: DeviceClient) -> dict[str, Any]:
    layout = client.out_of_band("debug_layout")
    if not isinstance(layout, dict):
        raise GalleryError("the device shows no screen")
    return layout


def _newest_text(folder: Path) -> list[str]:
    texts = sorted(folder.glob("[0-9]*.txt"))
    return texts[-1].read_text().splitlines() if texts else []


def _user(client: DeviceClient, folder: Path, worker: threading.Thread, words: list[str]) -> None:
    """Answer every question the device asks while `worker` runs, as its user."""
    while _wait_asking(client, worker):
        layout = _layout(client)
        page, pages = layout["page"], layout["pages"]
        name = layout["name"]
        if name == "seed-words":
            words[:] = [line.split(". ", 1)[1] for line in _newest_text(folder)[1:]]
        if name == "seed-check":
            title, choice = _newest_text(folder)[:2]
            position = int(title.split()[1])
            _press(client, "approve" if choice.removeprefix("Is it: ") == words[position - 1] else "next")
        elif name == "pin":
            for button in _pin_presses(PIN):
                _press(client, button)
            worker.join(120)
            return
        else:
            _press(client, "next" if page + 1 < pages else "approve")
        time.sleep(0.15)


def _pin_presses(pin: str) -> list[str]:
    out: list[str] = []
    for digit in pin:
        out += ["next"] * int(digit) + ["approve"]
    return out + ["prev", "prev", "approve"]


def _asking(client: DeviceClient, folder: Path, method: str, params: dict[str, Any],
            words: list[str] | None = None, refuse: bool = False) -> Any:
    """A request that asks the user, answered through the debug link (refuse: with the
    reject button, and the device's refusal is the expected answer)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = client.call(method, params, awaits_user=True)
        except DeviceError as e:
            result["error"] = e
    worker = threading.Thread(target=run)
    worker.start()
    if refuse:
        _wait_asking(client, worker)
        _press(client, "reject")
    else:
        _user(client, folder, worker, [] if words is None else words)
    worker.join(120)
    if refuse:
        if "error" not in result:
            raise GalleryError(f"{method}: not refused")
        return None
    if "error" in result:
        raise GalleryError(f"{method}: {result['error']}")
    return result.get("value")


def _review(client: DeviceClient, folder: Path) -> None:
    """A transaction (sign_* methods, one P2WPKH input) paying five kinds of output."""
    from quill.tx import script as S
    from quillfw.crypto.hashes import hash160
    from quillfw.crypto.secp256k1 import pubkey_from_secret
    secret = bytes(range(1, 33))
    keyhash = hash160(pubkey_from_secret(secret))
    spk = S.p2wpkh(keyhash)
    outputs = [[150_000, S.p2wpkh(bytes(range(20)))], [40_000, S.p2pkh(bytes(range(20, 40)))],
               [30_000, S.p2tr(bytes(range(32)))], [0, bytes([S.OP_RETURN]) + S.push_data(b"hello")],
               [70_000, S.p2wsh(bytes(range(32, 64)))]]
    client.call("sign_begin", {"version": 2, "locktime": 0, "n_inputs": 1, "n_outputs": len(outputs),
                               "algorithms": ["segwit_v0"], "network": "regtest"})
    client.call("sign_add_key", {"secret": secret})
    txin = [bytes(32), 0, 0xFFFFFFFD, 291_000, spk]
    tokens = client.call("sign_add_inputs", {"inputs": [txin]})
    client.call("sign_add_outputs", {"outputs": outputs})
    _asking(client, folder, "sign_segwit_v0", {
        "input_index": 0, "txin": txin, "txin_token": tokens[0],
        "script_code": S.p2pkh(keyhash), "hash_type": 1, "key_index": 0})
    client.call("sign_abort")


def _multisig(client: DeviceClient, folder: Path) -> None:
    from quillfw.keys.bip32 import TPUB, master_node, parse_path
    own = client.call("get_xpub", {"path": ACCOUNT, "network": "test"})
    signers = [[own["fingerprint"], ACCOUNT, own["xpub"]]]
    for seed in COSIGNER_SEEDS:
        node = master_node(seed)
        fingerprint = node.fingerprint()
        for index in parse_path(ACCOUNT):
            node = node.child(index)
        signers.append([fingerprint, ACCOUNT, node.xpub(TPUB)])
    _asking(client, folder, "multisig_register", {"name": "vault", "script_type": "p2wsh",
                                                  "sorted": True, "threshold": 2,
                                                  "signers": signers, "network": "regtest"})


def _flows(client: DeviceClient, folder: Path) -> None:
    address = {"path": "m/84h/1h/0h/0/0", "script_type": "p2wpkh", "network": "regtest"}
    _asking(client, folder, "display_address", address)
    _asking(client, folder, "display_address", address, refuse=True)     # the error screen
    _review(client, folder)
    _multisig(client, folder)
    _asking(client, folder, "set_confirm_policy", {"policy": "never"})
    _asking(client, folder, "wipe", {})
    words: list[str] = []
    _asking(client, folder, "seed_generate", {"words": 12, "pin": PIN}, words)
    client.call("lock")
    _asking(client, folder, "unlock", {})


def render(out: Path) -> dict[str, list[Path]]:
    """Run every flow on every panel; the screens per panel."""
    drawn: dict[str, list[Path]] = {}
    for panel in PANELS:
        folder = out / panel
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        datadir = Path(tempfile.mkdtemp(prefix="quill-gallery-"))
        try:
            _provision(datadir)
            options = confirmation_options("channel", datadir) + [
                "--keys", "--display", panel, "--screen-dir", str(folder)]
            with Emulator(HEAP, confirmation=options, crypto="python", firmware="romfs") as emulator, \
                    DeviceClient(emulator.port, short_timeout=60) as client:
                _flows(client, folder)
        finally:
            shutil.rmtree(datadir, ignore_errors=True)
        drawn[panel] = sorted(folder.glob("[0-9]*.png"))
    return drawn


def _provision(datadir: Path) -> None:
    from quill.emulator.main import write_test_seed
    write_test_seed(str(datadir), MNEMONIC)


def write_index(out: Path, drawn: dict[str, list[Path]]) -> Path:
    parts = ["<!doctype html><meta charset=utf-8><title>Quill screens</title>",
             "<style>body{font-family:sans-serif;background:#222;color:#ddd}figure{display:inline-block;"
             "margin:8px;vertical-align:top}img{image-rendering:pixelated;border:1px solid #555}"
             "figcaption{max-width:260px;font-size:11px;white-space:pre-wrap}</style>",
             "<h1>Quill's screens</h1>"]
    for panel, pictures in drawn.items():
        parts.append(f"<h2>{html.escape(panel)}</h2>")
        for png in pictures:
            text = png.with_suffix(".txt").read_text()
            parts.append(f"<figure><img src='{panel}/{png.name}' alt='{html.escape(png.stem)}'>"
                         f"<figcaption>{html.escape(png.stem)}\n{html.escape(text)}</figcaption></figure>")
    index = out / "index.html"
    index.write_text("\n".join(parts) + "\n")
    return index


def fixtures(drawn: dict[str, list[Path]]) -> dict[str, dict[str, Any]]:
    """{panel: {screen file: {sha256, text}}} of the deterministic screens."""
    table: dict[str, dict[str, Any]] = {}
    for panel, pictures in drawn.items():
        table[panel] = {}
        for png in pictures:
            if png.stem[7:] in RANDOM_SCREENS:
                continue
            table[panel][png.name] = {"sha256": hashlib.sha256(png.read_bytes()).hexdigest(),
                                      "text": png.with_suffix(".txt").read_text().splitlines()}
    return table


def compare(found: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    for panel in sorted(set(found) | set(expected)):
        mine, theirs = found.get(panel, {}), expected.get(panel, {})
        for name in sorted(set(mine) | set(theirs)):
            if name not in mine or name not in theirs:
                problems.append(f"{panel}/{name}: {'new' if name in mine else 'missing'}")
            elif mine[name]["text"] != theirs[name]["text"]:
                problems.append(f"{panel}/{name}: text differs")
            elif mine[name]["sha256"] != theirs[name]["sha256"]:
                problems.append(f"{panel}/{name}: picture differs")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quill.emulator.gallery", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/screens")
    parser.add_argument("--check", help="compare with this fixtures file")
    parser.add_argument("--accept", action="store_true", help="write the fixtures file (--check's) instead")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    try:
        drawn = render(out)
    except (GalleryError, DeviceError, RuntimeError) as e:
        print(f"screens: {e}", file=sys.stderr)
        return 1
    index = write_index(out, drawn)
    print(f"screens: {sum(len(p) for p in drawn.values())} screens, {index}")
    if args.check:
        table = fixtures(drawn)
        if args.accept:
            Path(args.check).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
            print(f"screens: fixtures written to {args.check}")
            return 0
        problems = compare(table, json.loads(Path(args.check).read_text()))
        for problem in problems:
            print(f"screens: {problem}", file=sys.stderr)
        if problems:
            print("screens: if the change is intended: make screens-accept", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
