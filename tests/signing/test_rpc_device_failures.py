"""The device side of signrawtransactionwithkey: no device, a device killed while
signing (clear error, nothing half-signed, the next call works), keys never in
a log or an error, and (through the session driver directly) requests too
large for one message and scripts beyond the device's limit."""
import threading
import time

import pytest

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.emulator.launcher import Emulator
from quill.signing.device_session import sign_on_device
from quill.signing.keystore import Key
from quill.signing.solver import SEGWIT_V0, SignRequest
from quill.tx.transaction import Transaction, TxOut
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.signing.signkit import (
    KeyPair,
    core_ecdsa,
    ecdsa_sighash,
    firmware_pid,
    kill,
    p2pkh,
    p2wpkh,
    p2wsh,
    prevtx,
    push,
    unsigned_tx,
    wait_for,
)

# A recognisable key: its secret, hex or WIF, must never show up anywhere.
MARKED = KeyPair(bytes.fromhex("5ec2e7c0ffee" * 5 + "0101"))
LEGACY_INPUTS = 40


def _legacy_tx():
    tx = unsigned_tx(LEGACY_INPUTS, 2, seed=50)
    return tx, [prevtx(tx, i, p2pkh(MARKED.pubkey)) for i in range(LEGACY_INPUTS)]


def test_no_device_is_a_clear_error(tmp_path):
    with QuillDaemon(tmp_path) as d:
        tx = unsigned_tx(1, 1, seed=51)
        with pytest.raises(RPCFailure) as e:
            d.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif],
                  [prevtx(tx, 0, p2wpkh(MARKED.pubkey), 1000)])
        assert e.value.code == -1
        assert e.value.message.startswith("No device configured")
        # nothing to sign needs no device: Core's answer as is
        result = d.rpc("signrawtransactionwithkey", tx.hex(), [],
                       [prevtx(tx, 0, p2wpkh(MARKED.pubkey), 1000)])
        assert result["complete"] is False


def signing_seconds(node, tx, entries):
    """How long an undisturbed call takes (so that a kill can be timed inside it): the
    shorter of two, the first one also loading the device's signing modules."""
    times = []
    for _ in range(2):
        started = time.monotonic()
        assert node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif], entries)["complete"]
        times.append(time.monotonic() - started)
    return min(times)


def kill_mid_signing(node, tx, entries, delay):
    """Start signing, kill the firmware `delay` seconds later; the call's outcome
    {"result"} or {"error"} and whether the call was still running at the kill."""
    pid = wait_for(lambda: firmware_pid(node))
    assert pid
    outcome = {}

    def sign():
        try:
            outcome["result"] = node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif], entries)
        except RPCFailure as e:
            outcome["error"] = e

    worker = threading.Thread(target=sign)
    worker.start()
    time.sleep(delay)
    in_flight = worker.is_alive()
    kill(pid)
    worker.join(60)
    assert not worker.is_alive()
    assert wait_for(lambda: firmware_pid(node) not in (None, pid))
    return outcome, in_flight


def test_device_killed_mid_signing_then_the_next_call_works(node):
    tx, entries = _legacy_tx()
    duration = signing_seconds(node, tx, entries)
    started = time.monotonic()
    outcome, in_flight = kill_mid_signing(node, tx, entries, duration / 3)
    assert in_flight
    assert "result" not in outcome
    error = outcome["error"]
    assert (error.code, error.message) == (-1, "Device restarted during signing")
    assert time.monotonic() - started < 30
    # the emulator restarted the firmware; the same call now signs completely
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif], entries)
    assert result["complete"] is True
    signed = Transaction.from_hex(result["hex"])
    spk = p2pkh(MARKED.pubkey)
    for i in (0, LEGACY_INPUTS - 1):
        sig = core_ecdsa(MARKED.secret, ecdsa_sighash(tx, i, spk, 1), 1)
        assert signed.vin[i].script_sig == push(sig) + push(MARKED.pubkey)


@pytest.fixture(scope="module")
def device():
    # the Pico: staging copies a script of ~3.5 KB out of its frame, and the smallest
    # board's heap may have no such block once signing started (protocol/SPEC.md §10);
    # single scripts of max_script_size sign there (test_device_limits.py)
    with Emulator(board="rpi_pico") as emu:
        with DeviceClient(emu.port) as client:
            yield client, client.get_info()


def _segwit_request(script_code):
    return SignRequest(0, SEGWIT_V0, Key(MARKED.secret, True), script_code)


def test_a_request_too_large_for_one_message_is_staged(device):
    # No standard script is this large, so the driver is called directly: a
    # 3,5xx-byte script code and SIGHASH_SINGLE over a 3,5xx-byte output script
    # exceed the 4096-byte message; both scripts are staged first.
    client, info = device
    script_code = (push(bytes(500)) + b"\x75") * 7 + push(MARKED.pubkey) + b"\xac"
    tx = unsigned_tx(1, 1, seed=52)
    tx.vout[0].script_pubkey = b"\x6a" + (push(bytes(250)) * 14)
    assert len(script_code) > 3500 and len(tx.vout[0].script_pubkey) > 3500
    request = _segwit_request(script_code)
    stats = {}
    sigs = sign_on_device(client, info, tx, [TxOut(9000, p2wsh(script_code))], [request], 3, stats)
    want = core_ecdsa(MARKED.secret, ecdsa_sighash(tx, 0, script_code, 3, 9000), 3)
    assert sigs == {request.ident(): want}
    assert stats["bytes_sent"] > len(script_code) + len(tx.vout[0].script_pubkey)


def test_scripts_beyond_the_device_limit_are_refused_cleanly(device):
    client, info = device
    big = bytes(info["limits"]["max_script_size"] + 1)
    tx = unsigned_tx(1, 1, seed=53)
    with pytest.raises(DeviceError) as e:
        sign_on_device(client, info, tx, [TxOut(9000, p2wpkh(MARKED.pubkey))],
                       [_segwit_request(big)], 1)
    assert "larger than" in e.value.message and MARKED.secret.hex() not in str(e.value)
    # the session was aborted; the device signs the next one
    request = _segwit_request(p2pkh(MARKED.pubkey))
    sigs = sign_on_device(client, info, tx, [TxOut(9000, p2wpkh(MARKED.pubkey))], [request], 1)
    assert sigs[request.ident()] == core_ecdsa(
        MARKED.secret, ecdsa_sighash(tx, 0, p2pkh(MARKED.pubkey), 1, 9000), 1)


def test_keys_never_reach_a_log_or_an_error(node):
    tx = unsigned_tx(2, 1, seed=55)
    node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif],
             [prevtx(tx, 0, p2wpkh(MARKED.pubkey), 1000)])
    errors = []
    for params in ([tx.hex(), [MARKED.wif + "x"]], [tx.hex(), [MARKED.wif], [{"txid": MARKED.wif}]],
                   [tx.hex(), [MARKED.wif, 5]], [MARKED.wif, [MARKED.wif]]):
        with pytest.raises(RPCFailure) as e:
            node.rpc("signrawtransactionwithkey", *params)
        errors.append(e.value.message)
    logs = node.debug_log() + (node.chain_dir / "quill-emu.log").read_text(errors="replace")
    assert "signrawtransactionwithkey" in node.debug_log() or logs  # -debug=1 wrote something
    secret_hex = MARKED.secret.hex()
    for text in errors + [logs]:
        assert MARKED.wif not in text.replace(MARKED.wif + "x", "")
        assert secret_hex not in text and secret_hex.upper() not in text
