"""User confirmation end to end on a blind device (the prompt of a board without a display; the
screens' flows are tests/ui's): quilld -device=emulator -emuapprove=channel, a
test answering through the emulator's approval channel (<chain datadir>/emulator).
Approve, refuse (Core-style error, nothing signed), device timeout, policy
changes (always -> above -> never and back, loosening confirmed on the device),
and the wait visible to RPC clients while it lasts."""
import threading
import time

import pytest

from quill.emulator.asker import write_answer
from quill.tx.transaction import Transaction
from tests.kit import boards
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.signing.signkit import core_ecdsa, ecdsa_sighash, keys, p2pkh, p2wpkh, prevtx, unsigned_tx, wait_for

CONFIRM_TIMEOUT_MS = 2500
KEY = keys(811, 1)[0]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    # -emudisplay=none: the prompts asserted here are a blind device's, by design (a board without a
    # display stays supported); the panel's review of the same calls is tests/ui's
    with QuillDaemon(tmp_path_factory.mktemp("confirm"), "-device=emulator",
                     f"-emuboard={boards.ready(boards.SMALLEST_BOARD)}", "-emudisplay=none", "-debug=1",
                     "-emuapprove=channel", f"-emuconfirmtimeout={CONFIRM_TIMEOUT_MS}") as d:
        yield d


def _channel(node):
    return node.chain_dir / "emulator"


def _tx(n_inputs, amount, seed):
    """An unsigned P2WPKH spend of n_inputs coins of `amount` sats, and its prevtxs."""
    tx = unsigned_tx(n_inputs, 1, seed=seed)
    return tx, [prevtx(tx, i, p2wpkh(KEY.pubkey), amount) for i in range(n_inputs)]


class Signing:
    """signrawtransactionwithkey in a thread; .result or .error once joined."""

    def __init__(self, node, tx, entries, sighash=None):
        self.result = self.error = None
        args = [tx.hex(), [KEY.wif], entries] + ([sighash] if sighash else [])
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self._run, args=(node, args))
        self.thread.start()

    def _run(self, node, args):
        try:
            self.result = node.rpc("signrawtransactionwithkey", *args)
        except RPCFailure as e:
            self.error = e

    def join(self):
        self.thread.join(60)
        assert not self.thread.is_alive()
        return self


def _request(node, timeout=10.0):
    """The prompt of the confirmation the device is waiting for, or None."""
    path = _channel(node) / "confirm-request"
    return wait_for(lambda: path.exists() and path.read_text().strip(), timeout)


def _answer(node, answer):
    prompt = _request(node)
    assert prompt, "the device did not ask"
    write_answer(_channel(node), answer)
    return prompt


def _policy_change(node, *args, answer=None):
    """setconfirmationpolicy, answering `answer` on the device if it asks."""
    outcome = {}

    def call():
        try:
            outcome["result"] = node.rpc("setconfirmationpolicy", *args)
        except RPCFailure as e:
            outcome["error"] = e

    worker = threading.Thread(target=call)
    worker.start()
    prompt = _answer(node, answer) if answer else None
    worker.join(30)
    assert not worker.is_alive()
    return outcome, prompt


def _expected_p2wpkh_sig(tx, i, amount):
    return core_ecdsa(KEY.secret, ecdsa_sighash(tx, i, p2pkh(KEY.pubkey), 1, amount), 1)


def test_getdeviceinfo_reports_the_policy_and_the_approver(node):
    info = node.rpc("getdeviceinfo")
    assert info["confirmation"] == {"policy": "always", "approver": "channel",
                                    "timeout_ms": CONFIRM_TIMEOUT_MS}
    assert info["state"] == "idle"


def test_approved_on_the_device_signs_and_the_wait_is_visible(node):
    tx, entries = _tx(2, 50_000, seed=81)
    signing = Signing(node, tx, entries)
    assert _request(node) == "Sign: 2 inputs 0.00100000 BTC, 1 outputs 0.00010000 BTC?"
    started = time.monotonic()
    info = node.rpc("getdeviceinfo")          # does not wait behind the signing call
    assert info["state"] == "awaiting_user" and time.monotonic() - started < 3
    assert "signrawtransactionwithkey" in [c["method"] for c in
                                           node.rpc("getrpcinfo")["active_commands"]]
    # quilld's log says so (the client's once-a-second probe saw it)
    assert wait_for(lambda: "Waiting for confirmation on the device (sign_segwit_v0)"
                    in node.debug_log())
    assert signing.thread.is_alive()
    write_answer(_channel(node), "approve")
    signing.join()
    assert signing.error is None and signing.result["complete"] is True
    signed = Transaction.from_hex(signing.result["hex"])
    for i in range(2):
        assert signed.vin[i].witness == [_expected_p2wpkh_sig(tx, i, 50_000), KEY.pubkey]
    assert not (_channel(node) / "confirm-request").exists()
    assert node.rpc("getdeviceinfo")["state"] == "idle"


def test_refused_on_the_device_is_a_wallet_error_and_nothing_is_signed(node):
    tx, entries = _tx(1, 40_000, seed=82)
    signing = Signing(node, tx, entries)
    _answer(node, "refuse")
    signing.join()
    assert signing.result is None
    assert (signing.error.code, signing.error.message) == (-4, "Signing refused on the device")
    # the session was aborted: the same call asks again and signs once approved
    signing = Signing(node, tx, entries)
    _answer(node, "approve")
    assert signing.join().result["complete"] is True


def test_no_answer_times_out_on_the_device(node):
    tx, entries = _tx(1, 40_000, seed=83)
    signing = Signing(node, tx, entries)
    assert _request(node)
    signing.join()
    elapsed = time.monotonic() - signing.started
    assert signing.result is None
    assert (signing.error.code, signing.error.message) == (-4, "Confirmation timed out on the device")
    assert CONFIRM_TIMEOUT_MS / 1000 <= elapsed < CONFIRM_TIMEOUT_MS / 1000 + 10
    assert not (_channel(node) / "confirm-request").exists()
    assert node.rpc("getdeviceinfo")["state"] == "idle"


def test_a_late_answer_does_not_approve_the_next_request(node):
    write_answer(_channel(node), "approve")   # nobody asked: removed unread by the next question
    tx, entries = _tx(1, 40_000, seed=84)
    signing = Signing(node, tx, entries)
    assert _request(node)
    time.sleep(0.3)
    assert signing.thread.is_alive()
    write_answer(_channel(node), "refuse")
    assert signing.join().error.code == -4


def test_policy_changes_always_above_never_and_back(node):
    below, below_entries = _tx(1, 30_000, seed=85)       # moves 0.0003 BTC
    above, above_entries = _tx(2, 50_000, seed=86)       # moves 0.001 BTC

    # loosening always -> above needs the device; refused first, then approved
    outcome, prompt = _policy_change(node, "above", 0.0005, answer="refuse")
    assert prompt == "Change policy from confirm always to confirm above 0.00050000 BTC?"
    assert (outcome["error"].code, outcome["error"].message) == \
        (-4, "Policy change refused on the device")
    assert node.rpc("getdeviceinfo")["confirmation"]["policy"] == "always"
    outcome, _ = _policy_change(node, "above", 0.0005, answer="approve")
    result = outcome["result"]
    assert (result["policy"], str(result["amount"])) == ("above", "0.00050000")
    shown = node.rpc("getdeviceinfo")["confirmation"]
    assert (shown["policy"], str(shown["amount"])) == ("above", "0.00050000")
    policy_file = _channel(node) / "confirm_policy.json"
    assert policy_file.read_text() in ('{"policy": "above", "amount": 50000}',
                                       '{"amount": 50000, "policy": "above"}')

    # below the threshold: signed without a question; above it: asked
    assert Signing(node, below, below_entries).join().result["complete"] is True
    signing = Signing(node, above, above_entries)
    _answer(node, "approve")
    assert signing.join().result["complete"] is True
    # a signature that does not commit to the outputs asks whatever the amount
    signing = Signing(node, below, below_entries, sighash="NONE")
    assert "outputs not committed" in _answer(node, "approve")
    assert signing.join().result["complete"] is True

    # tightening (a lower threshold) takes effect without a question
    outcome, _ = _policy_change(node, "above", 0.0001)
    assert str(outcome["result"]["amount"]) == "0.00010000"
    signing = Signing(node, below, below_entries)
    _answer(node, "approve")
    assert signing.join().result["complete"] is True

    # loosening to never: confirmed on the device; then nothing asks
    outcome, prompt = _policy_change(node, "never", answer="approve")
    assert outcome["result"] == {"policy": "never"}
    assert prompt == "Change policy from confirm above 0.00010000 BTC to confirm never?"
    assert node.rpc("getdeviceinfo")["confirmation"]["policy"] == "never"
    assert Signing(node, above, above_entries).join().result["complete"] is True

    # back to always: tightening, no question; signing asks again
    outcome, _ = _policy_change(node, "always")
    assert outcome["result"] == {"policy": "always"}
    assert node.rpc("getdeviceinfo")["confirmation"]["policy"] == "always"
    signing = Signing(node, below, below_entries)
    _answer(node, "approve")
    assert signing.join().result["complete"] is True


def test_bad_policy_requests_are_clear_errors(node):
    with pytest.raises(RPCFailure) as e:
        node.rpc("setconfirmationpolicy", "sometimes")
    assert (e.value.code, e.value.message) == (-8, "Device error: policy must be always, above or never")
    with pytest.raises(RPCFailure) as e:
        node.rpc("setconfirmationpolicy", "above")
    assert e.value.code == -8 and "needs an amount" in e.value.message
    with pytest.raises(RPCFailure) as e:
        node.rpc("setconfirmationpolicy", "above", "lots")
    assert (e.value.code, e.value.message) == (-3, "Invalid amount")
    assert node.rpc("getdeviceinfo")["confirmation"]["policy"] == "always"
