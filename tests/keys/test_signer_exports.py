"""The key files quill-signer exports (issue 25), checked against their published forms with
parsers that are not Quill's: embit (the library Specter Desktop is built on) reads the keys,
SLIP-132 keys and descriptors, the real Bitcoin Core derives the addresses, imports the
descriptors and verifies the BIP129 record's signature (verifymessage); the expected keys come
from the test mnemonic through embit, never through the device.

- `export --format=coldcard`: Coldcard's Generic JSON (Coldcard firmware, docs/generic-wallet-export.md
  and its testing/test_export.py checks): field names and order, chain XRT, each section's own
  fingerprint, SLIP-132 `_pub`, `first` = the /0/0 address, multipath single-key `desc`.
- `export --format=descriptors`: both branches (`/<0;1>/*`), imported by Core as they are.
- `export --format=bsms` (BIP129 round 1) and `register --bsms` (round 2, with a coordinator's
  descriptor record written here as BIP129 and Coinkite's reference implementation write it).
"""
from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from embit.bip32 import HDKey
from embit.descriptor import Descriptor
from embit.networks import NETWORKS

from tests.keys.emulated import TEST_MNEMONIC, VENV_BIN, EmulatedDevice
from tests.keys.test_core_external_signer import FINGERPRINT, core_address, master_tprv
from tests.kit.bitcoind import BitcoinD

REGTEST = NETWORKS["regtest"]
# Coldcard's example (docs/generic-wallet-export.md), in its order
TOP_FIELDS = ["chain", "xfp", "account", "xpub", "bip44", "bip49", "bip84", "bip86", "bip48_1", "bip48_2", "bip45"]
SECTIONS = {  # name, deriv below m/, SLIP-132 prefix (test networks) or None
    "bip44": ("p2pkh", "44h/1h/0h", None), "bip49": ("p2sh-p2wpkh", "49h/1h/0h", "upub"),
    "bip84": ("p2wpkh", "84h/1h/0h", "vpub"), "bip86": ("p2tr", "86h/1h/0h", None),
    "bip48_1": ("p2sh-p2wsh", "48h/1h/0h/1h", "Upub"), "bip48_2": ("p2wsh", "48h/1h/0h/2h", "Vpub"),
    "bip45": ("p2sh", "45h", None),
}
TEMPLATES = {"bip44": "pkh({})", "bip49": "sh(wpkh({}))", "bip84": "wpkh({})", "bip86": "tr({})"}


def _root(words: str) -> HDKey:
    seed = hashlib.pbkdf2_hmac("sha512", words.encode(), b"mnemonic", 2048)
    return HDKey.from_seed(seed, version=REGTEST["xprv"])


ROOT = _root(TEST_MNEMONIC)
COSIGNER = _root("zoo " * 11 + "wrong")


def account_xpub(root: HDKey, deriv: str) -> str:
    return str(root.derive("m/" + deriv).to_public().to_string(version=REGTEST["xpub"]))


def key_expression(root: HDKey, deriv: str) -> str:
    return f"[{root.my_fingerprint.hex()}/{deriv}]{account_xpub(root, deriv)}"


@dataclass
class Setup:
    device: EmulatedDevice
    core: BitcoinD

    def signer(self, *args: str) -> tuple[int, Any]:
        proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={self.device.port}", "--chain=regtest",
                               *args], capture_output=True, text=True, timeout=180)
        try:
            return proc.returncode, json.loads(proc.stdout)
        except ValueError:
            return proc.returncode, proc.stdout


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    work = tmp_path_factory.mktemp("exports")
    with EmulatedDevice(work / "emu", f"--test-mnemonic={TEST_MNEMONIC}") as device, \
            BitcoinD(work / "core") as core:
        yield Setup(device, core)


def test_coldcard_generic_json(setup: Setup, tmp_path: Path) -> None:
    out = tmp_path / "coldcard-export.json"
    status, answer = setup.signer("export", "--format=coldcard", "--out", str(out))
    assert (status, answer) == (0, {"file": str(out)})
    export = json.loads(out.read_text())
    assert list(export) == TOP_FIELDS
    assert (export["chain"], export["xfp"], export["account"]) == ("XRT", FINGERPRINT.upper(), 0)
    assert export["xpub"] == ROOT.to_public().to_string(version=REGTEST["xpub"])
    tprv = master_tprv(TEST_MNEMONIC)
    for section, (name, deriv, slip) in SECTIONS.items():
        entry = export[section]
        multisig = section.startswith("bip4") and section not in TEMPLATES
        expected_fields = ["name", "xfp", "deriv", "xpub", "desc"] + (["_pub"] if slip else []) + \
            ([] if multisig else ["first"])
        assert list(entry) == expected_fields, section
        node = ROOT.derive("m/" + deriv)
        assert (entry["name"], entry["deriv"]) == (name, "m/" + deriv)
        assert entry["xpub"] == account_xpub(ROOT, deriv)
        assert entry["xfp"] == node.my_fingerprint.hex().upper()      # the account key's own
        if slip:
            assert entry["_pub"].startswith(slip)
            assert HDKey.from_string(entry["_pub"]).to_string(version=REGTEST["xpub"]) == entry["xpub"]
        if multisig:
            template = {"bip48_1": "sh(wsh(sortedmulti(M,{},...)))", "bip48_2": "wsh(sortedmulti(M,{},...))",
                        "bip45": "sh(sortedmulti(M,{},...))"}[section]
            assert entry["desc"] == template.format(key_expression(ROOT, deriv) + "/0/*")
            filled = entry["desc"].replace("M,", "2,").replace(",...", f",{key_expression(COSIGNER, deriv)}/0/*")
            assert setup.core.rpc("getdescriptorinfo", filled)["isrange"] is True
            continue
        expected_first = core_address(setup.core, TEMPLATES[section].format(f"{tprv}/{deriv}/0/0"))
        assert entry["first"] == expected_first
        desc = Descriptor.from_string(entry["desc"])       # embit checks the checksum
        assert desc.num_branches == 2
        assert desc.derive(0, branch_index=0).address(REGTEST) == expected_first
        assert desc.derive(4, branch_index=1).address(REGTEST) == \
            core_address(setup.core, TEMPLATES[section].format(f"{tprv}/{deriv}/1/4"))


def test_descriptors_with_both_branches(setup: Setup) -> None:
    status, text = setup.signer("export", "--format=descriptors")
    assert status == 0
    lines = text.splitlines()
    assert [line.split("(")[0] for line in lines] == ["pkh", "sh", "wpkh", "tr"]
    assert all("/<0;1>/*" in line and "#" in line for line in lines)
    core = setup.core
    core.rpc("createwallet", named={"wallet_name": "watch", "disable_private_keys": True, "blank": True})
    imported = core.rpc("importdescriptors", [{"desc": line, "timestamp": "now", "active": True}
                                              for line in lines], wallet="watch")
    assert all(r["success"] for r in imported), imported
    tprv = master_tprv(TEST_MNEMONIC)
    assert core.rpc("getnewaddress", "", "bech32", wallet="watch") == \
        core_address(core, f"wpkh({tprv}/84h/1h/0h/0/0)")
    assert core.rpc("getrawchangeaddress", "bech32m", wallet="watch") == \
        core_address(core, f"tr({tprv}/86h/1h/0h/1/0)")
    for line in lines:
        assert Descriptor.from_string(line).num_branches == 2


def _p2pkh(pubkey: bytes, core: BitcoinD) -> str:
    return core_address(core, f"pkh({pubkey.hex()})")


def test_bsms_key_record_is_bip129s(setup: Setup) -> None:
    status, record = setup.signer("export", "--format=bsms", "--label", "Quill test key")
    assert status == 0 and record.endswith("\n")
    version, token, key, label, signature = record.rstrip("\n").split("\n")
    assert (version, token, label) == ("BSMS 1.0", "00", "Quill test key")
    assert key == key_expression(ROOT, "48h/1h/0h/2h")
    # BIP129: SIG signs the first four lines with the KEY's private key, signmessage's legacy format
    assert len(base64.b64decode(signature)) == 65
    pubkey = ROOT.derive("m/48h/1h/0h/2h").key.sec()
    signed = "\n".join((version, token, key, label))
    core = setup.core
    assert core.rpc("verifymessage", _p2pkh(pubkey, core), signature, signed) is True
    assert core.rpc("verifymessage", _p2pkh(pubkey, core), signature, signed.replace("test", "tost")) is False
    status, other = setup.signer("export", "--format=bsms", "--path", "m/48'/1'/0'/1'", "--label", "nested")
    assert status == 0 and other.split("\n")[2] == key_expression(ROOT, "48h/1h/0h/1h")
    status, error = setup.signer("export", "--format=bsms", "--label", "x" * 81)
    assert status == 1 and error["code"] == -8


def _descriptor_record(core: BitcoinD, keys: list[str], address: str | None = None) -> str:
    """A coordinator's round-2 record (BIP129: version, template, restrictions, first address)."""
    template = f"wsh(sortedmulti(2,{','.join(k + '/**' for k in keys)}))"
    first = address or _first(core, keys)
    return f"BSMS 1.0\n{template}\n/0/*,/1/*\n{first}\n"


def _first(core: BitcoinD, keys: list[str]) -> str:
    desc = f"wsh(sortedmulti(2,{','.join(k + '/0/*' for k in keys)}))"
    checksum = core.rpc("getdescriptorinfo", desc)["checksum"]
    return str(core.rpc("deriveaddresses", f"{desc}#{checksum}", [0, 0])[0])


def test_bsms_descriptor_record_registers_the_multisig(setup: Setup, tmp_path: Path) -> None:
    core = setup.core
    keys = [key_expression(ROOT, "48h/1h/0h/2h"), key_expression(COSIGNER, "48h/1h/0h/2h")]
    first = _first(core, keys)
    record = tmp_path / "wallet.bsms"
    record.write_text(_descriptor_record(core, keys, first))
    status, answer = setup.signer("register", "--bsms", str(record), "--name", "bsms2of2")
    assert (status, answer) == (0, {"name": "bsms2of2", "address": first})
    status, wallets = setup.signer("registered")
    assert status == 0 and {"name": "bsms2of2", "script_type": "p2wsh", "sorted": True, "threshold": 2,
                            "n": 2}.items() <= next(w for w in wallets if w["name"] == "bsms2of2").items()
    # a record whose first address is not its descriptor's, one without the device's key, and one
    # with the device's fingerprint on another key: refused, nothing registered
    wrong = _first(core, [keys[1], key_expression(COSIGNER, "48h/1h/1h/2h")])
    forged = f"[{FINGERPRINT}/48h/1h/0h/2h]{account_xpub(COSIGNER, '48h/1h/1h/2h')}"
    for name, text, reason in (
            ("bad-address", _descriptor_record(core, keys, wrong), "is not the descriptor's"),
            ("not-ours", _descriptor_record(core, [keys[1], key_expression(COSIGNER, "48h/1h/1h/2h")]),
             "no key of this device"),
            ("forged", _descriptor_record(core, [forged, keys[1]], _first(core, [forged, keys[1]])),
             "is not this device's"),
            ("restricted", _descriptor_record(core, keys, first).replace("/0/*,/1/*", "/0/*"), "path restrictions")):
        record.write_text(text)
        status, answer = setup.signer("register", "--bsms", str(record), "--name", name)
        assert status == 1 and answer["code"] == -8 and reason in answer["error"], (name, answer)
    status, wallets = setup.signer("registered")
    assert [w["name"] for w in wallets] == ["bsms2of2"]


def test_without_chain_the_device_keeps_one(setup: Setup) -> None:
    def bare(*args: str) -> tuple[int, Any]:
        proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={setup.device.port}", *args],
                              capture_output=True, text=True, timeout=180)
        return proc.returncode, json.loads(proc.stdout)
    main_xpub = ROOT.derive("m/84h/0h/0h").to_public().to_string(version=NETWORKS["main"]["xpub"])
    assert bare("getxpub", "m/84h/0h/0h") == (0, {"xpub": main_xpub})      # nothing kept: main
    assert bare("setchain", "regtest") == (0, {"chain": "regtest"})
    assert bare("getxpub", "m/84h/1h/0h") == (0, {"xpub": account_xpub(ROOT, "84h/1h/0h")})
    tprv = master_tprv(TEST_MNEMONIC)
    assert bare("displayaddress", "--path", "m/84h/1h/0h/0/1") == \
        (0, {"address": core_address(setup.core, f"wpkh({tprv}/84h/1h/0h/0/1)")})
    # kept on the device's flash, beside its confirmation policy
    assert (setup.device.datadir / "quill_chain.txt").read_text() == "regtest"
    refused = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={setup.device.port}", "setchain",
                              "mainnet"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "invalid choice: 'mainnet'" in refused.stderr
