"""Mempool policy: what Core relays beyond consensus (policy/policy.cpp, defaults of v30).

Only the rules a wallet meets in practice are kept: version, size, scriptSig
shape, output types, dust, the minimum relay fee. Reject reasons are Core's.
"""
from quill.tx import script as S

from .rules import Invalid

TX_MAX_STANDARD_VERSION = 3
MAX_STANDARD_TX_WEIGHT = 400_000
MIN_STANDARD_TX_NONWITNESS_SIZE = 65
MAX_STANDARD_SCRIPTSIG_SIZE = 1650
MAX_DUST_OUTPUTS_PER_TX = 1
DUST_RELAY_FEE = 3000          # sat/kvB (Core's DUST_RELAY_TX_FEE)
MIN_RELAY_FEE = 100            # sat/kvB (Core's DEFAULT_MIN_RELAY_TX_FEE since v30)
# Core's DEFAULT_MAX_RAW_TX_FEE_RATE for sendrawtransaction: 0.10 BTC/kvB.
DEFAULT_MAX_RAW_TX_FEE_RATE = 10_000_000


def fee_for(rate_per_kvb: int, vsize: int) -> int:
    """Core's CFeeRate::GetFee: rate * size / 1000, rounded up (FeeFrac::EvaluateFeeUp)."""
    return -(-rate_per_kvb * vsize // 1000)


def dust_threshold(txout) -> int:
    """Core's GetDustThreshold: the fee to spend the output at the dust relay rate; 0 when unspendable."""
    spk = txout.script_pubkey
    if S.is_unspendable(spk):
        return 0
    size = len(txout.serialize())
    if S.witness_program(spk) is not None:
        size += 32 + 4 + 1 + 107 // 4 + 4
    else:
        size += 32 + 4 + 1 + 107 + 4
    return fee_for(DUST_RELAY_FEE, size)


def check_standard(tx) -> None:
    """Core's IsStandardTx (the parts kept here)."""
    if not 1 <= tx.version <= TX_MAX_STANDARD_VERSION:
        raise Invalid("version")
    if tx.weight() > MAX_STANDARD_TX_WEIGHT:
        raise Invalid("tx-size")
    for txin in tx.vin:
        if len(txin.script_sig) > MAX_STANDARD_SCRIPTSIG_SIZE:
            raise Invalid("scriptsig-size")
        if not S.is_push_only(txin.script_sig):
            raise Invalid("scriptsig-not-pushonly")
    for txout in tx.vout:
        kind, _ = S.solver(txout.script_pubkey)
        if kind == S.NONSTANDARD:
            raise Invalid("scriptpubkey")
    # One dust output may be "ephemeral dust" (Core v29+): its fee is checked with the others'.
    if len(dust_outputs(tx)) > MAX_DUST_OUTPUTS_PER_TX:
        raise Invalid("dust")
    if len(tx.serialize(False)) < MIN_STANDARD_TX_NONWITNESS_SIZE:
        raise Invalid("tx-size-small")


def dust_outputs(tx) -> list:
    """Core's GetDust: the outputs worth less than spending them costs (data outputs never)."""
    return [o for o in tx.vout
            if S.solver(o.script_pubkey)[0] != S.NULL_DATA and o.value < dust_threshold(o)]


def check_ephemeral_dust(tx, fee: int) -> None:
    """Core's PreCheckEphemeralTx: a transaction with a dust output must pay no fee itself."""
    if fee != 0 and dust_outputs(tx):
        raise Invalid("dust", "tx with dust output must be 0-fee")


def check_min_relay_fee(fee: int, vsize: int) -> None:
    required = fee_for(MIN_RELAY_FEE, vsize)
    if fee < required:
        raise Invalid("min relay fee not met", f"{fee} < {required}")
