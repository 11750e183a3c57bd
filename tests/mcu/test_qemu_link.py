"""quill-emu on a qemu target favours QEMU's I/O thread (quill.emulator.qemu.favour_io_thread):
every byte to the firmware waits for that thread through the one-byte UART, so on a
loaded machine its priority sets the link's speed. The vCPU thread, which runs the
firmware, keeps the ordinary priority."""
import os
from pathlib import Path

import pytest

from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator
from quill.emulator.qemu import IO_THREAD_NICE
from tests.kit.qemu import MCU_TARGET, qemu_target


def nice(pid: int, tid: int) -> int:
    # /proc/PID/task/TID/stat: field 19 is the nice value; the name (field 2) may hold spaces
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])


def qemu_pid(serve_pid: int) -> int:
    children = Path(f"/proc/{serve_pid}/task/{serve_pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


@pytest.mark.skipif(os.geteuid() != 0, reason="a nice value below 0 needs root (CI runs as root)")
def test_qemus_io_thread_is_favoured_and_the_vcpu_is_not():
    qemu_target(MCU_TARGET)
    with Emulator(heapsize=None, target=MCU_TARGET) as emu, DeviceClient(emu.port) as client:
        assert client.ping(timeout=60) == "idle"        # the firmware serves: the board is up
        pid = qemu_pid(emu.pid)
        threads = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
        assert nice(pid, pid) == IO_THREAD_NICE
        others = [nice(pid, t) for t in threads if t != pid]
        assert others and all(n == os.getpriority(os.PRIO_PROCESS, 0) for n in others), others
