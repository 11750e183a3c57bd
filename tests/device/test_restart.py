"""The device going away mid-request: the host reports a clear error, then recovers."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from quill.device.client import DeviceClient
from quill.device.errors import DeviceUnavailable
from quill.device.manager import DeviceManager
from quill.emulator.launcher import Emulator
from quill.handlers.errors import to_rpc_error
from tests.kit.boards import DEFAULT_BOARD


def test_firmware_killed_and_restarted_mid_request():
    with Emulator(board=DEFAULT_BOARD, idle_ms=300) as emu, DeviceClient(emu.port, probe_interval=0.3) as client:
        assert client.ping() == "idle"
        restarts = emu.restarts
        threading.Timer(0.3, emu.kill_firmware).start()
        with pytest.raises(DeviceUnavailable) as e:
            client.call("debug_sleep", {"ms": 5000, "awaiting_user": True}, awaits_user=True)
        assert "lost the debug_sleep request" in str(e.value)
        assert to_rpc_error(e.value).code == -1
        assert emu.wait_restarted(restarts)
        assert client.ping() == "idle"
        assert client.get_info()["protocol_version"] == 1


def test_emulator_process_killed_then_manager_reconnects(tmp_path):
    manager = DeviceManager("emulator", datadir=tmp_path, emulator_args=["--board", DEFAULT_BOARD])
    try:
        client = manager.client()
        first = manager.info()
        proc = manager._emulator[0]
        errors = []

        def long_call():
            try:
                client.call("debug_sleep", {"ms": 5000}, awaits_user=True)
            except DeviceUnavailable as e:
                errors.append(e)
        thread = threading.Thread(target=long_call)
        thread.start()
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)   # quill-emu gone, its pty with it
        thread.join(10)
        assert errors and "Device disconnected" in str(errors[0])
        assert not client.connected
        # the next use starts a new emulator and a new connection
        assert manager.client() is not client
        assert manager.client().ping() == "idle"
        assert manager.info()["firmware_version"] == first["firmware_version"]
        assert (tmp_path / "quill-emu.log").exists()
    finally:
        manager.close()


def test_a_vanished_pty_means_a_new_emulator_even_while_the_old_one_is_dying(tmp_path):
    """Between a killed quill-emu closing its pty and waitpid seeing it gone, poll() still says
    running (the CI run under load met this window): the manager must not reopen the dead pty."""
    manager = DeviceManager("emulator", datadir=tmp_path, emulator_args=["--board", DEFAULT_BOARD])
    assert manager.client().ping() == "idle"
    real = manager._emulator
    try:
        dying = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE)
        manager._emulator = (dying, "/dev/pts/quill-test-gone")
        manager._client.close()
        client = manager.client()
        assert client.ping() == "idle"
        assert manager._emulator[1] != "/dev/pts/quill-test-gone"
        assert dying.poll() is not None        # the stand-in was stopped, not left running
    finally:
        manager.close()
        real[0].kill()
        real[0].wait()
        real[0].stdout.close()
