"""quill-emu models a named board (quill.emulator.models): with no options the Raspberry
Pi Pico, its heap, its firmware imported from .mpy files into that heap, and its native
crypto module; --board names another; get_info's "board" names the one modelled;
--heapsize and --firmware are experiments on top of it."""
import subprocess
import sys
import time

import pytest

from quill.device.client import DeviceClient
from quill.emulator import models
from quill.emulator.launcher import Emulator, mpy_tree
from tests.keys.emulated import process_command_lines

VENV_BIN = sys.executable.rsplit("/", 1)[0]


def _quill_emu(tmp_path, *args):
    port_file = tmp_path / "port"
    proc = subprocess.Popen([f"{VENV_BIN}/quill-emu", f"--port-file={port_file}", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (port_file.exists() and port_file.read_text().strip()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    return proc, port_file.read_text().strip()


def test_quill_emu_with_no_options_runs_as_a_pico_runs(tmp_path):
    pico = models.load("rpi_pico")
    assert models.DEFAULT_BOARD == "rpi_pico" and pico.heap == 233024 and pico.firmware == "files"
    proc, port = _quill_emu(tmp_path)
    try:
        with DeviceClient(port) as client:
            info = client.get_info()
        firmware = [line for line in process_command_lines() if "main_emulator" in line and port not in line]
    finally:
        proc.terminate()
        proc.wait(30)
    assert info["board"] == "rpi_pico" and info["emulator"] is True and info["selftest"] == "ok"
    # the .mpy files were imported into the Pico's heap (run in place from ROMFS, as no board
    # runs them, they would leave ~150 KB of it free)
    assert 40_000 < info["heap_free"] < pico.heap - 100_000
    assert any("heapsize=233024" in line and str(mpy_tree()) in line for line in firmware), firmware
    assert info["crypto_backend"] == "native"     # the Pico's deploy installs the module
    # the key methods, as a board has them: an empty seed store
    assert {"seed_generate", "seed_restore", "get_xpub"} <= set(info["methods"])
    assert info["keys"]["state"] == "uninitialized"
    # the Pico's board profile's panel (issue 26: the Waveshare Pico-LCD-1.3)
    assert {k: info["display"][k] for k in ("panel", "width", "height")} == {
        "panel": "st7789", "width": 240, "height": 240}


def test_the_default_panel_is_the_boards_own():
    from quill.emulator.launcher import default_display
    assert {b: default_display(b) for b in models.BOARDS} == {
        "rpi_pico": "st7789-240x240", "pyboard": "ssd1306-128x64", "esp32_s3_tft": "st7789-240x135",
        "esp32_s3": "none"}                    # the DevKitC-1 has no display
    # a qemu target models its board's panel too: tests/ui/test_screens_on_mcu.py


@pytest.mark.parametrize("board", models.BOARDS)
def test_each_board_gets_its_heap_and_its_firmware_loading(board):
    model = models.load(board)
    command = Emulator(board=board, crypto="python").command
    assert f"heapsize={model.heap}" in command
    boot = command[command.index("-c") + 1]
    if model.firmware == "frozen":
        assert "unix-frozen" in command[0] and "'.frozen'" in boot
    else:
        assert str(mpy_tree()) in boot and "/rom" not in boot
    assert command[command.index("--board") + 1] == board


def test_experiments_keep_the_board_named(tmp_path):
    """A larger heap, the firmware in ROMFS: still the Pico, with what the heap says (320K: the
    Pico's own heap plus more than the ~68 KB this firmware keeps at rest with its panel and the
    pure arithmetic's comb table, so that the free heap shows the larger one)."""
    with Emulator(board="rpi_pico", heapsize="320K", firmware="romfs", crypto="python") as emu, \
            DeviceClient(emu.port) as client:
        info = client.get_info()
    assert info["board"] == "rpi_pico" and info["heap_free"] > models.load("rpi_pico").heap


def test_a_qemu_target_models_the_board_it_stands_for(tmp_path):
    proc = subprocess.run([f"{VENV_BIN}/quill-emu", "--target=qemu-m4", "--board=rpi_pico"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "the qemu-m4 target stands for pyboard" in proc.stderr
    proc = subprocess.run([f"{VENV_BIN}/quill-emu", "--board=pico"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "invalid choice: 'pico'" in proc.stderr


@pytest.mark.parametrize("options, message", [
    (["-emuboard=pico"], "Error: -emuboard: unknown board 'pico' (esp32_s3, esp32_s3_tft, pyboard, rpi_pico)"),
    (["-emutarget=qemu-m4", "-emuboard=rpi_pico"], "Error: -emuboard: the qemu-m4 target stands for pyboard"),
    (["-emutarget=qemu-m4", "-emuseed=generate"], "Error: -emuseed=generate needs -emutarget=unix"),
    (["-emuseed=maybe"], "Error: -emuseed: unknown value 'maybe' (generate or none)"),
])
def test_quilld_refuses_an_emulated_device_it_cannot_model(tmp_path, options, message):
    proc = subprocess.run([f"{VENV_BIN}/quilld", "-regtest", f"-datadir={tmp_path}", "-device=emulator", *options],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and message in proc.stderr + proc.stdout

