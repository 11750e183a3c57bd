"""Bitcoin Core uses the Quill device as its external signer: the real bitcoind
runs `-signer="<venv>/bin/quill-signer --device=<pty>"` against quill-emu at the
smallest board's heap, started with the BIP39 test mnemonic.

The expected addresses come from Core itself, deriving from the master tprv of
the same mnemonic computed here with hashlib (no Quill code involved)."""
from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, VENV_BIN, EmulatedDevice, process_command_lines
from tests.kit.bitcoind import BitcoinD, CoreRPCError

FINGERPRINT = "73c5da0a"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _b58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n, text = int.from_bytes(data, "big"), ""
    while n:
        n, digit = divmod(n, 58)
        text = _B58[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text


def master_tprv(words: str) -> str:
    seed = hashlib.pbkdf2_hmac("sha512", words.encode(), b"mnemonic", 2048)
    digest = hmac.new(b"Bitcoin seed", seed, hashlib.sha512).digest()
    return _b58check(bytes.fromhex("04358394") + bytes(9) + digest[32:] + b"\0" + digest[:32])


def core_address(core: BitcoinD, descriptor: str) -> str:
    checksum = core.rpc("getdescriptorinfo", descriptor)["checksum"]
    return str(core.rpc("deriveaddresses", f"{descriptor}#{checksum}")[0])


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmulatedDevice, BitcoinD]]:
    work = tmp_path_factory.mktemp("signer")
    with EmulatedDevice(work / "emu", f"--test-mnemonic={TEST_MNEMONIC}", board=SMALLEST_BOARD) as device:
        signer = f"{VENV_BIN / 'quill-signer'} --device={device.port}"
        with BitcoinD(work / "core", f"-signer={signer}") as core:
            yield device, core


def signer(device: EmulatedDevice, *args: str) -> tuple[int, object]:
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={device.port}", *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout)


def test_enumeratesigners_lists_the_device(setup: tuple[EmulatedDevice, BitcoinD]) -> None:
    _, core = setup
    assert core.rpc("enumeratesigners") == {"signers": [{"fingerprint": FINGERPRINT, "name": "quill"}]}


def test_external_signer_wallet_gets_the_devices_addresses(
        setup: tuple[EmulatedDevice, BitcoinD]) -> None:
    device, core = setup
    created = core.rpc("createwallet", named={"wallet_name": "hw", "disable_private_keys": True,
                                              "descriptors": True, "external_signer": True})
    assert created["name"] == "hw"
    descriptors = core.rpc("listdescriptors", wallet="hw")["descriptors"]
    assert len(descriptors) == 8
    assert all(f"[{FINGERPRINT}/" in d["desc"] for d in descriptors)
    assert core.rpc("getwalletinfo", wallet="hw")["external_signer"] is True
    tprv = master_tprv(TEST_MNEMONIC)
    for address_type, template in (("bech32", "wpkh({}/84h/1h/0h/0/0)"),
                                   ("bech32m", "tr({}/86h/1h/0h/0/0)"),
                                   ("p2sh-segwit", "sh(wpkh({}/49h/1h/0h/0/0))"),
                                   ("legacy", "pkh({}/44h/1h/0h/0/0)")):
        got = core.rpc("getnewaddress", "", address_type, wallet="hw")
        assert got == core_address(core, template.format(tprv)), address_type
    change = core.rpc("getrawchangeaddress", "bech32", wallet="hw")
    assert change == core_address(core, f"wpkh({tprv}/84h/1h/0h/1/0)")
    # nothing of the mnemonic in Core's log or anyone's command line but quill-emu's own
    debug_log = (Path(core.datadir) / "regtest" / "debug.log").read_text(errors="replace")
    assert "abandon" not in debug_log
    ours = [line for line in process_command_lines()
            if (device.port in line or str(core.datadir) in line) and "quill-emu" not in line]
    assert any("quill-signer" in line for line in ours)   # Core's -signer command line
    assert all("abandon" not in line for line in ours)


def test_quill_signer_answers_as_hwi(setup: tuple[EmulatedDevice, BitcoinD]) -> None:
    device, _ = setup
    status, devices = signer(device, "enumerate")
    assert status == 0 and isinstance(devices, list) and devices[0]["fingerprint"] == FINGERPRINT
    assert devices[0]["path"] == device.port and devices[0]["needs_pin_sent"] is False
    # older Core quotes the fingerprint
    status, result = signer(device, '--fingerprint="73c5da0a"', "--chain", "regtest",
                            "getdescriptors", "--account", "1")
    assert status == 0 and isinstance(result, dict)
    assert [d.split("(")[0] for d in result["receive"]] == ["pkh", "sh", "wpkh", "tr"]
    assert all("/1h/1h]" in d and d.count("/0/*") == 1 for d in result["receive"])
    assert all(d.count("/1/*") == 1 for d in result["internal"])
    status, result = signer(device, "--fingerprint=00000000", "--chain=regtest", "getdescriptors")
    assert status == 1 and result == {"error": "No device with fingerprint 00000000", "code": -6}


def test_a_missing_device_is_a_clear_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-port")
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={missing}", "--chain=regtest",
                           "getdescriptors"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["code"] == -6 and "Cannot open device" in result["error"]


def test_core_reports_a_signer_that_fails(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-port"
    with BitcoinD(tmp_path / "core", f"-signer={VENV_BIN / 'quill-signer'} --device={missing}") as core:
        with pytest.raises(CoreRPCError) as e:
            core.rpc("enumeratesigners")
    assert e.value.code == -1 and "quill-signer" in str(e.value.message)
