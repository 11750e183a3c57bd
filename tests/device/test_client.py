"""DeviceClient against quill-emu through pyserial: ping, get_info, every error
path, busy/awaiting-user answers, lost requests; and the one RPC error mapping."""
import threading
import time

import pytest

from quill.device.client import REJECTIONS_KEPT, DeviceClient, reply_idle_ms
from quill.device.codec import encode_message
from quill.device.errors import DeviceError, DeviceTimeout, DeviceUnavailable
from quill.emulator import models
from quill.handlers.errors import to_rpc_error
from quill.rpc.errors import (
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_OUT_OF_MEMORY,
    RPC_WALLET_UNLOCK_NEEDED,
    RPCError,
)
from quillfw import limits
from tests.device.rawlink import check_cddl


def test_ping(client):
    assert client.ping() == "idle"


def test_get_info_reports_the_firmware_and_its_limits(client, emulator):
    info = client.get_info()
    assert info["target"] == emulator.target
    assert len(info["boot_id"]) == 16 and int(info["boot_id"], 16) >= 0
    check_cddl({"id": "1", "result": info})
    assert info["protocol_version"] == 1 and info["emulator"] is True
    assert info["implementation"] == "micropython"
    assert info["max_message_size"] == limits.MAX_MESSAGE_SIZE
    assert info["limits"]["max_inputs"] == limits.MAX_INPUTS
    assert {"ping", "get_info"} <= set(info["methods"])
    # the modelled board's heap (the pyboard's on unix, the Pico's on the Cortex-M0+), less
    # what the firmware occupies
    assert info["board"] == emulator.board
    assert 20_000 < info["heap_free"] < models.load(emulator.board).heap


@pytest.mark.parametrize("method, params, code, message", [
    ("no_such_method", None, -32601, "Unknown method"),
    ("debug_sleep", {"ms": "1"}, -32602, "Parameter 'ms' must be uint"),
    ("debug_sleep", {"ms": 10 ** 6}, -32602, "Parameter 'ms' exceeds 60000"),
    ("debug_alloc", {"size": 10 ** 7}, -32005, "Out of memory"),
    ("debug_raise", None, -32603, "Internal error (ValueError)"),
])
def test_device_errors_carry_code_and_message(client, method, params, code, message):
    with pytest.raises(DeviceError) as e:
        client.call(method, params)
    assert (e.value.code, e.value.message) == (code, message)
    assert client.ping() == "idle"


def test_message_larger_than_the_device_accepts_is_refused_on_the_host(client):
    client.get_info()
    with pytest.raises(ValueError, match="exceeds the device's maximum of 4096"):
        client.call("debug_raise", {"detail": b"\x00" * 4096})
    assert client.ping() == "idle"


def _in_thread(fn):
    result = {}

    def run():
        try:
            result["value"] = fn()
        except Exception as e:  # handed to the test thread
            result["error"] = e
    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def _wait_state(client, state, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.ping() == state:
            return True
        time.sleep(0.02)
    return False


def test_ping_answers_busy_and_awaiting_user_while_a_request_runs(client):
    thread, result = _in_thread(lambda: client.call("debug_sleep", {"ms": 800}, awaits_user=True))
    assert _wait_state(client, "busy")
    thread.join(10)
    assert result == {"value": 800}
    thread, result = _in_thread(lambda: client.call(
        "debug_sleep", {"ms": 800, "awaiting_user": True}, awaits_user=True))
    assert _wait_state(client, "awaiting_user")
    thread.join(10)
    assert result == {"value": 800}
    assert client.ping() == "idle"


def test_other_requests_while_busy_get_busy(client):
    thread, result = _in_thread(lambda: client.call("debug_sleep", {"ms": 600}, awaits_user=True))
    assert _wait_state(client, "busy")
    # past the session lock, as a misbehaving second user of the port would be
    with pytest.raises(DeviceError) as e:
        client._request("debug_alloc", {"size": 1}, 5.0, probe=False)
    assert (e.value.code, e.value.message) == (-32004, "Device busy with another request")
    assert client._request("get_info", None, 5.0, probe=False)["protocol_version"] == 1
    thread.join(10)
    assert result == {"value": 600}


def test_session_lock_serialises_calls(client):
    order = []
    with client.session():
        thread, _ = _in_thread(lambda: order.append(client.call("ping")))
        time.sleep(0.2)
        order.append("session")
    thread.join(5)
    assert order == ["session", "idle"]


def test_a_lost_request_is_detected_by_the_idle_probe(client):
    real_write = client._serial.write

    def corrupt_once(data):
        client._serial.write = real_write
        return real_write(data[:-1] + bytes([data[-1] ^ 0xFF]))
    client._serial.write = corrupt_once
    started = time.monotonic()
    with pytest.raises(DeviceUnavailable, match="lost the debug_sleep request"):
        client.call("debug_sleep", {"ms": 1}, awaits_user=True)
    assert time.monotonic() - started < 3
    assert client.rejections[-1]["message"] == "Frame CRC mismatch"
    assert client.ping() == "idle"


def test_no_answer_is_a_timeout(unix_emulator):
    with DeviceClient(unix_emulator.port, short_timeout=0.3, probe_interval=5) as c:
        with pytest.raises(DeviceTimeout, match="did not answer debug_sleep within 0.3 s"):
            c.call("debug_sleep", {"ms": 1500}, timeout=0.3)
        time.sleep(1.4)
        deadline = time.monotonic() + 10     # the sleep may overrun on a loaded machine
        while True:
            try:
                assert c.ping() == "idle"
                break
            except DeviceTimeout:
                assert time.monotonic() < deadline


def test_rts_and_dtr_are_held_low_from_open_on():
    # pyserial's loop:// port records the modem lines like a real one
    with DeviceClient("loop://") as c:
        assert c._serial.rts is False and c._serial.dtr is False


def test_unopenable_port():
    with pytest.raises(DeviceUnavailable, match="Cannot open device /dev/quill-none"):
        DeviceClient("/dev/quill-none").open()


@pytest.mark.parametrize("error, code, message", [
    (DeviceError(-32602, "Missing parameter 'x'"), RPC_INVALID_PARAMETER, "Device error: Missing parameter 'x'"),
    (DeviceError(-32003, "Wrong network"), RPC_INVALID_PARAMETER, "Device error: Wrong network"),
    (DeviceError(-32006, "Too many inputs"), RPC_INVALID_PARAMETER, "Device error: Too many inputs"),
    (DeviceError(-32002, "Locked"), RPC_WALLET_UNLOCK_NEEDED, "Device error: Locked"),
    (DeviceError(-32005, "Out of memory"), RPC_OUT_OF_MEMORY, "Device error: Out of memory"),
    (DeviceError(-32000, "Signing refused on the device"), -4, "Signing refused on the device"),
    (DeviceError(-32007, "Confirmation timed out on the device"), -4,
     "Confirmation timed out on the device"),
    (DeviceError(-32601, "Unknown method"), RPC_MISC_ERROR, "Device error: Unknown method"),
    (DeviceTimeout("Device did not answer ping within 5 s"), RPC_MISC_ERROR,
     "Device did not answer ping within 5 s"),
])
def test_one_mapping_to_core_rpc_errors(error, code, message):
    rpc = to_rpc_error(error)
    assert isinstance(rpc, RPCError) and (rpc.code, rpc.message) == (code, message)


def test_mapping_leaves_other_exceptions_to_the_dispatcher():
    assert to_rpc_error(ValueError("x")) is None


def test_rejections_are_counted_and_only_the_last_kept():
    """A link that garbles now and then (every device restart cuts a frame) gets an
    id "00" rejection each time: the client counts them and keeps only the last few,
    it must not grow for as long as the daemon runs."""
    client = DeviceClient("loop://")
    for n in range(1000):
        client._deliver({"id": "00", "error": {"code": -32600, "message": "Frame CRC mismatch", "data": n}})
    assert client.rejected == 1000
    assert len(client.rejections) == REJECTIONS_KEPT
    assert client.rejections[-1]["data"] == 999


@pytest.mark.parametrize("short_timeout, delivered", [(5.0, False), (30.0, True)])
def test_a_reply_paused_mid_frame_is_kept_on_a_slow_link(short_timeout, delivered):
    """A reply whose second half comes 2.5 s after its first: dropped as a stale partial
    frame at a board's 5 s short timeout (2 s of idle), kept at a qemu target's 30 s (10 s),
    where a starved QEMU pauses its UART's output so long."""
    assert reply_idle_ms(5.0) == 2000 and reply_idle_ms(30.0) == 10_000
    frame = encode_message({"id": "00", "error": {"code": -32600, "message": "Frame CRC mismatch"}})
    with DeviceClient("loop://", short_timeout=short_timeout) as client:
        client._serial.write(frame[:10])        # loop://: what is written is read back
        time.sleep(2.5)
        client._serial.write(frame[10:])
        time.sleep(0.3)
        assert client.rejected == (1 if delivered else 0)
