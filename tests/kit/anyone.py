"""Coins anyone can spend: P2WSH(OP_TRUE), so tests build spends without keys.

The output script is BIP141's P2WSH, ``OP_0 <sha256(witness script)>``, with the
witness script ``OP_TRUE``; a spend carries that script as its only witness item,
which is standard and passes the real script interpreter.
"""
from quill.tx.address import encode_destination
from quill.tx.hashes import sha256

OP_TRUE = b"\x51"
ANYONE_SCRIPT = b"\x00\x20" + sha256(OP_TRUE)
ANYONE_ADDRESS = encode_destination(ANYONE_SCRIPT, "regtest")
ANYONE_WITNESS = [OP_TRUE]
