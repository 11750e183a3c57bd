"""A pool of devices (issue 29): quilld with -device given several times, real emulators.

- concurrent signrawtransactionwithkey calls spread over both devices' queues;
- a device restarted (its firmware killed) or vanished (its quill-emu gone) mid-session: the call
  is made again on the other device and answers the very bytes an undisturbed call answers;
- every device gone: a clear error in Core's form, nothing signed;
- getdeviceinfo lists each device; enumeratesigners lists each device, two with one seed too;
- an external-signer wallet bound to one device's fingerprint signs on that device only.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from quill.tx.transaction import Transaction
from tests.firmware.test_keys_store import TPUB_84_1_0
from tests.keys.emulated import TEST_MNEMONIC, EmulatedDevice
from tests.kit import boards
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.signing.signkit import (
    KeyPair,
    core_ecdsa,
    ecdsa_sighash,
    kill,
    p2pkh,
    prevtx,
    process_children,
    push,
    unsigned_tx,
    wait_for,
)

KEY = KeyPair(bytes.fromhex("a11ce0" * 10 + "0102"))
INPUTS = 60            # legacy inputs: a session long enough to be cut in its middle
OTHER_MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow"
TEST_FINGERPRINT = "73c5da0a"
ELSEWHERE = "bcrt1qs758ursh4q9z627kt3pp5yysm78ddny6txaqgw"


def _tx(seed: int, inputs: int = INPUTS) -> tuple[Any, list[dict[str, Any]]]:
    tx = unsigned_tx(inputs, 2, seed=seed)
    return tx, [prevtx(tx, i, p2pkh(KEY.pubkey)) for i in range(inputs)]


def _sign(node: QuillDaemon, tx: Any, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return node.rpc("signrawtransactionwithkey", tx.hex(), [KEY.wif], entries)


def _check_core_signatures(tx: Any, signed_hex: str) -> None:
    signed = Transaction.from_hex(signed_hex)
    for i in (0, len(tx.vin) - 1):
        sig = core_ecdsa(KEY.secret, ecdsa_sighash(tx, i, p2pkh(KEY.pubkey), 1), 1)
        assert signed.vin[i].script_sig == push(sig) + push(KEY.pubkey)


def _queued_on(node: QuillDaemon, label: str) -> list[int]:
    """The devices (1, 2, ...) the pool queued `label` on, from -debug=device's log."""
    marker = f"{label}: queued on device "
    return [int(line.rsplit(marker, 1)[1]) for line in node.debug_log().splitlines() if marker in line]


def _busy_device(node: QuillDaemon, method: str) -> int | None:
    """The device (1, 2, ...) doing `method` now, per getdeviceinfo."""
    for index, device in enumerate(node.rpc("getdeviceinfo")["devices"], 1):
        if any(q["position"] == 0 and q["method"] == method for q in device["queue"]):
            return index
    return None


def _firmware_pid(node: QuillDaemon, index: int) -> int | None:
    """The micropython process of quilld's index-th emulator (its flash: emulator, emulator-2)."""
    flash = b"emulator" if index == 1 else f"emulator-{index}".encode()
    for emu in process_children(node.proc.pid):
        try:
            words = Path(f"/proc/{emu}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(w.endswith(b"/" + flash) for w in words):
            continue
        for child in process_children(emu):
            try:
                if b"heapsize" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return child
            except OSError:
                continue
    return None


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuillDaemon]:
    """quilld with two emulated devices (no seed: signrawtransactionwithkey takes its keys)."""
    board = boards.ready(boards.DEFAULT_BOARD)
    with QuillDaemon(tmp_path_factory.mktemp("pool"), "-device=emulator", "-device=emulator",
                     f"-emuboard={board}", "-emuseed=none", "-debug=device") as d:
        d.rpc("getdeviceinfo", timeout=120)      # both emulators up
        yield d


def test_getdeviceinfo_lists_each_device(pool: QuillDaemon) -> None:
    info = pool.rpc("getdeviceinfo")
    devices = info["devices"]
    assert [d["device"] for d in devices] == ["emulator", "emulator"]
    assert all(d["state"] == "idle" and d["queue"] == [] and d["emulator"] is True for d in devices)
    assert devices[0]["boot_id"] != devices[1]["boot_id"]          # two firmwares
    # the single-device fields are the first device's
    assert info["boot_id"] == devices[0]["boot_id"] and info["board"] == devices[0]["board"]
    assert list(info)[-1] == "devices" and "queue" in info
    # each emulator has its own flash
    assert (pool.chain_dir / "emulator").is_dir() and (pool.chain_dir / "emulator-2").is_dir()


def test_setconfirmationpolicy_sets_every_device(pool: QuillDaemon) -> None:
    assert pool.rpc("setconfirmationpolicy", "above", 0.01) == {"policy": "above", "amount": Decimal("0.01")}
    policies = [d["confirmation"] for d in pool.rpc("getdeviceinfo")["devices"]]
    assert [(p["policy"], p["amount"]) for p in policies] == [("above", Decimal("0.01"))] * 2
    assert pool.rpc("setconfirmationpolicy", "always") == {"policy": "always"}
    assert [d["confirmation"]["policy"] for d in pool.rpc("getdeviceinfo")["devices"]] == ["always"] * 2


def test_concurrent_signing_spreads_over_both_devices(pool: QuillDaemon) -> None:
    tx, entries = _tx(71, inputs=15)
    expected = _sign(pool, tx, entries)["hex"]
    _check_core_signatures(tx, expected)
    before = len(_queued_on(pool, "signrawtransactionwithkey"))
    answers: list[str] = []
    seen_busy: set[int] = set()

    def signer() -> None:
        answers.append(_sign(pool, tx, entries)["hex"])

    threads = [threading.Thread(target=signer) for _ in range(6)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for index, device in enumerate(pool.rpc("getdeviceinfo")["devices"], 1):
            if device["queue"]:
                seen_busy.add(index)
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert answers == [expected] * 6
    assert seen_busy == {1, 2}                         # both queues had work at once
    assert sorted(_queued_on(pool, "signrawtransactionwithkey")[before:]) == [1, 1, 1, 2, 2, 2]


def _signing_seconds(node: QuillDaemon, tx: Any, entries: list[dict[str, Any]]) -> tuple[str, float]:
    """An undisturbed call's answer and the shorter time of two such calls."""
    times, answers = [], set()
    for _ in range(2):
        started = time.monotonic()
        answers.add(_sign(node, tx, entries)["hex"])
        times.append(time.monotonic() - started)
    assert len(answers) == 1
    return answers.pop(), min(times)


def _cut_mid_session(node: QuillDaemon, tx: Any, entries: list[dict[str, Any]], duration: float,
                     cut: Any) -> tuple[int, dict[str, Any]]:
    """Sign, and call cut(device) a third into the session of the device doing it: (that
    device, the call's outcome). Tried again (at most 3 times) when the call ended before the
    cut: the machine's load decides how long a session takes."""
    for _ in range(3):
        outcome: dict[str, Any] = {}

        def signer(outcome: dict[str, Any]) -> None:
            try:
                outcome["result"] = _sign(node, tx, entries)
            except RPCFailure as e:
                outcome["error"] = e

        worker = threading.Thread(target=signer, args=(outcome,))
        started = time.monotonic()
        worker.start()
        busy = wait_for(lambda: _busy_device(node, "signrawtransactionwithkey"), timeout=30)
        time.sleep(max(0.0, started + duration / 3 - time.monotonic()))
        if busy and worker.is_alive():
            cut(busy)
            worker.join(60)
            assert not worker.is_alive()
            return busy, outcome
        worker.join(60)
    raise AssertionError("every call ended before it could be cut")


def test_a_device_restarted_mid_session_the_other_signs_the_same_bytes(pool: QuillDaemon) -> None:
    tx, entries = _tx(72)
    expected, duration = _signing_seconds(pool, tx, entries)
    killed: list[int] = []

    def restart(device: int) -> None:
        pid = _firmware_pid(pool, device)
        assert pid
        killed.append(pid)
        kill(pid)                                      # its quill-emu restarts the firmware

    busy, outcome = _cut_mid_session(pool, tx, entries, duration, restart)
    assert "error" not in outcome, outcome
    assert outcome["result"] == {"hex": expected, "complete": True}
    assert f"Device {busy} lost during signrawtransactionwithkey" in pool.debug_log()
    assert _queued_on(pool, "signrawtransactionwithkey")[-1] == 3 - busy      # the other one
    assert wait_for(lambda: _firmware_pid(pool, busy) not in (None, killed[0]))   # it came back


@pytest.fixture()
def two_ports(tmp_path: Path) -> Iterator[tuple[EmulatedDevice, EmulatedDevice]]:
    with EmulatedDevice(tmp_path / "a", f"--test-mnemonic={TEST_MNEMONIC}") as a, \
            EmulatedDevice(tmp_path / "b", f"--test-mnemonic={TEST_MNEMONIC}") as b:
        yield a, b


def test_a_device_vanished_mid_session_then_every_device_gone(
        tmp_path: Path, two_ports: tuple[EmulatedDevice, EmulatedDevice]) -> None:
    a, b = two_ports
    with QuillDaemon(tmp_path / "quilld", f"-device={a.port}", f"-device={b.port}", "-debug=device") as node:
        # two devices with one seed: enumeratesigners lists each of them
        assert node.rpc("enumeratesigners") == {"signers": [{"fingerprint": TEST_FINGERPRINT, "name": "quill"}] * 2}
        tx, entries = _tx(73)
        expected, duration = _signing_seconds(node, tx, entries)
        busy, outcome = _cut_mid_session(node, tx, entries, duration, lambda device: (a, b)[device - 1].stop())
        left = (a, b)[2 - busy]                        # its port vanished mid-session; this one is left
        assert outcome["result"] == {"hex": expected, "complete": True}
        assert f"Device {busy} lost during signrawtransactionwithkey" in node.debug_log()
        info = node.rpc("getdeviceinfo")
        assert info["devices"][busy - 1]["state"] == "unavailable"
        assert info["devices"][2 - busy]["state"] == "idle"
        # the last one goes too: a clear error, nothing signed, and no hang
        left.stop()
        started = time.monotonic()
        with pytest.raises(RPCFailure) as e:
            _sign(node, tx, entries)
        assert e.value.code == -1 and e.value.status == 500
        assert "device" in e.value.message.lower() and "Traceback" not in e.value.message
        assert time.monotonic() - started < 30
        with pytest.raises(RPCFailure) as e:
            node.rpc("getdeviceinfo")
        assert e.value.code == -1


def _wallet_rpc(node: QuillDaemon, method: str, *params: Any) -> Any:
    return node.rpc(method, *params, path="/wallet/hw")


def test_an_external_signer_wallet_signs_only_on_the_device_with_its_fingerprint(tmp_path: Path) -> None:
    # the default board (the Pico) with its own panel: the send's review is drawn on the device
    with EmulatedDevice(tmp_path / "other", f"--test-mnemonic={OTHER_MNEMONIC}") as other, \
            EmulatedDevice(tmp_path / "ours", f"--test-mnemonic={TEST_MNEMONIC}") as ours:
        datadir = tmp_path / "quilld"
        # the wallet is made with its device alone (Core's createwallet wants one signer)
        with QuillDaemon(datadir, f"-device={ours.port}") as node:
            node.rpc("createwallet", "hw", True, False, "", False, True, True, True)
            node.rpc("generatetoaddress", 101, _wallet_rpc(node, "getnewaddress"))
        # then a pool whose first device holds another seed: the wallet's calls go to its own
        with QuillDaemon(datadir, f"-device={other.port}", f"-device={ours.port}", "-debug=device") as node:
            signers = node.rpc("enumeratesigners")["signers"]
            assert [s["fingerprint"] for s in signers][1] == TEST_FINGERPRINT
            assert signers[0]["fingerprint"] != TEST_FINGERPRINT
            sent = _wallet_rpc(node, "send", {ELSEWHERE: 0.5}, None, None, 2)
            assert sent["complete"] is True and node.rpc("getrawmempool") == [sent["txid"]]
            assert _queued_on(node, "signer signtx") == [2]
            address = _wallet_rpc(node, "getnewaddress")
            assert _wallet_rpc(node, "walletdisplayaddress", address) == {"address": address}
            assert _queued_on(node, "signer displayaddress") == [2]
            # the bridge's signercommand: enumerate lists each device, a fingerprint picks its device
            listed = node.rpc("signercommand", ["enumerate"])
            assert [e["path"] for e in listed] == [other.port, ours.port]
            assert listed[1]["fingerprint"] == TEST_FINGERPRINT != listed[0]["fingerprint"]
            xpub = node.rpc("signercommand", ["--fingerprint", TEST_FINGERPRINT, "getxpub", "m/84h/1h/0h"])
            assert xpub == {"xpub": TPUB_84_1_0}          # the test mnemonic's, not the other device's
            # two seeds attached: a new external-signer wallet gets Core's refusal
            with pytest.raises(RPCFailure) as e:
                node.rpc("createwallet", "two", True, False, "", False, True, True, True)
            assert (e.value.code, e.value.message) == (
                -1, "More than one external signer found. Please connect only one at a time.")
