"""Device RPCs: getdeviceinfo shows what the signing device reported and what it
is doing (setconfirmationpolicy is in handlers/confirmation.py)."""
from quill.amount import Amount
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.manager import NO_DEVICE
from quill.rpc.registry import Method

# The device sends a canonical CBOR map (keys in byte order); the RPC shows
# them in the documented order, anything newer after them.
FIELD_ORDER = ("firmware_version", "protocol_version", "board", "emulator", "target", "boot_id", "implementation",
               "implementation_version", "heap_free", "max_message_size", "limits", "methods",
               "script_types", "sighash_types", "selftest", "crypto_backend", "confirmation", "state", "queue")
CONFIRMATION_ORDER = ("policy", "amount", "approver", "timeout_ms")


def device_of(ctx):
    device = getattr(ctx.node, "device", None)
    if device is None or not getattr(device, "configured", True):
        raise DeviceUnavailable(NO_DEVICE)
    return device


def policy_json(policy):
    """The device's policy map with the amount in BTC, as Core shows amounts."""
    shown = {k: policy[k] for k in CONFIRMATION_ORDER if k in policy}
    shown.update((k, policy[k]) for k in sorted(policy) if k not in shown)
    if "amount" in shown:
        shown["amount"] = Amount(shown["amount"])
    return shown


def _current_info(device):
    """get_info, fresh when the device is free; while a signing exchange holds
    the device (possibly waiting for its user) the cached answer, so that this
    call never waits behind it."""
    client = device.client()
    lock = client.session()
    if not lock.acquire(blocking=False):
        return client, device.info()
    try:
        return client, device.info(refresh=True)
    finally:
        lock.release()


def getdeviceinfo(ctx, args):
    device = device_of(ctx)
    members = getattr(device, "members", None)
    if members is None:     # a lone DeviceManager: the node's queue is its queue
        queue = ctx.node.device_queue_snapshot() if hasattr(ctx.node, "device_queue_snapshot") else []
        return _described(device, queue)
    # a pool (quill.device.pool): each device, then the first that answers at the top, as a
    # single device was shown before pools (its queue at the top is its own)
    described, errors = [], []
    for member in members:
        try:
            described.append({"device": member.manager.spec, **_described(member.manager, member.queue.snapshot())})
        except (DeviceError, DeviceUnavailable) as e:
            errors.append(e)
            described.append({"device": member.manager.spec, "state": "unavailable", "error": str(e),
                              "queue": member.queue.snapshot()})
    first = next((entry for entry in described if "error" not in entry), None)
    if first is None:
        raise errors[0]
    result = {k: v for k, v in first.items() if k != "device"}
    result["devices"] = described
    return result


def _described(device, queue):
    """What one device reports, its state (ping is answered even mid-request) and the calls
    at (position 0) or waiting for it, in order."""
    client, info = _current_info(device)
    info = dict(info, state=client.ping(), queue=queue)
    ordered = {k: info[k] for k in FIELD_ORDER if k in info}
    ordered.update((k, info[k]) for k in sorted(info) if k not in ordered)
    if isinstance(ordered.get("confirmation"), dict):
        ordered["confirmation"] = policy_json(ordered["confirmation"])
    return ordered


METHODS = [
    Method(
        "getdeviceinfo", "device", getdeviceinfo,
        description="Returns what the signing device reports about itself (its get_info):\n"
                    "versions, board, free heap, limits and the methods, script types and\n"
                    "sighash types it supports; with several devices, each one in devices.",
        result="""{                             (json object)
  "firmware_version" : "str",   (string) firmware version
  "protocol_version" : n,       (numeric) device protocol version
  "board" : "str",              (string) board name (on the emulator, the board it models)
  "emulator" : true|false,      (boolean) whether this is quill-emu
  "target" : "str",             (string) what runs the firmware: unix, qemu-m0plus, qemu-m4, or the board's port
  "boot_id" : "hex",            (string) random, new at every firmware start
  "implementation" : "str",     (string) interpreter name (micropython)
  "implementation_version" : "str", (string) interpreter version
  "heap_free" : n,              (numeric) free heap in bytes
  "max_message_size" : n,       (numeric) largest message body in bytes
  "limits" : { ... },           (json object) max_inputs, max_outputs, max_script_size, max_keys
  "methods" : [ "str", ... ],   (json array) protocol methods the firmware answers
  "script_types" : [ "str", ... ], (json array) script types it signs
  "sighash_types" : [ n, ... ], (json array) sighash types it signs
  "selftest" : "str",           (string) "ok", or "failed: <check>" (signing is then refused)
  "crypto_backend" : "str",     (string) who signs: native (libsecp256k1 module) or python
  "confirmation" : {            (json object) when the device asks its user before signing
    "policy" : "str",           (string) always, above or never
    "amount" : n,               (numeric, optional) policy above: asks when a transaction moves more
    "approver" : "str",         (string) who answers: button, none, or the emulator's auto, ask, channel
    "timeout_ms" : n            (numeric) how long the device waits for the answer
  },
  "state" : "str",              (string) idle, busy, or awaiting_user (waiting for a confirmation)
  "queue" : [                   (json array) RPC calls at or waiting for the device, in order
    {
      "method" : "str",         (string) the RPC method
      "position" : n,           (numeric) 0: the device is doing it now; 1: next; ...
      "duration" : n            (numeric) microseconds since the call was queued
    },
    ...
  ],
  "devices" : [                 (json array) every device (-device given several times: a pool), in
                                order; the fields above are the first answering device's
    {
      "device" : "str",         (string) the -device it was given as (emulator, a port, a URL)
      ...                       the fields above, of this device; or, when it cannot be reached:
      "state" : "unavailable",  (string)
      "error" : "str",          (string) why
      "queue" : [ ... ]         (json array) its calls, as above
    },
    ...
  ]
}""",
        examples="> quill-cli getdeviceinfo",
    ),
]
