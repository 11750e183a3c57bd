"""Host side of the device link: DeviceManager (the daemon's -device=SPEC),
DeviceClient (one serial connection), and the one mapping of device failures
to RPC errors (errors.to_rpc_error)."""
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable, to_rpc_error
from quill.device.manager import DeviceManager

__all__ = ["DeviceClient", "DeviceError", "DeviceManager", "DeviceUnavailable", "to_rpc_error"]
