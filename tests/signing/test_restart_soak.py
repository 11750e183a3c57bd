"""The firmware killed at random points while quilld signs (issue 11's restart
soak): every call the kill lands in fails with -1 'Device restarted during signing'
or, when the kill came after the device's last answer, returns the complete,
correct transaction; no call ever returns a wrong signature; the next call always
signs. The suite runs KILLS kills (QUILL_SOAK_KILLS=50 for the full soak)."""
import os
import random

from tests.signing.signkit import firmware_pid, wait_for
from tests.signing.test_rpc_device_failures import MARKED, _legacy_tx, kill_mid_signing, signing_seconds

KILLS = int(os.environ.get("QUILL_SOAK_KILLS", "8"))
RESTARTED = (-1, "Device restarted during signing")


def test_random_kills_during_signing(node):
    tx, entries = _legacy_tx()
    reference = node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif], entries)
    assert reference["complete"] is True
    duration = signing_seconds(node, tx, entries)
    rng = random.Random(1111)
    failed = completed = 0
    for _ in range(KILLS):
        outcome, in_flight = kill_mid_signing(node, tx, entries, rng.uniform(0, duration))
        if "result" in outcome:
            assert outcome["result"] == reference       # complete only when complete and right
            completed += 1
        else:
            error = outcome["error"]
            assert in_flight
            assert (error.code, error.message) == RESTARTED, error.message
            failed += 1
        assert wait_for(lambda: firmware_pid(node))
        # the next call signs normally
        assert node.rpc("signrawtransactionwithkey", tx.hex(), [MARKED.wif], entries) == reference
    assert failed > 0          # the kills did land inside calls
    print(f"{KILLS} kills: {failed} calls failed with the restart error, {completed} had completed")
