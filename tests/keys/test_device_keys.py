"""The seed on the emulated device at the smallest board's heap (97K), through
the real quill-emu and the protocol: --test-mnemonic, set-up with a PIN,
wrong PINs that wipe the seed, lock, and what never leaves the device."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quillfw.wire.errors import INVALID_PARAMS, LOCKED
from tests.keys.emulated import (
    DEFAULT_BOARD,
    SMALLEST_BOARD,
    TEST_MNEMONIC,
    VENV_BIN,
    EmulatedDevice,
    process_command_lines,
)

FINGERPRINT = bytes.fromhex("73c5da0a")
TPUB_84_1_0 = ("tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxys"
               "QAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M")
PIN = "8642"
SLOW = 300.0  # BIP39's 2048 rounds of SHA-512 in MicroPython at 97K: 15 s here, more under load


def test_test_mnemonic_starts_unlocked_with_its_keys(tmp_path: Path) -> None:
    with EmulatedDevice(tmp_path, f"--test-mnemonic={TEST_MNEMONIC}", board=SMALLEST_BOARD) as device, \
            DeviceClient(device.port) as client:
        info = client.get_info()
        assert info["keys"]["state"] == "unlocked" and info["keys"]["pin_set"] is False
        assert {"seed", "bip32"} <= set(info["capabilities"])
        got = client.call("get_xpub", {"path": "m/84h/1h/0h", "network": "test"})
        assert got == {"xpub": TPUB_84_1_0, "fingerprint": FINGERPRINT}
        assert client.get_info()["keys"]["fingerprint"] == FINGERPRINT
        # the firmware process never sees the words; only quill-emu's own argv has them
        firmware = [line for line in process_command_lines() if "micropython" in line]
        assert firmware and not any("abandon" in line for line in firmware)
        assert not (device.datadir / "seed.bin").read_bytes().count(b"abandon")
    assert "abandon" not in device.log()


def test_a_bad_test_mnemonic_is_refused_without_quoting_it(tmp_path: Path) -> None:
    device = EmulatedDevice(tmp_path, "--test-mnemonic=abandon " * 12, board=SMALLEST_BOARD)
    with pytest.raises(RuntimeError, match="not a valid BIP39") as e:
        device.start()
    assert "abandon" not in str(e.value)


def test_options_a_qemu_target_cannot_honour_are_refused() -> None:
    for option, message in ((f"--test-mnemonic={TEST_MNEMONIC}", "--test-mnemonic needs the unix target"),
                            ("--frozen", "--frozen is for the unix target")):
        proc = subprocess.run([str(VENV_BIN / "quill-emu"), "--target=qemu-m4", option],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "abandon" not in proc.stderr


@pytest.mark.parametrize("board", [SMALLEST_BOARD, DEFAULT_BOARD])   # and quill-emu at its defaults
def test_restore_lock_restart_wrong_pins_wipe_generate(tmp_path: Path, board: str) -> None:
    # a device without a display: seed_generate answers with the words (one with a display
    # shows them on its screen only: tests/ui/test_seed_on_device.py)
    device = EmulatedDevice(tmp_path, "--display=none", board=board)
    with device, DeviceClient(device.port) as client:
        assert client.get_info()["keys"]["state"] == "uninitialized"
        with pytest.raises(DeviceError) as e:
            client.call("get_xpub", {"path": "m/84h/1h/0h"})
        assert e.value.code == LOCKED and e.value.data == "no_seed"
        with pytest.raises(DeviceError) as e:
            client.call("seed_restore", {"mnemonic": TEST_MNEMONIC.replace("about", "zoo"),
                                         "pin": PIN}, timeout=SLOW)
        assert e.value.code == INVALID_PARAMS and "zoo" not in e.value.message
        restored = client.call("seed_restore", {"mnemonic": TEST_MNEMONIC, "pin": PIN},
                               timeout=SLOW)
        assert restored == {"fingerprint": FINGERPRINT}
        client.call("lock")
        keys = client.get_info()["keys"]
        assert keys["state"] == "locked" and "fingerprint" not in keys
        with pytest.raises(DeviceError) as e:
            client.call("get_xpub", {"path": "m/84h/1h/0h"})
        assert e.value.code == LOCKED and e.value.data == "locked"
        assert client.call("unlock", {"pin": PIN}) == {"fingerprint": FINGERPRINT}
        assert client.call("get_xpub", {"path": "m/84h/1h/0h", "network": "test"})["xpub"] == TPUB_84_1_0
    raw = (device.datadir / "seed.bin").read_bytes()
    assert b"abandon" not in raw and PIN.encode() not in raw
    # a new boot finds the seed locked; wrong PINs count down and the last one wipes
    with device, DeviceClient(device.port) as client:
        keys = client.get_info()["keys"]
        assert keys["state"] == "locked"
        attempts = keys["max_pin_attempts"]
        for left in range(attempts - 1, 0, -1):
            with pytest.raises(DeviceError) as e:
                client.call("unlock", {"pin": "0000"})
            assert e.value.data == "wrong_pin" and f"{left} attempts left" in e.value.message
        with pytest.raises(DeviceError) as e:
            client.call("unlock", {"pin": "0000"})
        assert e.value.data == "wiped"
        assert not (device.datadir / "seed.bin").exists()
    # the next start shows an uninitialised device, which can generate a seed
    with device, DeviceClient(device.port) as client:
        assert client.get_info()["keys"]["state"] == "uninitialized"
        generated = client.call("seed_generate", {"words": 12, "pin": PIN, "entropy": bytes(32)},
                                timeout=SLOW)
        seen = [line for line in process_command_lines() if str(device.datadir) in line]
        assert len(seen) == 2   # quill-emu and the firmware it runs
        assert len(generated["mnemonic"].split()) == 12
        assert client.get_info()["keys"]["fingerprint"] == generated["fingerprint"]
    assert generated["mnemonic"].split()[0].encode() not in (device.datadir / "seed.bin").read_bytes()
    for secret in (PIN, "abandon", generated["mnemonic"]):
        assert secret not in device.log()
        assert not any(secret in line for line in seen)
