"""Bitcoin Core spends with the Quill device as its external signer, end to end on
regtest: the real bitcoind runs `-signer="<venv>/bin/quill-signer --device=<pty>"`
against quill-emu started with the BIP39 test mnemonic and the test-only
confirmation channel, on PSBT_BOARD (below). Coins mined to the device's P2WPKH, P2TR, P2SH-P2WPKH and
P2PKH addresses are spent with `send` (with change) and `sendall`; the device
shows the recipient, change and fee on its channel before signing; Core
broadcasts and the transactions confirm. The device's signatures are the bytes
Core itself makes for the same PSBT with the same keys (a Core wallet holding
the mnemonic's tprv)."""
from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from quill.tx.psbt import decode_base64_psbt, encode_base64_psbt
from quill.tx.transaction import TxOut
from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, VENV_BIN, EmulatedDevice
from tests.keys.test_core_external_signer import FINGERPRINT, master_tprv
from tests.kit.bitcoind import BitcoinD
from tests.ui.screenkit import prompt_items

# The smallest board (97K), the firmware frozen as that board runs it (tests/keys/emulated.py).
PSBT_BOARD = SMALLEST_BOARD
ADDRESS_TYPES = ("bech32", "bech32m", "p2sh-segwit", "legacy")


class ChannelApprover:
    """Answers the emulator's confirmation channel (firmware/emulator_approval.py):
    approves every request and keeps the prompts it was shown."""

    def __init__(self, datadir: Path) -> None:
        self.datadir = datadir
        self.prompts: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        request = self.datadir / "confirm-request"
        while not self._stop.is_set():
            try:
                prompt = request.read_text().strip()
            except OSError:
                prompt = ""
            if prompt and not (self.datadir / "confirm-answer").exists():
                self.prompts.append(prompt)
                (self.datadir / "confirm-answer").write_text("approve\n")
                while request.exists() and not self._stop.is_set():
                    time.sleep(0.02)
            time.sleep(0.02)

    def __enter__(self) -> ChannelApprover:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmulatedDevice, BitcoinD, ChannelApprover]]:
    work = tmp_path_factory.mktemp("send")
    with EmulatedDevice(work / "emu", f"--test-mnemonic={TEST_MNEMONIC}", "--approve=channel",
                        board=PSBT_BOARD) as device:
        signer = f"{VENV_BIN / 'quill-signer'} --device={device.port}"
        with BitcoinD(work / "core", f"-signer={signer}") as core, ChannelApprover(device.datadir) as approver:
            core.rpc("createwallet", named={"wallet_name": "hw", "disable_private_keys": True,
                                            "descriptors": True, "external_signer": True})
            core.rpc("createwallet", "miner")
            mined_to = core.rpc("getnewaddress", wallet="miner")
            core.rpc("generatetoaddress", 101, mined_to)
            yield device, core, approver


def _fund(core: BitcoinD) -> list[str]:
    addresses = [core.rpc("getnewaddress", "", kind, wallet="hw") for kind in ADDRESS_TYPES]
    core.rpc("sendmany", "", {a: 1 for a in addresses}, wallet="miner")
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))
    return addresses


def test_core_sends_with_change_and_sendall_through_the_device(
        setup: tuple[EmulatedDevice, BitcoinD, ChannelApprover]) -> None:
    device, core, approver = setup
    _fund(core)
    assert core.rpc("getbalances", wallet="hw")["mine"]["trusted"] == Decimal(4)
    to = core.rpc("getnewaddress", "", "bech32", wallet="miner")
    sent = core.rpc("send", {to: Decimal("0.5")}, wallet="hw")
    assert sent["complete"] is True
    # the review (issue 26): each output as Core decodes the transaction, the change (the
    # device derived it from the PSBT's BIP32 path) marked, and the fee
    items = prompt_items(approver.prompts[-1])
    tx = core.rpc("getrawtransaction", sent["txid"], True)
    fee = core.rpc("gettransaction", sent["txid"], wallet="hw")["fee"]
    want = [f"{'Output' if out['scriptPubKey']['address'] == to else 'Change'} {out['n'] + 1} of 2: "
            f"{out['scriptPubKey']['address']} {out['value']:.8f} BTC" for out in tx["vout"]]
    assert items[:3] == want + [f"Fee: {-fee:.8f} BTC"] and sum("Change" in w for w in want) == 1
    core.rpc("generatetoaddress", 1, to)
    assert core.rpc("gettransaction", sent["txid"], wallet="hw")["confirmations"] == 1
    assert len(tx["vout"]) == 2
    # everything left, every input type at once
    swept = core.rpc("sendall", [to], wallet="hw")
    assert swept["complete"] is True
    tx = core.rpc("getrawtransaction", swept["txid"], True)
    assert len(tx["vin"]) == 4
    core.rpc("generatetoaddress", 1, to)
    assert core.rpc("gettransaction", swept["txid"], wallet="hw")["confirmations"] == 1
    assert core.rpc("getbalances", wallet="hw")["mine"]["trusted"] == 0
    # no word of the mnemonic and no private key in the device's or Core's log
    core_log = (Path(core.datadir) / "regtest" / "debug.log").read_text(errors="replace")
    for log in (device.log(), core_log):
        assert "abandon abandon" not in log and "tprv" not in log and "xprv" not in log


def test_device_signatures_are_cores_for_the_same_psbt(
        setup: tuple[EmulatedDevice, BitcoinD, ChannelApprover]) -> None:
    device, core, _ = setup
    _fund(core)
    to = core.rpc("getnewaddress", "", "bech32", wallet="miner")
    funded = core.rpc("walletcreatefundedpsbt", [], {to: Decimal("3.9")}, 0,
                      {"add_inputs": True, "include_unsafe": False}, wallet="hw")
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={device.port}",
                           f"--fingerprint={FINGERPRINT}", "--chain=regtest", "signtx", funded["psbt"]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ours = decode_base64_psbt(json.loads(proc.stdout)["psbt"])
    # Core with the mnemonic's keys signs the same PSBT
    tprv = master_tprv(TEST_MNEMONIC)
    core.rpc("createwallet", named={"wallet_name": "keys", "blank": True})
    descriptors = []
    for template in ("pkh({}/44h/1h/0h/{}/*)", "sh(wpkh({}/49h/1h/0h/{}/*))",
                     "wpkh({}/84h/1h/0h/{}/*)", "tr({}/86h/1h/0h/{}/*)"):
        for chain in (0, 1):
            desc = template.format(tprv, chain)
            checksum = core.rpc("getdescriptorinfo", desc)["checksum"]
            descriptors.append({"desc": f"{desc}#{checksum}", "timestamp": "now", "range": [0, 20],
                                "internal": chain == 1, "active": True})
    assert all(r["success"] for r in core.rpc("importdescriptors", descriptors, wallet="keys"))
    signed = core.rpc("walletprocesspsbt", funded["psbt"], True, "DEFAULT", True, False, wallet="keys")
    theirs = decode_base64_psbt(signed["psbt"])
    assert len(ours.inputs) == 4
    for mine, core_input in zip(ours.inputs, theirs.inputs, strict=True):
        assert mine.partial_sigs or mine.tap_key_sig
        assert mine.partial_sigs == core_input.partial_sigs
        assert mine.tap_key_sig == core_input.tap_key_sig
    final = core.rpc("finalizepsbt", json.loads(proc.stdout)["psbt"])
    assert final["complete"] is True
    assert core.rpc("testmempoolaccept", [final["hex"]])[0]["allowed"] is True
    # the same PSBT as BIP370 version 2: the same signatures
    v2 = decode_base64_psbt(funded["psbt"])
    v2.version, v2.fallback_locktime = 2, v2.unsigned_tx().locktime
    for part in (*v2.inputs, *v2.outputs):
        part.version = 2
    status, result = _signtx(device, encode_base64_psbt(v2))
    assert status == 0
    signed_v2 = decode_base64_psbt(str(result["psbt"]))
    assert signed_v2.psbt_version == 2
    assert [(i.partial_sigs, i.tap_key_sig) for i in signed_v2.inputs] == \
        [(i.partial_sigs, i.tap_key_sig) for i in ours.inputs]


def test_walletdisplayaddress_shows_the_address_on_the_device(
        setup: tuple[EmulatedDevice, BitcoinD, ChannelApprover]) -> None:
    _, core, approver = setup
    for kind in ADDRESS_TYPES:
        address = core.rpc("getnewaddress", "", kind, wallet="hw")
        assert core.rpc("walletdisplayaddress", address, wallet="hw") == {"address": address}
        assert prompt_items(approver.prompts[-1])[0] == "Address: " + address   # the address screen
    device = setup[0]
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={device.port}", "--chain=regtest",
                           "displayaddress", "--desc", "wpkh([00000000/84h/1h/0h/0/0]02" + "11" * 32 + ")"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"error": "Descriptor key is not this device's", "code": -8}


def _signtx(device: EmulatedDevice, psbt: str) -> tuple[int, dict[str, object]]:
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={device.port}",
                           f"--fingerprint={FINGERPRINT}", "--chain=regtest", "signtx", psbt],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, json.loads(proc.stdout)


def test_unproven_amounts_and_mismatched_utxos_are_refused(
        setup: tuple[EmulatedDevice, BitcoinD, ChannelApprover]) -> None:
    device, core, _ = setup
    address = core.rpc("getnewaddress", "", "bech32", wallet="hw")
    core.rpc("sendtoaddress", address, 1, wallet="miner")
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))
    utxo = next(u for u in core.rpc("listunspent", wallet="hw") if u["address"] == address)
    to = core.rpc("getnewaddress", "", "bech32", wallet="miner")
    funded = core.rpc("walletcreatefundedpsbt", [{"txid": utxo["txid"], "vout": utxo["vout"]}],
                      {to: Decimal("0.5")}, 0, {"add_inputs": False}, wallet="hw")["psbt"]
    # a P2WPKH input without its previous transaction: the device refuses to sign (BIP143 fee attack)
    psbt = decode_base64_psbt(funded)
    psbt.inputs[0].non_witness_utxo = None
    status, result = _signtx(device, encode_base64_psbt(psbt))
    assert status == 1 and result["error"] == "amounts unproven: 1 inputs without their previous transaction"
    # a witness UTXO whose amount is not its previous transaction's output's: refused on the host
    psbt = decode_base64_psbt(funded)
    witness_utxo = psbt.inputs[0].witness_utxo
    assert witness_utxo is not None
    psbt.inputs[0].witness_utxo = TxOut(witness_utxo.value - 1, witness_utxo.script_pubkey)
    status, result = _signtx(device, encode_base64_psbt(psbt))
    assert status == 1 and "witness UTXO differs" in str(result["error"])
    # the untouched PSBT signs: the refusals left no state behind
    status, result = _signtx(device, funded)
    assert status == 0 and decode_base64_psbt(str(result["psbt"])).inputs[0].partial_sigs
