"""Consensus constants, once for the whole host (Core's consensus/amount.h, consensus/consensus.h,
policy/policy.h where the value is a consensus one).

Values that the device firmware also needs are defined in the firmware and imported from it, so the
host and the device can never disagree on them.
"""
COIN = 100_000_000
MAX_MONEY = 21_000_000 * COIN

# consensus/consensus.h
MAX_BLOCK_WEIGHT = 4_000_000
MAX_BLOCK_SIGOPS_COST = 80_000
WITNESS_SCALE_FACTOR = 4
COINBASE_MATURITY = 100

# secp256k1's group order n (SEC 2, section 2.4.1): a secret key or a signature's r, s lie in [1, n-1].
SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

# Signature hash types (script/interpreter.h; BIP341 adds SIGHASH_DEFAULT).
SIGHASH_DEFAULT = 0x00
SIGHASH_ALL = 0x01
SIGHASH_NONE = 0x02
SIGHASH_SINGLE = 0x03
SIGHASH_ANYONECANPAY = 0x80
