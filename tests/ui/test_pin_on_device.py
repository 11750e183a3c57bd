"""A PIN entered on the device's buttons (issue 26), driven through quill-emu's debug
link at the smallest board's heap with its SSD1306 panel: unlock without a PIN asks for
it on the device, the right one unlocks, and ten wrong ones wipe the seed, as the
keys' own rule does for PINs sent over the link. The PIN is in no byte of the link."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quillfw.wire.errors import INVALID_PARAMS, LOCKED
from tests.keys.emulated import TEST_MNEMONIC, EmulatedDevice
from tests.ui.test_seed_on_device import Tapped

PIN = "2580"
WRONG = "1111"
ATTEMPTS = 10


def _presses(pin: str) -> list[str]:
    """Each digit from 0 (next d times, approve), then "done" (two back from 0)."""
    out: list[str] = []
    for digit in pin:
        out += ["next"] * int(digit) + ["approve"]
    return out + ["prev", "prev", "approve"]


def _unlock_on_buttons(client: DeviceClient, *pins: str, method: str = "unlock") -> dict[str, Any]:
    """method (unlock, or change_pin: the current PIN and the new one twice), each PIN on
    the buttons once the device asks for it."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = client.call(method, {}, awaits_user=True)
        except DeviceError as e:
            out["error"] = e
    thread = threading.Thread(target=run)
    thread.start()
    for pin in pins:
        deadline = time.monotonic() + 60
        while client.ping() != "awaiting_user":
            assert time.monotonic() < deadline and thread.is_alive(), out
            time.sleep(0.05)
        layout = client.out_of_band("debug_layout")
        assert layout["name"] == "pin" and layout["lines"] is None      # the digits stay on the panel
        for button in _presses(pin):
            client.out_of_band("debug_press", {"button": button})
        # this entry is done: the device works (the PIN's key) or asks for the next one
        while thread.is_alive() and client.ping() == "awaiting_user" and \
                client.out_of_band("debug_layout")["title"] == layout["title"]:
            time.sleep(0.05)
    thread.join(120)
    assert not thread.is_alive()
    return out


def test_the_pin_on_the_buttons_unlocks_and_ten_wrong_ones_wipe(tmp_path: Path) -> None:
    folder = tmp_path / "screens"
    device = EmulatedDevice(tmp_path / "emu", "--keys", "--approve=channel", "--display=ssd1306-128x64",
                            f"--screen-dir={folder}")
    with device, Tapped(device.port, short_timeout=60) as client:
        restored = client.call("seed_restore", {"mnemonic": TEST_MNEMONIC, "pin": PIN}, timeout=120)
        client.call("lock")
        client.seen.clear()             # from here on, the PIN must not cross the link
        assert client.get_info()["keys"]["state"] == "locked"
        unlocked = _unlock_on_buttons(client, PIN)
        assert unlocked == {"result": {"fingerprint": restored["fingerprint"]}}
        assert client.get_info()["keys"]["state"] == "unlocked"
        assert PIN.encode() not in client.seen
        drawn = sorted(folder.glob("*-pin.txt"))
        assert len(drawn) == len(_presses(PIN))     # the first, then one per press but the last
        assert drawn[-1].read_text().splitlines()[1:] == ["PIN: ****", "Choose: done"]
        client.call("lock")
        for attempt in range(1, ATTEMPTS + 1):
            wrong = _unlock_on_buttons(client, WRONG)["error"]
            assert wrong.code == LOCKED
            if attempt < ATTEMPTS:
                assert wrong.data == "wrong_pin" and f"{ATTEMPTS - attempt} attempts left" in wrong.message
        assert wrong.data == "wiped"
        assert client.get_info()["keys"]["state"] == "uninitialized"
    assert not (device.datadir / "seed.bin").exists()


def test_the_pin_changes_on_the_buttons(tmp_path: Path) -> None:
    device = EmulatedDevice(tmp_path / "emu", "--keys", "--approve=channel", "--display=ssd1306-128x64")
    with device, Tapped(device.port, short_timeout=60) as client:
        restored = client.call("seed_restore", {"mnemonic": TEST_MNEMONIC, "pin": PIN}, timeout=120)
        client.seen.clear()
        differ = _unlock_on_buttons(client, PIN, "13579", "13570", method="change_pin")["error"]
        assert differ.code == INVALID_PARAMS and "differ" in differ.message
        changed = _unlock_on_buttons(client, PIN, "13579", "13579", method="change_pin")
        assert changed == {"result": {"fingerprint": restored["fingerprint"]}}
        client.call("lock")
        assert _unlock_on_buttons(client, PIN)["error"].data == "wrong_pin"
        assert _unlock_on_buttons(client, "13579") == {"result": {"fingerprint": restored["fingerprint"]}}
        assert not [p for p in (PIN, "13579") if p.encode() in client.seen]


def test_a_device_without_a_display_needs_the_pin_in_the_request(tmp_path: Path) -> None:
    device = EmulatedDevice(tmp_path / "emu", "--keys", "--display=none")
    with device, DeviceClient(device.port, short_timeout=60) as client:
        client.call("seed_restore", {"mnemonic": TEST_MNEMONIC, "pin": PIN}, timeout=120)
        client.call("lock")
        try:
            client.call("unlock", {})
        except DeviceError as e:
            assert e.code == INVALID_PARAMS and "Missing parameter 'pin'" in e.message
        else:
            raise AssertionError("unlocked without a PIN")
