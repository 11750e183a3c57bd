"""Host side of the device link: DeviceManager (the daemon's -device=SPEC), DeviceClient (one
serial connection) and the device's failures (errors); handlers/errors.py maps them to RPC errors."""
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.manager import DeviceManager

__all__ = ["DeviceClient", "DeviceError", "DeviceManager", "DeviceUnavailable"]
