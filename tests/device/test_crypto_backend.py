"""quill-emu --crypto: get_info's crypto_backend names who signs, and the self-test's known
answers (BIP143 ECDSA with Core's grinding, BIP340) hold on each backend."""
import pytest

from quill.device.client import DeviceClient
from quill.emulator import natmod
from quill.emulator.launcher import Emulator
from tests.kit.toolchains import unavailable


@pytest.fixture(scope="module")
def native_module():
    try:
        return natmod.build("x64")
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")


@pytest.mark.parametrize("crypto, heapsize, expected", [
    ("python", "97K", "python"), ("native", "97K", "native"),
    ("auto", "97K", "python"),      # no room for the module at the smallest board's heap
    ("auto", "112K", "native"), ("python", "112K", "python")])
def test_get_info_names_the_backend(native_module, crypto, heapsize, expected):
    assert native_module.name == "quill_secp256k1.mpy"
    with Emulator(heapsize=heapsize, crypto=crypto) as emu, DeviceClient(emu.port) as client:
        info = client.get_info()
    assert info["crypto_backend"] == expected
    assert info["selftest"] == "ok"  # the known answers hold on the active backend


def test_native_refused_when_the_module_cannot_be_built(monkeypatch):
    monkeypatch.setenv("SECP256K1_SRC", "/nonexistent/secp256k1")
    with pytest.raises(natmod.NatmodUnavailable):
        Emulator(heapsize="97K", crypto="native")
    for heapsize in ("97K", "112K"):  # auto falls back to the pure arithmetic
        with Emulator(heapsize=heapsize, crypto="auto") as emu, DeviceClient(emu.port) as client:
            assert client.get_info()["crypto_backend"] == "python"
