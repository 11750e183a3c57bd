"""quill-emu --crypto: get_info's crypto_backend names who signs, and the self-test's known
answers (BIP143 ECDSA with Core's grinding, BIP340) hold on each backend. auto deploys the
native module where the modelled board's deploy does (board.json "natmod": the Pico)."""
import pytest

from quill.device.client import DeviceClient
from quill.emulator import natmod
from quill.emulator.launcher import Emulator
from tests.kit import boards
from tests.kit.toolchains import unavailable


@pytest.fixture(scope="module")
def native_module():
    try:
        return natmod.build("x64", 22, 6)    # the Pico's tables (boards/rpi_pico/board.json)
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")


@pytest.mark.parametrize("board, crypto, expected", [
    ("rpi_pico", "auto", "native"),        # the Pico's deploy installs the module
    ("rpi_pico", "python", "python"),
    ("esp32_s3", "auto", "python"),        # no module for the ESP32-S3
    ("pyboard", "auto", "python"),         # the smallest board's heap cannot spare it
    ("pyboard", "native", "native")])
def test_get_info_names_the_backend(native_module, board, crypto, expected):
    assert native_module.name == "quill_secp256k1.mpy"
    with Emulator(board=boards.ready(board), crypto=crypto) as emu, DeviceClient(emu.port) as client:
        info = client.get_info()
    assert info["board"] == board
    assert info["crypto_backend"] == expected
    assert info["selftest"] == "ok"  # the known answers hold on the active backend


def test_native_refused_when_the_module_cannot_be_built(monkeypatch):
    monkeypatch.setenv("SECP256K1_SRC", "/nonexistent/secp256k1")
    with pytest.raises(natmod.NatmodUnavailable):
        Emulator(board="esp32_s3", crypto="native")
    # auto falls back to the pure arithmetic, on the Pico too
    with Emulator(board="rpi_pico", crypto="auto") as emu, DeviceClient(emu.port) as client:
        assert client.get_info()["crypto_backend"] == "python"
