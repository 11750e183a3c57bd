"""The host's batches of inputs for sign_add_inputs stay within max_message_size with the
session id in the request (a batch filled to 4096 bytes was once refused as MessageTooLarge
on the Cortex-M0+ soak, whose large heap lets batches reach the message limit)."""
from quill.device.codec import canonical_dumps
from quill.signing.device_session import _Driver


def test_full_batches_with_a_session_id_fit_one_message():
    driver = _Driver(None, 4096)
    driver.session = "abcdef12" + "1f"
    largest = 0
    for script_size in range(18, 60):
        items = [[bytes(32), 1, 0xFFFFFFFD, 12345, bytes(script_size)] for _ in range(300)]
        for batch in driver.batches(items):
            request = {"id": "x" * 16, "method": "sign_add_inputs",
                       "params": {"inputs": batch, "session": driver.session}}
            largest = max(largest, len(canonical_dumps(request)))
    assert 4000 < largest <= 4096
