"""Consensus constants the firmware relies on, each defined once (Bitcoin Core's
consensus/amount.h, consensus/consensus.h, script/interpreter.h). The host
imports them from here where its value is the same.

The curve's own parameters (field prime P, group order N) live with the curve,
in quillfw.crypto.secp256k1.
"""
from quillfw.compat import const

COIN = const(100000000)                       # satoshis per bitcoin
MAX_MONEY = const(2100000000000000)           # 21,000,000 * COIN (consensus/amount.h)
WITNESS_SCALE_FACTOR = const(4)               # consensus/consensus.h

# Signature hash types (script/interpreter.h). SIGHASH_DEFAULT is BIP341's.
SIGHASH_DEFAULT = const(0)
SIGHASH_ALL = const(1)
SIGHASH_NONE = const(2)
SIGHASH_SINGLE = const(3)
SIGHASH_ANYONECANPAY = const(0x80)
