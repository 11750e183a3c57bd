"""A suite-sized run of the mixed-transaction soak (tests/signing/mixed_soak.py runs
the full 1,000): mixed script and sighash types, every call complete, no
out-of-memory error, on the unix port and on the Cortex-M0+ target."""
import pytest

from tests.kit import boards
from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.mixed_soak import soak


@pytest.mark.parametrize("target", ["unix", MCU_TARGET])
def test_mixed_transactions_all_sign(tmp_path, target):
    options = ["-device=emulator", f"-emutarget={target}"]
    if target == "unix":
        options.append(f"-emuboard={boards.ready(boards.SMALLEST_BOARD)}")
    else:
        qemu_target(target)
    with QuillDaemon(tmp_path, *options) as node:
        figures, failures = soak(node, 12, seed=7, max_inputs=40, target=target)
    assert figures["transactions"] == 12 and figures["inputs"] > 12
    assert figures["signatures"] == figures["inputs"]
    assert not failures, dict(failures)
