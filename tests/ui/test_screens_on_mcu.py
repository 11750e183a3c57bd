"""The emulated device shows its screen on the Cortex-M0+ target too (issue 26, item 5):
the same firmware code draws there, and its frames reach quill-emu on the board's second
UART (firmware/emulator_frames.py), which writes them as the unix port does. The same
signrawtransactionwithkey through quilld -emutarget=qemu-m0plus, at the target's default
panel (the Pico's), draws screens whose text equals the unix port's and whose PNGs hash
equal; the debug link reads and presses there (--approve=channel), the link untouched."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator, confirmation_options
from quillfw.wire.errors import USER_CANCELLED
from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import p2wpkh, prevtx, unsigned_tx
from tests.ui.screenkit import AwaitingUser, lines, png_size, press, screens, wait_layout, wait_screens
from tests.ui.test_review_signraw import KEY, _outputs

PANEL = {"panel": "st7789", "width": 240, "height": 240}


def _signed(base: Path, *options: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(getdeviceinfo, signrawtransactionwithkey's result, the screens' folder) of one
    transaction of every output type, signed through quilld's emulated device."""
    tx = unsigned_tx(2, 0, seed=26, locktime=800_000)
    tx.vout = _outputs()
    amount = (sum(o.value for o in tx.vout) + 1500) // 2
    entries = [prevtx(tx, i, p2wpkh(KEY.pubkey), amount) for i in range(2)]
    folder = base / "screens"
    with QuillDaemon(base / "quilld", "-device=emulator", *options, f"-emuscreen={folder}") as node:
        info = node.rpc("getdeviceinfo")
        result = node.rpc("signrawtransactionwithkey", tx.hex(), [KEY.wif], entries, "ALL|ANYONECANPAY")
        # the frames reach quill-emu beside the link: its files may come a moment after the answer
        wait_screens(folder, "review", len(screens(folder)) or 1)
    return info, result, folder


def _drawn(folder: Path) -> list[tuple[str, list[str], str]]:
    """Each screen drawn: its file name, its text and its picture's SHA-256."""
    return [(p.name, lines(p), hashlib.sha256(p.with_suffix(".png").read_bytes()).hexdigest())
            for p in screens(folder)]


@pytest.fixture(scope="module")
def unix_port(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path]:
    return _signed(tmp_path_factory.mktemp("unix"), "-emudisplay=st7789-240x240", "-emuseed=none")


def test_the_cortex_m0plus_draws_the_unix_ports_screens(unix_port: Any, tmp_path: Path) -> None:
    qemu_target(MCU_TARGET)
    info, result, folder = _signed(tmp_path, f"-emutarget={MCU_TARGET}")   # the target's default panel
    unix_info, unix_result, unix_folder = unix_port
    assert info["target"] == MCU_TARGET and unix_info["target"] == "unix"
    assert {k: info["display"][k] for k in PANEL} == PANEL == {k: unix_info["display"][k] for k in PANEL}
    assert result == unix_result and result["complete"] is True
    want = _drawn(unix_folder)
    deadline = time.monotonic() + 30
    while len(screens(folder)) < len(want) and time.monotonic() < deadline:
        time.sleep(0.1)
    got = _drawn(folder)
    assert [name for name, _, _ in want] == [f"{n:06d}-review.txt" for n in range(1, len(want) + 1)]
    assert len(want) >= 2                                   # pages of one review, each its own picture
    assert got == want
    text = want[0][1]
    assert text[0] == "Send bitcoin" and any(line.startswith("Fee: ") for line in text)
    assert "Warning: locktime block 800000: not final until then" in text
    assert png_size(folder / want[0][0].replace(".txt", ".png")) == (240, 240)
    assert not list(folder.glob("*.tmp"))


def test_the_debug_link_presses_on_the_cortex_m0plus(tmp_path: Path) -> None:
    """--approve=channel on a qemu board (no filesystem: the debug link's presses only):
    loosening the confirmation policy is asked on the panel, refused with reject, then
    approved on its last page; each page drawn is in the screens' folder."""
    qemu_target(MCU_TARGET)
    folder = tmp_path / "screens"
    folder.mkdir()
    options = confirmation_options("channel", tmp_path / "flash") + [
        "--display", "ssd1306-128x64", "--screen-dir", str(folder)]
    with Emulator(target=MCU_TARGET, confirmation=options) as emu, \
            DeviceClient(emu.port, short_timeout=60) as client:
        for answer in ("reject", "approve"):
            loosening = AwaitingUser(client, "set_confirm_policy", {"policy": "never"})
            layout = wait_layout(client, 0, "policy", timeout=60)
            for page in range(1, layout["pages"]):
                press(client, "next")
                wait_layout(client, page, "policy", timeout=60)
            press(client, answer)
            loosening.join(60)
            if answer == "reject":
                assert loosening.error is not None and loosening.error.code == USER_CANCELLED
        assert loosening.error is None and loosening.result == {"policy": "never"}
        assert client.get_info()["confirmation"]["policy"] == "never"
        shown = layout["lines"]
        drawn = wait_screens(folder, "policy", 2 * layout["pages"])
        deadline = time.monotonic() + 30
        while not screens(folder, "error") and time.monotonic() < deadline:
            time.sleep(0.1)
    assert [lines(p) for p in drawn] == [shown] * (2 * layout["pages"])
    assert [lines(p) for p in screens(folder, "error")] == [["Refused", "Nothing was done."]]
    assert all(png_size(p.with_suffix(".png")) == (128, 64) for p in drawn)


def test_ask_needs_the_unix_target() -> None:
    proc = subprocess.run([sys.executable, "-m", "quill.emulator.main", "--target=qemu-m0plus",
                           "--approve=ask"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--approve=ask needs the unix target" in proc.stderr, proc.stderr
