"""Specter Desktop 2.1 with keys that stay on Quill devices (issue 25), through Specter's own
classes (tests/clients/specter_driver.py, in Specter's virtual environment), without a browser:
quilld holds device A (-device=<pty>) and Specter uses quilld as its node; B and C are two more
emulated devices. Every key Specter gets comes from a file the device exported, with no edit:

- a single-sig wallet from A's Coldcard generic JSON (`quill-signer --bridge export
  --format=coldcard`), its `bip84` section as Specter's file upload reads it (Specter's
  new_device_keys page: `[<xfp><deriv without m>]<_pub, else xpub>`), parsed by Specter's Key;
- a 2-of-3 P2WSH multisig from the three devices' files' `bip48_2` sections, registered on each
  device with the descriptors Specter made (`register --desc`, A through the bridge).

Each wallet is paid on quilld's chain; Specter builds the spend, the devices sign it from PSBT
files (`signtx --in/--out`), Specter combines, finalizes and broadcasts, and the spend confirms.
Not done here: Specter's web pages in a real browser, and their screenshots."""
from __future__ import annotations

import base64
import contextlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.clients.specter_env import specter_python
from tests.clients.test_specter import Specter, sats
from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, VENV_BIN, EmulatedDevice
from tests.kit.rpc_daemon import QuillDaemon

USER, PASSWORD = "specter", "keys"
MNEMONICS = (TEST_MNEMONIC, "zoo " * 11 + "wrong",
             "legal winner thank year wave sausage worth useful legal winner thank yellow")
ELSEWHERE = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"


def run_signer(where: str, *args: str) -> Any:
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), where, "--chain=regtest", *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


def specter_key(export: dict[str, Any], section: str) -> str:
    """A key line as Specter's file upload takes it from a Coldcard generic JSON."""
    entry = export[section]
    return f"[{export['xfp']}{entry['deriv'][1:]}]{entry.get('_pub', entry['xpub'])}"


@dataclass
class Scene:
    quilld: QuillDaemon
    specter: Specter
    where: list[str]            # quill-signer's device option for A (the bridge), B and C
    exports: list[dict[str, Any]]
    work: Path

    def sign(self, device: int, psbt: str, name: str) -> str:
        """The device signs the PSBT file Specter's send page offers; the signed file's base64."""
        unsigned, signed = self.work / f"{name}-{device}.psbt", self.work / f"{name}-{device}-signed.psbt"
        unsigned.write_bytes(base64.b64decode(psbt))
        run_signer(self.where[device], "signtx", "--in", str(unsigned), "--out", str(signed))
        return base64.b64encode(signed.read_bytes()).decode()

    def pay(self, address: str) -> None:
        self.quilld.rpc("generatetoaddress", 1, address)
        self.quilld.rpc("generatetoaddress", 100, ELSEWHERE)


@contextlib.contextmanager
def devices_behind_quilld(work: Path) -> Iterator[tuple[QuillDaemon, list[str]]]:
    """Three emulated devices (MNEMONICS), A held by a quilld: (quilld, quill-signer's way to
    each: A through quilld's bridge, B and C by their ports)."""
    devices = [EmulatedDevice(work / f"emu{i}", f"--test-mnemonic={words}", board=SMALLEST_BOARD)
               for i, words in enumerate(MNEMONICS)]
    for device in devices:
        device.start()
    try:
        with QuillDaemon(work / "quilld", f"-device={devices[0].port}", f"-rpcuser={USER}",
                         f"-rpcpassword={PASSWORD}") as quilld:
            bridge = f"--bridge=http://{USER}:{PASSWORD}@127.0.0.1:{quilld.port}"
            yield quilld, [bridge] + [f"--device={d.port}" for d in devices[1:]]
    finally:
        for device in devices:
            device.stop()


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    python = specter_python()
    work = tmp_path_factory.mktemp("specter-keyfiles")
    with devices_behind_quilld(work) as (quilld, where):
        exports = []
        for i, option in enumerate(where):
            out = work / f"coldcard-{i}.json"
            assert run_signer(option, "export", "--format=coldcard", "--out", str(out)) == {"file": str(out)}
            exports.append(json.loads(out.read_text()))
        specter = Specter(python, work / "specter-data")
        try:
            connected = specter.call("connect", host="127.0.0.1", port=quilld.port, user=USER,
                                     password=PASSWORD)
            assert connected["test_rpc"]["tests"]["connectable"] is True
            yield Scene(quilld, specter, where, exports, work)
        finally:
            specter.close()


def test_single_sig_wallet_from_the_coldcard_file(scene: Scene) -> None:
    key = specter_key(scene.exports[0], "bip84")
    wallet = scene.specter.call("create_wallet", name="quill", sigs_required=1, key_type="wpkh", xpubs=[key])
    # Specter's addresses are the device's: it shows the first one, from its own path
    first = run_signer(scene.where[0], "displayaddress", "--path", "m/84h/1h/0h/0/0")["address"]
    assert wallet["addresses"][0] == first == scene.exports[0]["bip84"]["first"]
    scene.pay(wallet["addresses"][0])
    assert sats(scene.specter.call("balance", name="quill")["amount_total"]) == 50 * 100_000_000
    built = scene.specter.call("createpsbt", name="quill", address=ELSEWHERE, amount=1.5, fee_rate=2,
                               selected_coins=[])
    sent = scene.specter.call("send_signed", name="quill", txid=built["txid"],
                              signed=[scene.sign(0, built["psbt"], "single")])
    assert sent["complete"] is True and sent["accepted"]["allowed"] is True and sent["pending"] == []
    scene.quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    report = scene.specter.call("report", name="quill")
    spend = next(tx for tx in report["txlist"] if tx["txid"] == sent["sent"])
    assert spend["category"] == "send" and spend["confirmations"] == 1


def test_two_of_three_multisig_from_the_devices_files(scene: Scene) -> None:
    keys = [specter_key(export, "bip48_2") for export in scene.exports]
    wallet = scene.specter.call("create_wallet", name="vault", sigs_required=2, key_type="wsh", xpubs=keys)
    # each device keeps the policy Specter made, as Specter wrote it, and shows its first address
    for option in scene.where:
        registered = run_signer(option, "register", "--desc", wallet["recv_descriptor"],
                                "--desc", wallet["change_descriptor"], "--name", "vault")
        assert registered == {"name": "vault", "address": wallet["addresses"][0]}
    scene.pay(wallet["addresses"][0])
    built = scene.specter.call("createpsbt", name="vault", address=ELSEWHERE, amount=2.25, fee_rate=3,
                               selected_coins=[])
    signed = [scene.sign(0, built["psbt"], "vault"), scene.sign(2, built["psbt"], "vault")]
    sent = scene.specter.call("send_signed", name="vault", txid=built["txid"], signed=signed)
    assert sent["complete"] is True and sent["accepted"]["allowed"] is True
    scene.quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    tx = scene.quilld.rpc("getrawtransaction", sent["sent"], True)
    assert tx["confirmations"] == 1
    assert ELSEWHERE in [out["scriptPubKey"].get("address") for out in tx["vout"]
                         if Decimal(str(out["value"])) == Decimal("2.25")]
