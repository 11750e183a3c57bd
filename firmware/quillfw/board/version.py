"""Versions reported by get_info. The host gates features on get_info's
fields (methods, limits, script and sighash types), never on these strings."""
from quillfw.compat import const

FIRMWARE_VERSION = "0.1.0"
# Bumped on any incompatible change of framing, envelope or an existing method.
PROTOCOL_VERSION = const(1)
