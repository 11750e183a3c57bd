import pytest

from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator
from tests.device.rawlink import IDLE_MS, RawLink, check_cddl
from tests.kit import boards
from tests.kit.qemu import MCU_TARGET, qemu_target


# Package scope: each emulator ends with tests/device. A session-scoped QEMU stayed up, polling
# its UART, for the rest of the suite: ~0.65 of one of CI's two cores, for three quarters of the run.
@pytest.fixture(scope="package")
def unix_emulator():
    """The firmware on the unix port modelling the smallest board (the pyboard: 97K, the
    firmware frozen; tests that time the device: the qemu target's clock runs slower
    than the host's while it computes)."""
    with Emulator(board=boards.ready(boards.SMALLEST_BOARD), idle_ms=IDLE_MS) as emu:
        yield emu


@pytest.fixture(scope="package")
def mcu_emulator():
    qemu_target(MCU_TARGET)
    with Emulator(heapsize=None, idle_ms=IDLE_MS, target=MCU_TARGET) as emu:
        yield emu


@pytest.fixture(params=["unix", MCU_TARGET])
def emulator(request):
    """The firmware behind a pty: on the unix port as the smallest board, and on
    the Cortex-M0+ target (32-bit, the Pico's heap) under QEMU."""
    return request.getfixturevalue("unix_emulator" if request.param == "unix" else "mcu_emulator")


@pytest.fixture
def raw(emulator):
    link = RawLink(emulator.port)
    # how long to pause for a partial frame to go stale: the device's idle timeout on
    # its own clock, which on the qemu target runs up to ~2x slower while it computes
    link.stale_s = IDLE_MS / 1000 * (2 if emulator.target == "unix" else 6)
    yield link
    link.close()


@pytest.fixture
def client(emulator):
    """A client whose every received message is checked against quill.cddl."""
    with DeviceClient(emulator.port, probe_interval=0.5) as c:
        deliver = c._deliver

        def checked(message):
            check_cddl(message)
            deliver(message)
        c._deliver = checked
        yield c
