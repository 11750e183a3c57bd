"""Consensus and policy checks with Core's reject reasons (validation.cpp, consensus/tx_check.cpp,
consensus/tx_verify.cpp, policy/policy.cpp).

Every check raises Invalid(reason, debug); str() of it is Core's
ValidationState::ToString ("reason, debug"), and `.reason` alone is what
submitblock reports (BIP22).
"""
from quill.tx import script as S
from quill.tx import verify
from quill.tx.interpreter import LOCKTIME_THRESHOLD, SEQUENCE_FINAL

from . import merkle
from .params import (
    COINBASE_MATURITY,
    MAX_BLOCK_SIGOPS_COST,
    MAX_BLOCK_WEIGHT,
    MAX_FUTURE_BLOCK_TIME,
    MAX_MONEY,
    WITNESS_SCALE_FACTOR,
)
from .pow import check_proof_of_work, target_to_compact

MEDIAN_TIME_SPAN = 11


class Invalid(Exception):
    """A rule failed. `missing_inputs` marks the one failure that is not final for a mempool tx."""

    def __init__(self, reason: str, debug: str = "", missing_inputs: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.debug = debug
        self.missing_inputs = missing_inputs

    def __str__(self):
        return f"{self.reason}, {self.debug}" if self.debug else self.reason


def format_money(sats: int) -> str:
    """Core's FormatMoney: 8 decimals, trailing zeros trimmed down to two."""
    sign = "-" if sats < 0 else ""
    whole, frac = divmod(abs(sats), 100_000_000)
    text = "%s%d.%08d" % (sign, whole, frac)
    while text.endswith("0") and text[-3] != ".":
        text = text[:-1]
    return text


# -- transactions ----------------------------------------------------------------------


def check_transaction(tx) -> None:
    """Core's CheckTransaction (quill.tx.verify holds the one implementation)."""
    reason = verify.check_transaction(tx)
    if reason is not None:
        raise Invalid(reason)


def is_final_tx(tx, height: int, time: int) -> bool:
    """Core's IsFinalTx: the lock time has passed, or every input opts out with SEQUENCE_FINAL."""
    if tx.locktime == 0:
        return True
    limit = height if tx.locktime < LOCKTIME_THRESHOLD else time
    if tx.locktime < limit:
        return True
    return all(txin.sequence == SEQUENCE_FINAL for txin in tx.vin)


def check_tx_inputs(tx, coins, spend_height: int) -> int:
    """Core's Consensus::CheckTxInputs over the coins the inputs spend; returns the fee."""
    value_in = 0
    for coin in coins:
        if coin.coinbase and spend_height - coin.height < COINBASE_MATURITY:
            raise Invalid("bad-txns-premature-spend-of-coinbase",
                          f"tried to spend coinbase at depth {spend_height - coin.height}")
        value_in += coin.value
        if not 0 <= coin.value <= MAX_MONEY or value_in > MAX_MONEY:
            raise Invalid("bad-txns-inputvalues-outofrange")
    value_out = sum(out.value for out in tx.vout)
    if value_in < value_out:
        raise Invalid("bad-txns-in-belowout",
                      f"value in ({format_money(value_in)}) < value out ({format_money(value_out)})")
    fee = value_in - value_out
    if fee > MAX_MONEY:
        raise Invalid("bad-txns-fee-outofrange")
    return fee


def legacy_sigop_count(tx) -> int:
    """Core's GetLegacySigOpCount: CHECKSIG counts 1, CHECKMULTISIG 20, in every scriptSig and output."""
    count = 0
    for s in [i.script_sig for i in tx.vin] + [o.script_pubkey for o in tx.vout]:
        pc = 0
        while True:
            op = S.get_op(s, pc)
            if op is None:
                break
            code, _, pc = op
            if code in (0xAC, 0xAD):
                count += 1
            elif code in (0xAE, 0xAF):
                count += 20
    return count


# -- blocks -----------------------------------------------------------------------------


def check_block(block, params, check_pow: bool = True) -> None:
    """Core's CheckBlock: proof of work, merkle root, coinbase placement, transaction sanity, sigops."""
    header = block.header
    if check_pow and not check_proof_of_work(block.hash(), header.bits, params.pow_limit):
        raise Invalid("high-hash", "proof of work failed")
    root, mutated = merkle.block_merkle_root(block.txs)
    if root != header.merkle_root:
        raise Invalid("bad-txnmrklroot", "hashMerkleRoot mismatch")
    if mutated:
        raise Invalid("bad-txns-duplicate", "duplicate transaction")
    if not block.txs or len(block.txs) * WITNESS_SCALE_FACTOR > MAX_BLOCK_WEIGHT \
            or block.stripped_size() * WITNESS_SCALE_FACTOR > MAX_BLOCK_WEIGHT:
        raise Invalid("bad-blk-length", "size limits failed")
    if not block.txs[0].is_coinbase():
        raise Invalid("bad-cb-missing", "first tx is not coinbase")
    for tx in block.txs[1:]:
        if tx.is_coinbase():
            raise Invalid("bad-cb-multiple", "more than one coinbase")
    for tx in block.txs:
        try:
            check_transaction(tx)
        except Invalid as e:
            raise Invalid(e.reason, f"Transaction check failed (tx hash {tx.txid_hex()}) {e.debug}") from None
    if sum(legacy_sigop_count(tx) for tx in block.txs) * WITNESS_SCALE_FACTOR > MAX_BLOCK_SIGOPS_COST:
        raise Invalid("bad-blk-sigops", "out-of-bounds SigOpCount")


def median_time_past(entry) -> int:
    """Median of the last 11 block times ending at `entry` (Core's GetMedianTimePast)."""
    times: list[int] = []
    while entry is not None and len(times) < MEDIAN_TIME_SPAN:
        times.append(entry.header.time)
        entry = entry.prev
    times.sort()
    return times[len(times) // 2]


def check_header_context(header, prev, params, now: int) -> None:
    """Core's ContextualCheckBlockHeader: difficulty, time window, version floor."""
    height = prev.height + 1
    if params.pow_no_retargeting and header.bits != target_to_compact(params.pow_limit):
        raise Invalid("bad-diffbits", "incorrect proof of work")
    if header.time <= median_time_past(prev):
        raise Invalid("time-too-old", "block's timestamp is too early")
    if header.time > now + MAX_FUTURE_BLOCK_TIME:
        raise Invalid("time-too-new", "block timestamp too far in the future")
    for floor, active in ((2, params.bip34_height), (3, params.bip66_height), (4, params.bip65_height)):
        if header.version < floor and height >= active:
            raise Invalid(f"bad-version(0x{header.version:08x})", f"rejected nVersion=0x{header.version:08x} block")


def bip34_prefix(height: int) -> bytes:
    """CScript() << height: the push BIP34 requires at the start of the coinbase scriptSig."""
    if height == 0:
        return b"\x00"
    if 1 <= height <= 16:
        return bytes((0x50 + height,))
    n = height.to_bytes((height.bit_length() + 8) // 8, "little")
    return bytes((len(n),)) + n


def check_block_context(block, prev, params) -> None:
    """Core's ContextualCheckBlock: finality, BIP34 height, BIP141 witness commitment, weight."""
    height = prev.height + 1
    lock_time_cutoff = median_time_past(prev) if height >= params.csv_height else block.header.time
    for tx in block.txs:
        if not is_final_tx(tx, height, lock_time_cutoff):
            raise Invalid("bad-txns-nonfinal", "non-final transaction")
    if height >= params.bip34_height:
        prefix = bip34_prefix(height)
        if block.txs[0].vin[0].script_sig[:len(prefix)] != prefix:
            raise Invalid("bad-cb-height", "block height mismatch in coinbase")
    _check_witness_commitment(block, height >= params.segwit_height)
    if block.weight() > MAX_BLOCK_WEIGHT:
        raise Invalid("bad-blk-weight", "weight limit failed")


def _check_witness_commitment(block, segwit_active: bool) -> None:
    """BIP141: a commitment binds the wtxids; without one, no transaction may carry witness data."""
    coinbase = block.txs[0]
    index = merkle.witness_commitment_index(coinbase) if segwit_active else None
    if index is not None:
        witness = coinbase.vin[0].witness
        if len(witness) != 1 or len(witness[0]) != 32:
            raise Invalid("bad-witness-nonce-size", "invalid witness reserved value size")
        expected = merkle.witness_commitment(merkle.block_witness_merkle_root(block.txs), witness[0])
        if coinbase.vout[index].script_pubkey[6:38] != expected:
            raise Invalid("bad-witness-merkle-match", "witness merkle commitment mismatch")
        return
    if block.has_witness():
        raise Invalid("unexpected-witness", "unexpected witness data found")
