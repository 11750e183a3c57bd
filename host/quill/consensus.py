"""Consensus constants, once for the whole host (Core's consensus/amount.h, consensus/consensus.h,
script/interpreter.h).

The values the device firmware also needs are defined there (quillfw.consensus, and the curve's order
with the curve) and imported here, so the host and the device can never disagree on them.
"""
from quillfw.consensus import (  # noqa: F401 (re-exported: the host's one place to import them from)
    COIN,
    MAX_MONEY,
    SIGHASH_ALL,
    SIGHASH_ANYONECANPAY,
    SIGHASH_DEFAULT,
    SIGHASH_NONE,
    SIGHASH_SINGLE,
    WITNESS_SCALE_FACTOR,
)

# secp256k1's group order n (SEC 2, section 2.4.1): a secret key or a signature's r, s lie in [1, n-1].
from quillfw.crypto.secp256k1 import N as SECP256K1_ORDER  # noqa: F401

# consensus/consensus.h: only the host validates blocks.
MAX_BLOCK_WEIGHT = 4_000_000
MAX_BLOCK_SIGOPS_COST = 80_000
COINBASE_MATURITY = 100
