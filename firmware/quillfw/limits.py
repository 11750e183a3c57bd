"""Limits the device declares in get_info and enforces. Exceeding one is an
error reply, never an out-of-memory crash. Sized for the smallest board heap
(a pyboard's ~97 KiB) with the firmware's modules frozen.
"""
from quillfw.compat import const

MAX_MESSAGE_SIZE = const(4096)      # largest CBOR message body, either direction
MAX_INPUTS = const(10000)           # per transaction
MAX_OUTPUTS = const(10000)
MAX_SCRIPT_SIZE = const(3600)       # scriptPubKey / script code / redeem script bytes
MAX_KEYS = const(32)                # secrets held by one signing session (what holds at 97K)
