"""The host side of the user confirmation without quilld: the client's long
timeout and its log line, quill-emu's --approve=ask on a terminal (a pty
standing in for its controlling tty), and its refusal to start without one."""
import logging
import os
import subprocess
import sys
import time

import pytest

from quill.device.client import DeviceClient
from quill.device.errors import DeviceTimeout
from quill.emulator.asker import NoTerminal, TerminalAsker, write_answer


def test_a_call_awaiting_the_user_stops_at_the_user_timeout_and_says_it_waits(unix_emulator, caplog):
    with DeviceClient(unix_emulator.port, probe_interval=0.2, user_timeout=1.0) as client:
        started = time.monotonic()
        with caplog.at_level(logging.INFO, logger="quill.device"):
            with pytest.raises(DeviceTimeout, match="did not answer debug_sleep within 1 s"):
                client.call("debug_sleep", {"ms": 3000, "awaiting_user": True}, awaits_user=True)
        assert 0.9 < time.monotonic() - started < 2.5
        assert "Waiting for confirmation on the device (debug_sleep)" in caplog.text
        # the device finishes its sleep; the next call is answered
        deadline = time.monotonic() + 5
        while client.ping() != "idle" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.call("get_info")["confirmation"]["approver"] == "auto"


def _pty_asker(tmp_path):
    master, slave = os.openpty()
    asker = TerminalAsker(tmp_path, tty=os.ttyname(slave))
    return master, slave, asker.start()


def _read_until(fd, text, timeout=5.0):
    seen = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen and time.monotonic() < deadline:
        seen += os.read(fd, 1024)
    return seen.decode()


@pytest.mark.parametrize("typed, answer", [("y\n", "approve"), ("yes\n", "approve"),
                                           ("n\n", "refuse"), ("\n", "refuse")])
def test_ask_shows_the_prompt_on_the_terminal_and_answers(tmp_path, typed, answer):
    master, slave, asker = _pty_asker(tmp_path)
    try:
        (tmp_path / "confirm-request").write_text("Sign: 1 inputs 0.00050000 BTC?\n")
        shown = _read_until(master, "[y/N] ")
        assert "quill-emu: Sign: 1 inputs 0.00050000 BTC? [y/N] " in shown
        os.write(master, typed.encode())
        deadline = time.monotonic() + 5
        while not (tmp_path / "confirm-answer").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (tmp_path / "confirm-answer").read_text().strip() == answer
        # the same request is not asked twice
        (tmp_path / "confirm-answer").unlink()
        time.sleep(0.2)
        assert not (tmp_path / "confirm-answer").exists()
    finally:
        asker.stop()
        os.close(master)
        os.close(slave)


def test_write_answer_accepts_only_approve_or_refuse(tmp_path):
    with pytest.raises(ValueError):
        write_answer(tmp_path, "maybe")
    write_answer(tmp_path, "refuse")
    assert (tmp_path / "confirm-answer").read_text() == "refuse\n"


def test_ask_needs_a_terminal(tmp_path):
    with pytest.raises(NoTerminal, match="--approve=ask needs a terminal"):
        TerminalAsker(tmp_path, tty=str(tmp_path / "no-tty"))
    # quill-emu in a new session has no controlling terminal: a clear error, no port
    proc = subprocess.run([sys.executable, "-m", "quill.emulator.main", "--approve=ask",
                           "--datadir", str(tmp_path)], capture_output=True, text=True,
                          timeout=30, start_new_session=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "quill-emu: --approve=ask needs a terminal (/dev/tty: " in proc.stderr


def test_channel_needs_a_datadir():
    proc = subprocess.run([sys.executable, "-m", "quill.emulator.main", "--approve=channel"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "--approve=channel needs --datadir" in proc.stderr
