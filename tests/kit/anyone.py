"""Coins anyone can spend: P2WSH(OP_TRUE), so tests build spends without keys.

The output script is BIP141's P2WSH of the witness script ``OP_TRUE``, built by
the host's own template (quill.tx.script.p2wsh_of); a spend carries that script as
its only witness item, which is standard and passes the real script interpreter.
"""
from quill.tx.address import encode_destination
from quill.tx.script import p2wsh_of

OP_TRUE = b"\x51"
ANYONE_SCRIPT = p2wsh_of(OP_TRUE)
ANYONE_ADDRESS = encode_destination(ANYONE_SCRIPT, "regtest")
ANYONE_WITNESS = [OP_TRUE]
