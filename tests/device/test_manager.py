"""DeviceManager specs and the getdeviceinfo RPC."""
from types import SimpleNamespace

import pytest

from quill.device.errors import DeviceUnavailable
from quill.device.manager import NO_DEVICE, SUPPORTED_USB_IDS, DeviceManager, find_board
from quill.handlers import device as device_handlers
from quill.handlers.errors import with_error_boundary
from quill.rpc.errors import RPCError
from tests.device.rawlink import check_cddl


@pytest.mark.parametrize("spec", [None, ""])
def test_no_device_fails_clearly(spec):
    manager = DeviceManager(spec)
    assert not manager.configured
    with pytest.raises(DeviceUnavailable, match="No device configured"):
        manager.client()
    ctx = SimpleNamespace(node=SimpleNamespace(device=manager))
    with pytest.raises(RPCError) as e:
        with_error_boundary(device_handlers.getdeviceinfo)(ctx, [])
    assert (e.value.code, e.value.message) == (-1, NO_DEVICE)


def test_getdeviceinfo_without_a_device_manager():
    ctx = SimpleNamespace(node=SimpleNamespace(device=None))
    with pytest.raises(RPCError, match="No device configured"):
        with_error_boundary(device_handlers.getdeviceinfo)(ctx, [])


def test_missing_path_fails_clearly():
    with pytest.raises(DeviceUnavailable, match="Cannot open device /dev/quill-missing"):
        DeviceManager("/dev/quill-missing").client()


def test_auto_ignores_ports_of_unknown_boards(monkeypatch):
    ports = [SimpleNamespace(device="/dev/ttyUSB9", vid=0x1234, pid=0x5678),
             SimpleNamespace(device="/dev/ttyACM3", vid=0x2E8A, pid=0x0005),
             SimpleNamespace(device="/dev/ttyS0", vid=None, pid=None)]
    monkeypatch.setattr("quill.device.manager.list_ports.comports", lambda: ports)
    assert find_board() == "/dev/ttyACM3"
    monkeypatch.setattr("quill.device.manager.list_ports.comports", lambda: ports[::2])
    with pytest.raises(DeviceUnavailable, match="No supported device found"):
        DeviceManager("auto").client()
    assert (0x2E8A, 0x0005) in SUPPORTED_USB_IDS


def test_emulator_spec_starts_and_stops_quill_emu(tmp_path):
    # quill-emu's options reach it: the Pico's model, with a heap larger than the Pico's
    manager = DeviceManager("emulator", datadir=tmp_path,
                            emulator_args=["--board", "rpi_pico", "--heapsize", "300K"])
    try:
        ctx = SimpleNamespace(node=SimpleNamespace(device=manager))
        info = device_handlers.getdeviceinfo(ctx, [])
        check_cddl({"id": "1", "result": info})
        assert info["emulator"] is True and info["board"] == "rpi_pico"
        assert 233024 - 100_000 < info["heap_free"] < 300 * 1024   # the Pico's heap leaves < 100K
        assert info["crypto_backend"] in ("native", "python")
        shown = [k for k in device_handlers.FIELD_ORDER if k in info]
        assert list(info)[:len(shown)] == shown and len(shown) >= 10
        assert manager.client() is manager.client()
        proc = manager._emulator[0]
    finally:
        manager.close()
    assert proc.poll() is not None


def test_pyserial_url_spec(unix_emulator):
    manager = DeviceManager(unix_emulator.port)
    try:
        assert manager.client().ping() == "idle"
    finally:
        manager.close()


def test_handler_is_registered_in_the_device_category():
    (method,) = device_handlers.METHODS
    assert (method.name, method.category, list(method.params)) == ("getdeviceinfo", "device", [])
