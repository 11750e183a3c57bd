"""The buttons, driven through quill-emu's debug link (debug_layout, debug_press) at the
smallest board's heap with its SSD1306 panel (issue 26): the address check pages with
next and prev, approve counts only on the last page, reject works on any page, no press
is the confirmation's timeout, and every page drawn is a PNG of the panel's size with the
screen's text beside it."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quillfw.wire.errors import CONFIRM_TIMEOUT, INVALID_PARAMS, USER_CANCELLED
from tests.keys.emulated import TEST_MNEMONIC, EmulatedDevice
from tests.ui.screenkit import AwaitingUser, lines, png_size, press, screens, wait_layout

TIMEOUT_MS = 4000
PATH = "m/84h/1h/0h/0/0"
ADDRESS = "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk"       # BIP84's first, "abandon ... about"


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("debuglink")
    with EmulatedDevice(base / "emu", f"--test-mnemonic={TEST_MNEMONIC}", "--approve=channel",
                        "--display=ssd1306-128x64", f"--screen-dir={base / 'screens'}",
                        f"--confirm-timeout-ms={TIMEOUT_MS}") as emu, \
            DeviceClient(emu.port, short_timeout=60) as client:
        yield client, base / "screens"


def Asking(client: DeviceClient) -> AwaitingUser:
    """display_address, waiting for the user on a thread."""
    return AwaitingUser(client, "display_address", {"path": PATH, "script_type": "p2wpkh",
                                                    "network": "regtest"})


def test_approve_counts_on_the_last_page_only(device: Any) -> None:
    client, folder = device
    before = len(screens(folder))
    asking = Asking(client)
    first = wait_layout(client, 0)
    assert first["name"] == "address" and first["pages"] == 2
    assert first["lines"] == ["Check address", f"Address: {ADDRESS}", f"Path: {PATH}"]
    press(client, "approve")                       # not on the first page: nothing
    time.sleep(0.3)
    assert asking.thread.is_alive() and client.out_of_band("debug_layout")["page"] == 0
    press(client, "next")
    wait_layout(client, 1)
    press(client, "prev")
    wait_layout(client, 0)
    press(client, "next")
    wait_layout(client, 1)
    press(client, "approve")
    assert asking.join().error is None and asking.result == {"address": ADDRESS}
    drawn = screens(folder)[before:]
    assert [p.stem[7:] for p in drawn] == ["address"] * 4        # pages 1, 2, 1, 2
    for path in drawn:
        assert lines(path) == first["lines"] and png_size(path.with_suffix(".png")) == (128, 64)
    assert len({p.with_suffix(".png").read_bytes() for p in drawn}) == 2   # two different pages


def test_reject_works_on_any_page(device: Any) -> None:
    client, _ = device
    asking = Asking(client)
    wait_layout(client, 0)
    press(client, "reject")
    error = asking.join().error
    assert error is not None and error.code == USER_CANCELLED
    assert error.message == "Address refused on the device"


def test_no_press_is_the_confirmation_timeout(device: Any) -> None:
    client, _ = device
    started = time.monotonic()
    asking = Asking(client)
    wait_layout(client, 0)
    error = asking.join().error
    assert error is not None and error.code == CONFIRM_TIMEOUT
    assert time.monotonic() - started >= TIMEOUT_MS / 1000


def test_a_refusal_leaves_the_error_screen(device: Any) -> None:
    client, folder = device
    asking = Asking(client)
    wait_layout(client, 0)
    press(client, "reject")
    asking.join()
    assert lines(screens(folder)[-1]) == ["Refused", "Nothing was done."]


def test_presses_before_the_question_do_not_count(device: Any) -> None:
    client, _ = device
    for button in ("next", "approve"):
        press(client, button)
    asking = Asking(client)
    wait_layout(client, 0)
    time.sleep(0.3)
    assert asking.thread.is_alive()
    press(client, "reject")
    assert asking.join().error is not None


def test_an_unknown_button_is_refused(device: Any) -> None:
    client, _ = device
    with pytest.raises(DeviceError) as e:
        client.out_of_band("debug_press", {"button": "select"})
    assert e.value.code == INVALID_PARAMS


def test_getdeviceinfo_names_the_panel_and_its_buttons(device: Any) -> None:
    client, _ = device
    assert client.get_info()["display"] == {
        "panel": "ssd1306", "width": 128, "height": 64,
        "buttons": [{"name": b, "role": b} for b in ("next", "prev", "approve", "reject")]}


def test_the_screen_dir_is_written_whole(device: Any) -> None:
    _, folder = device
    assert not list(Path(folder).glob("*.tmp"))


def test_wipe_is_confirmed_on_the_device(device: Any) -> None:
    client, folder = device
    for answer in ("reject", "approve"):
        wiping = AwaitingUser(client, "wipe")
        layout = wait_layout(client, 0)
        assert layout["name"] == "wipe" and layout["title"] == "Wipe the seed?"
        for _ in range(layout["pages"] - 1):
            press(client, "next")
        wait_layout(client, layout["pages"] - 1)
        press(client, answer)
        wiping.join()
        if answer == "reject":
            assert wiping.error is not None and wiping.error.message == "Wipe refused on the device"
            assert client.get_info()["keys"]["state"] == "unlocked"
    assert wiping.error is None and wiping.result is None
    assert client.get_info()["keys"]["state"] == "uninitialized"
