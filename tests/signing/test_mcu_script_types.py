"""quilld signing every script type with every sighash type through the Cortex-M0+
target (quilld -device=emulator -emutarget=qemu-m0plus: 32-bit MicroPython, the
Pico's heap), byte for byte against the references of test_rpc_script_types; and
getdeviceinfo naming the target and its boot."""
import pytest

from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import SIGHASH_NAMES, SIGHASH_VALUES
from tests.signing.test_rpc_script_types import WIFS, _corpus_tx, _prevtxs, expected_signed


@pytest.fixture(scope="module")
def mcu_node(tmp_path_factory):
    qemu_target(MCU_TARGET)
    with QuillDaemon(tmp_path_factory.mktemp("mcu"), "-device=emulator",
                     f"-emutarget={MCU_TARGET}") as d:
        yield d


def test_getdeviceinfo_names_the_target_and_its_boot(mcu_node):
    info = mcu_node.rpc("getdeviceinfo")
    assert info["target"] == MCU_TARGET
    assert len(info["boot_id"]) == 16 and int(info["boot_id"], 16) >= 0
    assert info["selftest"] == "ok" and info["implementation"] == "micropython"


@pytest.mark.parametrize("sighash", SIGHASH_NAMES)
def test_every_script_type_signs_as_core_on_the_cortex_m0plus(mcu_node, sighash):
    tx = _corpus_tx()
    result = mcu_node.rpc("signrawtransactionwithkey", tx.hex(), WIFS, _prevtxs(tx), sighash)
    assert result == {"hex": expected_signed(tx, SIGHASH_VALUES[sighash]).hex(), "complete": True}
