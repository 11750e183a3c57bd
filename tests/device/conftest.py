import pytest

from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator
from tests.device.rawlink import IDLE_MS, RawLink, check_cddl


@pytest.fixture(scope="session")
def emulator():
    with Emulator(heapsize="97K", idle_ms=IDLE_MS) as emu:
        yield emu


@pytest.fixture
def raw(emulator):
    link = RawLink(emulator.port)
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
