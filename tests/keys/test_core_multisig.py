"""2-of-3 multisig across three emulated Quill devices, judged by the real Bitcoin Core.

Three quill-emu processes (modelling the pyboard, then the Pico, each with its panel), each
started with its own BIP39 mnemonic, give their xpubs at m/48h/1h/0h/2h; Core holds the
watch-only wallet of three 2-of-3 policies (wsh(sortedmulti), sh(wsh(multi)), sh(sortedmulti))
and funds a PSBT from them. Each device registers the three wallets (`quill-signer register`,
shown on its confirmation channel) and signs the PSBT (`quill-signer signtx`); every partial
signature is the one Core makes for the same PSBT with that cosigner's tprv
(`descriptorprocesspsbt`), for each of the six sighash types the PSBT asks for, in a BIP174 and
a BIP370 PSBT. Core combines, finalizes and broadcasts, and the spend confirms. Then the
attacks: an unregistered multisig, change outside the registered wallet, and a registration
without the device's key are refused with clear errors. Nothing of the mnemonics or the xprvs
reaches any log."""
from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from quill.device.client import DeviceClient
from quill.tx.psbt import decode_base64_psbt, encode_base64_psbt
from tests.keys.emulated import DEFAULT_BOARD, SMALLEST_BOARD, TEST_MNEMONIC, VENV_BIN, EmulatedDevice
from tests.keys.test_core_external_signer import master_tprv
from tests.keys.test_core_send import ChannelApprover
from tests.kit.bitcoind import BitcoinD
from tests.ui.screenkit import expected_outputs, prompt_items

MNEMONICS = (
    TEST_MNEMONIC,
    "legal winner thank year wave sausage worth useful legal winner thank yellow",
    "letter advice cage absurd amount doctor acoustic avoid letter advice cage above",
)
ACCOUNT = "48h/1h/0h/2h"
# (name, descriptor template with {keys}, Core's address type for it)
POLICIES = (
    ("vault-wsh", "wsh(sortedmulti(2,{keys}))", "bech32"),
    ("vault-shwsh", "sh(wsh(multi(2,{keys})))", "p2sh-segwit"),
    ("vault-sh", "sh(sortedmulti(2,{keys}))", "legacy"),
)
# the sighash types a PSBT input may ask for, one per input
SIGHASH_TYPES = {0x01: "ALL", 0x02: "NONE", 0x03: "SINGLE", 0x81: "ALL|ANYONECANPAY",
                 0x82: "NONE|ANYONECANPAY", 0x83: "SINGLE|ANYONECANPAY"}


@dataclass
class Cosigner:
    device: EmulatedDevice
    fingerprint: str
    key: str            # [fingerprint/48h/1h/0h/2h]tpub...
    tprv: str           # the mnemonic's master tprv, for Core's signing only


@dataclass
class Setup:
    cosigners: list[Cosigner]
    core: BitcoinD
    approver: ChannelApprover      # the first device's confirmation channel


def descriptor(template: str, keys: list[str], chain: str) -> str:
    return template.format(keys=",".join(f"{k}/{chain}/*" for k in keys))


def signer(cosigner: Cosigner, *args: str) -> tuple[int, Any]:
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), f"--device={cosigner.device.port}",
                           "--chain=regtest", *args], capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module", params=[SMALLEST_BOARD, DEFAULT_BOARD])
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """The three devices model each board at its own heap with its own panel (issue 26): the
    smallest (the pyboard's 97K, its firmware frozen) and the Pico (228K, its firmware's
    bytecode loaded into that heap, the native module's size taken from it): the six-input
    review fits beside the session on both."""
    work = tmp_path_factory.mktemp("multisig")
    devices = [EmulatedDevice(work / f"emu{i}", f"--test-mnemonic={words}",
                              "--approve=channel" if i == 0 else "--approve=auto",
                              board=request.param) for i, words in enumerate(MNEMONICS)]
    try:
        cosigners = []
        for device, words in zip(devices, MNEMONICS, strict=True):
            device.start()
            with DeviceClient(device.port) as client:
                got = client.call("get_xpub", {"path": "m/" + ACCOUNT, "network": "test"})
            fingerprint = bytes(got["fingerprint"]).hex()
            cosigners.append(Cosigner(device, fingerprint, f"[{fingerprint}/{ACCOUNT}]{got['xpub']}",
                                      master_tprv(words)))
        with BitcoinD(work / "core") as core, ChannelApprover(devices[0].datadir) as approver:
            keys = [c.key for c in cosigners]
            core.rpc("createwallet", named={"wallet_name": "ms", "disable_private_keys": True,
                                            "blank": True})
            requests = []
            for _, template, _ in POLICIES:
                for chain in (0, 1):
                    desc = descriptor(template, keys, str(chain))
                    checksum = core.rpc("getdescriptorinfo", desc)["checksum"]
                    requests.append({"desc": f"{desc}#{checksum}", "timestamp": "now", "active": True,
                                     "internal": chain == 1, "range": [0, 20]})
            assert all(r["success"] for r in core.rpc("importdescriptors", requests, wallet="ms"))
            core.rpc("createwallet", "miner")
            core.rpc("generatetoaddress", 101, core.rpc("getnewaddress", wallet="miner"))
            yield Setup(cosigners, core, approver)
    finally:
        for device in devices:
            device.stop()


def _register_all(setup: Setup) -> None:
    """Each device registers the three policies, one device after the other (three in
    parallel on a loaded machine can miss the host's 5 s answer to get_info)."""
    keys = [c.key for c in setup.cosigners]
    for name, template, _ in POLICIES:
        first = setup.core.rpc("deriveaddresses", _with_checksum(
            setup.core, descriptor(template, keys, "0")), [0, 0])[0]
        for cosigner in setup.cosigners:
            answer = signer(cosigner, "register", "--desc", descriptor(template, keys, "<0;1>"),
                            "--name", name)
            assert answer == (0, {"name": name, "address": first})


def _with_checksum(core: BitcoinD, desc: str) -> str:
    return f"{desc}#{core.rpc('getdescriptorinfo', desc)['checksum']}"


@pytest.fixture(scope="module")
def registered(setup: Setup) -> Setup:
    _register_all(setup)
    return setup


def test_each_device_registers_the_wallets_after_showing_them(registered: Setup) -> None:
    setup = registered
    items = prompt_items(setup.approver.prompts[-1])     # the registration screen's items
    assert items[:2] == ['Name: "vault-sh"', "Policy: 2 of 3 p2sh sortedmulti"]
    for i, cosigner in enumerate(setup.cosigners):
        xpub = cosigner.key.split("]")[1]
        assert items[2 + i].startswith(f"Cosigner {i + 1} of 3")
        assert items[2 + i].endswith(f": {cosigner.fingerprint} m/{ACCOUNT} {xpub}")
    assert items[-1].startswith("First address: 2")
    status, listed = signer(setup.cosigners[1], "registered")
    assert status == 0
    assert sorted(listed, key=lambda w: w["name"]) == [
        {"name": "vault-sh", "script_type": "p2sh", "sorted": True, "threshold": 2, "n": 3},
        {"name": "vault-shwsh", "script_type": "p2sh-p2wsh", "sorted": False, "threshold": 2, "n": 3},
        {"name": "vault-wsh", "script_type": "p2wsh", "sorted": True, "threshold": 2, "n": 3}]
    # kept on the device's flash, under names nobody can read a key from
    stored = sorted(p.name for p in setup.cosigners[1].device.datadir.glob("quill_ms*.bin"))
    assert stored == ["quill_ms0.bin", "quill_ms1.bin", "quill_ms2.bin"]
    # the same name twice is refused
    status, result = signer(setup.cosigners[1], "register", "--desc",
                            descriptor(POLICIES[0][1], [c.key for c in setup.cosigners], "<0;1>"),
                            "--name", "vault-wsh")
    assert status == 1 and result["error"] == "A multisig wallet named 'vault-wsh' is already registered"


def _fund(core: BitcoinD, per_type: int) -> list[dict[str, Any]]:
    """per_type coins of 1 BTC on each policy's receive addresses, confirmed."""
    addresses = [core.rpc("getnewaddress", "", kind, wallet="ms")
                 for _, _, kind in POLICIES for _ in range(per_type)]
    txid = core.rpc("sendmany", "", {a: 1 for a in addresses}, wallet="miner")
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))
    utxos = [u for u in core.rpc("listunspent", wallet="ms") if u["txid"] == txid]
    return sorted(utxos, key=lambda u: addresses.index(u["address"]))


def _sign_in_parallel(setup: Setup, psbt: str) -> list[tuple[int, Any]]:
    results: list[tuple[int, Any]] = [(1, None)] * len(setup.cosigners)

    def run(i: int) -> None:
        results[i] = signer(setup.cosigners[i], f"--fingerprint={setup.cosigners[i].fingerprint}",
                            "signtx", psbt)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(setup.cosigners))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _cores_signature(setup: Setup, cosigner: Cosigner, psbt: str, index: int, hash_type: int) -> Any:
    """Core's partial signatures of input `index` with the cosigner's tprv and `hash_type`
    (the other inputs' sighash fields dropped: Core signs every input with the one type)."""
    one = decode_base64_psbt(psbt)
    for j, txin in enumerate(one.inputs):
        if j != index:
            txin.sighash_type = None
    keys = [c.key if c is not cosigner else f"{c.tprv}/{ACCOUNT}" for c in setup.cosigners]
    descs = [{"desc": _with_checksum(setup.core, descriptor(t, keys, str(chain))), "range": [0, 20]}
             for _, t, _ in POLICIES for chain in (0, 1)]
    signed = setup.core.rpc("descriptorprocesspsbt", encode_base64_psbt(one), descs,
                            SIGHASH_TYPES[hash_type], True, False)
    return decode_base64_psbt(signed["psbt"]).inputs[index].partial_sigs


def test_three_devices_sign_as_core_with_every_sighash_type_and_the_spend_confirms(
        registered: Setup) -> None:
    setup = registered
    core = setup.core
    utxos = _fund(core, 2)
    payees = [core.rpc("getnewaddress", "", "bech32", wallet="miner") for _ in range(5)]
    funded = core.rpc("walletcreatefundedpsbt", [{"txid": u["txid"], "vout": u["vout"]} for u in utxos],
                      [{p: Decimal("0.9")} for p in payees], 0,
                      {"add_inputs": False, "change_type": "bech32", "changePosition": 5},
                      wallet="ms")["psbt"]
    psbt = decode_base64_psbt(funded)
    assert len(psbt.inputs) == 6 and len(psbt.outputs) == 6
    for txin, hash_type in zip(psbt.inputs, SIGHASH_TYPES, strict=True):
        txin.sighash_type = hash_type
    asked = encode_base64_psbt(psbt)
    results = _sign_in_parallel(setup, asked)
    assert all(status == 0 for status, _ in results), results
    signed = [decode_base64_psbt(result["psbt"]) for _, result in results]
    for cosigner, ours in zip(setup.cosigners, signed, strict=True):
        for index, hash_type in enumerate(SIGHASH_TYPES):
            mine = ours.inputs[index].partial_sigs
            assert len(mine) == 1 and next(iter(mine.values()))[1][-1] == hash_type
            assert mine == _cores_signature(setup, cosigner, asked, index, hash_type), (index, hash_type)
    # the device showed the five payments, the change back to the wallet and the fee, each
    # output as Core's decodepsbt gives its address and amount
    items = prompt_items(setup.approver.prompts[-1])
    decoded = core.rpc("decodepsbt", asked)
    want = expected_outputs(decoded)
    assert items[:6] == want and sum(line.startswith("Change ") for line in want) == 1
    assert items[6] == f"Fee: {decoded['fee']:.8f} BTC"
    # two cosigners are enough; Core combines, finalizes and broadcasts
    combined = core.rpc("combinepsbt", [encode_base64_psbt(signed[0]), encode_base64_psbt(signed[2])])
    final = core.rpc("finalizepsbt", combined)
    assert final["complete"] is True
    txid = core.rpc("sendrawtransaction", final["hex"])
    core.rpc("generatetoaddress", 1, payees[0])
    assert core.rpc("gettransaction", txid, wallet="ms")["confirmations"] == 1
    # the same PSBT as BIP370 version 2 gets the same signatures
    v2 = decode_base64_psbt(asked)
    v2.version, v2.fallback_locktime = 2, v2.unsigned_tx().locktime
    for part in (*v2.inputs, *v2.outputs):
        part.version = 2
    status, result = signer(setup.cosigners[1], "signtx", encode_base64_psbt(v2))
    assert status == 0, result
    again = decode_base64_psbt(result["psbt"])
    assert again.psbt_version == 2
    assert [i.partial_sigs for i in again.inputs] == [i.partial_sigs for i in signed[1].inputs]
    # no word of any mnemonic and no private key in any device's log or Core's
    core_log = (Path(core.datadir) / "regtest" / "debug.log").read_text(errors="replace")
    for log in [c.device.log() for c in setup.cosigners] + [core_log]:
        assert "tprv" not in log and "xprv" not in log
        assert not any(words.split()[1] + " " + words.split()[2] in log for words in MNEMONICS)


def _one_input_psbt(setup: Setup, policy: int, change_type: str = "bech32") -> str:
    core = setup.core
    utxo = _fund(core, 1)[policy]
    to = core.rpc("getnewaddress", "", "bech32", wallet="miner")
    return str(core.rpc("walletcreatefundedpsbt", [{"txid": utxo["txid"], "vout": utxo["vout"]}],
                        {to: Decimal("0.5")}, 0, {"add_inputs": False, "change_type": change_type},
                        wallet="ms")["psbt"])


def test_change_outside_the_registered_wallet_is_refused(registered: Setup) -> None:
    setup = registered
    first = setup.cosigners[0]
    funded = _one_input_psbt(setup, 0)
    psbt = decode_base64_psbt(funded)
    change = next(i for i, out in enumerate(psbt.outputs) if out.hd_keypaths)
    out = psbt.outputs[change]
    own_key, own_origin = next((k, o) for k, o in out.hd_keypaths.items()
                               if o.fingerprint.hex() == first.fingerprint)
    # a 2-of-3 of the device's key at its change path and two keys the wallet does not have
    out.script, out.witness_script = _p2wsh_multisig(2, sorted([own_key, *_strangers(setup, 2)]))
    out.hd_keypaths = {own_key: own_origin}
    status, result = signer(first, "signtx", encode_base64_psbt(psbt))
    path = f"m/{ACCOUNT}/1/{own_origin.path[-1]}"
    assert status == 1
    assert result["error"] == (f"output {change} is not this device's key at {path}, nor a registered "
                               "multisig wallet's change: not change")
    # the wallet's own script at a receive path (the input's) is no change either
    psbt = decode_base64_psbt(funded)
    txin, out = psbt.inputs[0], psbt.outputs[change]
    utxo = txin.utxo()
    assert utxo is not None
    out.script, out.witness_script, out.hd_keypaths = utxo.script_pubkey, txin.witness_script, \
        dict(txin.hd_keypaths)
    status, result = signer(first, "signtx", encode_base64_psbt(psbt))
    assert status == 1 and "nor a registered multisig wallet's change: not change" in result["error"]
    # the PSBT as Core made it signs
    status, result = signer(first, "signtx", funded)
    assert status == 0 and decode_base64_psbt(result["psbt"]).inputs[0].partial_sigs


def _strangers(setup: Setup, n: int) -> list[bytes]:
    """n public keys that no registered wallet has (the miner wallet's)."""
    keys = []
    for _ in range(n):
        address = setup.core.rpc("getnewaddress", "", "bech32", wallet="miner")
        keys.append(bytes.fromhex(setup.core.rpc("getaddressinfo", address, wallet="miner")["pubkey"]))
    return keys


def _p2wsh_multisig(threshold: int, keys: list[bytes]) -> tuple[bytes, bytes]:
    script = bytes([0x50 + threshold]) + b"".join(bytes([33]) + k for k in keys) \
        + bytes([0x50 + len(keys), 0xAE])
    return b"\x00\x20" + hashlib.sha256(script).digest(), script


def test_a_registration_without_the_devices_key_is_refused(registered: Setup) -> None:
    setup = registered
    strangers = [c.key for c in setup.cosigners[1:]]
    desc = descriptor(POLICIES[0][1], [*strangers, _miner_key(setup)], "<0;1>")
    status, result = signer(setup.cosigners[0], "register", "--desc", desc, "--name", "not-mine")
    assert status == 1 and result["error"] == "This device's key is not one of the cosigners"
    # a cosigner claiming the device's fingerprint with another key
    forged = f"[{setup.cosigners[0].fingerprint}/{ACCOUNT}]" + _miner_key(setup).split("]")[1]
    desc = descriptor(POLICIES[0][1], [*strangers, forged], "<0;1>")
    status, result = signer(setup.cosigners[0], "register", "--desc", desc, "--name", "forged")
    assert status == 1
    assert result["error"] == "Signer 3 has this device's fingerprint but not its key at m/48h/1h/0h/2h"
    # the same key twice
    desc = descriptor(POLICIES[0][1], [setup.cosigners[0].key, *strangers[:1], strangers[0]], "<0;1>")
    status, result = signer(setup.cosigners[0], "register", "--desc", desc, "--name", "twice")
    assert status == 1 and result["error"] == "Invalid multisig wallet: signer 3: the same key twice"
    status, listed = signer(setup.cosigners[0], "registered")
    assert status == 0 and {w["name"] for w in listed} == {name for name, _, _ in POLICIES}


def _miner_key(setup: Setup) -> str:
    return f"[{'ab' * 4}/{ACCOUNT}]" + _miner_xpub(setup)


def _miner_xpub(setup: Setup) -> str:
    """An xpub that is no cosigner's: the miner wallet's BIP84 account key."""
    descs = setup.core.rpc("listdescriptors", wallet="miner")["descriptors"]
    wpkh = next(d["desc"] for d in descs if d["desc"].startswith("wpkh(") and "/0/*" in d["desc"])
    return wpkh.split("]")[1].split("/")[0]


def test_an_unregistered_multisig_is_refused(registered: Setup) -> None:
    setup = registered
    psbt = _one_input_psbt(setup, 0, change_type="p2sh-segwit")   # change to a registered wallet
    last = setup.cosigners[2]
    status, result = signer(last, "unregister", "--name", "vault-wsh")
    assert (status, result) == (0, {"removed": "vault-wsh"})
    status, result = signer(last, f"--fingerprint={last.fingerprint}", "signtx", psbt)
    assert status == 1
    assert result["error"] == ("input 0 is not a registered multisig wallet's with this device's key "
                               f"at m/{ACCOUNT}/0/{_receive_index(psbt, last)}")
    status, listed = signer(last, "registered")
    assert status == 0 and "vault-wsh" not in {w["name"] for w in listed}


def _receive_index(psbt: str, cosigner: Cosigner) -> int:
    txin = decode_base64_psbt(psbt).inputs[0]
    origin = next(o for o in txin.hd_keypaths.values() if o.fingerprint.hex() == cosigner.fingerprint)
    return int(origin.path[-1])

