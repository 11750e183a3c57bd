"""Device RPCs: getdeviceinfo shows what the signing device reported."""
from quill.device.errors import DeviceError, DeviceUnavailable, to_rpc_error
from quill.device.manager import NO_DEVICE
from quill.rpc.registry import Method


# The device sends a canonical CBOR map (keys in byte order); the RPC shows
# them in the documented order, anything newer after them.
FIELD_ORDER = ("firmware_version", "protocol_version", "board", "emulator", "implementation",
               "implementation_version", "heap_free", "max_message_size", "limits", "methods",
               "script_types", "sighash_types", "selftest")


def getdeviceinfo(ctx, args):
    device = getattr(ctx.node, "device", None)
    try:
        if device is None:
            raise DeviceUnavailable(NO_DEVICE)
        info = device.info(refresh=True)
    except (DeviceError, DeviceUnavailable) as e:
        raise to_rpc_error(e) from None
    ordered = {k: info[k] for k in FIELD_ORDER if k in info}
    ordered.update((k, info[k]) for k in sorted(info) if k not in ordered)
    return ordered


METHODS = [
    Method(
        "getdeviceinfo", "device", getdeviceinfo,
        description="Returns what the signing device reports about itself (its get_info):\n"
                    "versions, board, free heap, limits and the methods, script types and\n"
                    "sighash types it supports.",
        result="""{                             (json object)
  "firmware_version" : "str",   (string) firmware version
  "protocol_version" : n,       (numeric) device protocol version
  "board" : "str",              (string) board name
  "emulator" : true|false,      (boolean) whether this is quill-emu
  "implementation" : "str",     (string) interpreter name (micropython)
  "implementation_version" : "str", (string) interpreter version
  "heap_free" : n,              (numeric) free heap in bytes
  "max_message_size" : n,       (numeric) largest message body in bytes
  "limits" : { ... },           (json object) max_inputs, max_outputs, max_script_size, max_keys
  "methods" : [ "str", ... ],   (json array) protocol methods the firmware answers
  "script_types" : [ "str", ... ], (json array) script types it signs
  "sighash_types" : [ n, ... ], (json array) sighash types it signs
  "selftest" : "str"            (string) "ok", or "failed: <check>" (signing is then refused)
}""",
        examples="> quill-cli getdeviceinfo",
    ),
]
