"""psbtbumpfee's replacement transaction: Core's feebumper::CreateRateBumpTransaction
(wallet/feebumper.cpp) for a watch-only wallet whose transaction spends only its own coins.

The checks come in Core's order (the transaction, the change index, the coins still unspent,
descendants, depth, the fee rate), each with Core's text and kind (`BumpError.kind`: Core's
feebumper::Result, which the handler turns into Core's RPC code). The replacement keeps every
input, the recipients (or the `outputs` given), and pays the change (the original change output's
script, or a new change address) what is left at the new fee rate (quill.wallet.funding, Core's
CreateTransactionInternal with the inputs preset).

When the original inputs do not pay the new fee, more of the wallet's confirmed coins are chosen
as Core's coin selection chooses them (quill.wallet.coinselection). An input whose coin is still
unconfirmed also pays what its unconfirmed ancestors lack at the new fee rate, as Core's bump
fees (the caller's `bump_fees`: Core's MiniMiner over the mempool, quill.chain.mini_miner).
Quill differs where Core would need what it does not have: inputs that are not the wallet's
are refused with a clear message. Where Core picks at random (the change position, a locktime
up to 100 blocks back one time in ten), Quill takes Core's most likely choice: the change last,
the locktime at the tip.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from quill.chain.policy import MIN_RELAY_FEE
from quill.consensus import WITNESS_SCALE_FACTOR
from quill.tx.hashes import hash_to_hex
from quill.tx.transaction import Transaction, TxIn, TxOut
from quill.wallet import funding
from quill.wallet.funding import _signed_vsize as signed_vsize  # Core's CalculateMaximumSignedTxSize

INVALID_ADDRESS_OR_KEY, INVALID_PARAMETER, WALLET_ERROR, MISC_ERROR = "address", "parameter", "wallet", "misc"

WALLET_INCREMENTAL_RELAY_FEE = 5_000   # sat/kvB (Core's WALLET_INCREMENTAL_RELAY_FEE)
DEFAULT_TRANSACTION_MAXFEE = 10_000_000  # sat (Core's -maxtxfee default, 0.1 BTC)
REQUIRED_FEE_RATE = MIN_RELAY_FEE        # sat/kvB: max(-mintxfee, -minrelaytxfee), both 100 in Core 30+
MAX_ANTI_FEE_SNIPING_TIP_AGE = 8 * 60 * 60
MAX_BIP125_RBF_SEQUENCE = 0xFFFFFFFD
MAX_SEQUENCE_NONFINAL = 0xFFFFFFFE


class BumpError(Exception):
    """A bump Core refuses (or Quill cannot make); `kind` is Core's feebumper::Result."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class BumpRequest:
    txid: bytes
    fee_rate: int | None           # sat/kvB, or None: Core's EstimateFeeRate
    replaceable: bool
    outputs: list[TxOut]           # empty: the original outputs
    original_change_index: int | None
    incremental_relay_fee: int     # sat/kvB, the node's
    new_change: Any                # (recipients) -> (script or b"", spend vsize, why none): the next change address
    available: Any = None          # (tx) -> the wallet's confirmed coins not spent by tx: new inputs if needed
    bump_fees: Any = None          # the node's bump fees (funding.FundingRules.bump_fees)
    # sat/kvB: the wallet's GetMinimumFeeRate: the node's estimate, else -fallbackfee (0: neither)
    min_fee_rate: int = 0
    discard_rate: int = funding.DEFAULT_DISCARD_FEE     # Core's GetDiscardRate, for the change


@dataclass
class Bump:
    original: bytes    # the txid replaced
    tx: Transaction
    old_fee: int
    new_fee: int
    new_change: bool   # the change went to a new change address (the caller keeps it)


def _money(sats: int) -> str:
    """Core's FormatMoney: at least two decimals, trailing zeros dropped."""
    text = f"{sats // 100_000_000}.{sats % 100_000_000:08d}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.split(".")[1]))


def _spent_coins(wallet: Any, tx: Transaction, find_coin: Any) -> list[funding.Coin]:
    coins = []
    for txin in tx.vin:
        coin = find_coin(txin.prevout)
        if coin is None:
            raise BumpError(MISC_ERROR, f"{txin.prevout.hash[::-1].hex()}:{txin.prevout.n} is already spent")
        owners = wallet.scripts.get(coin.script_pubkey, [])
        if not owners:
            raise BumpError(WALLET_ERROR, "Quill can only bump a transaction whose inputs are all the wallet's")
        coins.append(funding.Coin(coin, wallet.descs[owners[0][0]].desc.node, txin.prevout))
    return coins


def _combined_bump_fee(request: BumpRequest, coins: list[funding.Coin], rate: int) -> int:
    """What the original's inputs' unconfirmed ancestors lack at `rate`, together."""
    return 0 if request.bump_fees is None else int(request.bump_fees.combined([c.outpoint for c in coins], rate))


def _preconditions(wallet: Any, row: Any, mempool_children: list[bytes]) -> None:
    """Core's PreconditionChecks (require_mine=false: psbtbumpfee)."""
    if wallet.store.children(row.txid):
        raise BumpError(INVALID_PARAMETER, "Transaction has descendants in the wallet")
    if mempool_children:
        raise BumpError(INVALID_PARAMETER, "Transaction has descendants in the mempool")
    if wallet.depth(row) != 0:
        raise BumpError(WALLET_ERROR, "Transaction has been mined, or is conflicted with a mined transaction")
    replaced_by = wallet.tx_values.get(row.txid, {}).get("replaced_by_txid")
    if replaced_by is not None:
        raise BumpError(WALLET_ERROR, f"Cannot bump transaction {hash_to_hex(row.txid)} which was already bumped by "
                                      f"transaction {replaced_by}")


def _check_fee_rate(rate: int, max_vsize: int, old_fee: int, incremental: int, bump_fee: int) -> None:
    """Core's CheckFeeRate (the mempool's minimum fee is 0 until it is full); `bump_fee` is what
    the inputs' unconfirmed ancestors lack at `rate`."""
    new_total = funding.fee_for(rate, max_vsize) + bump_fee
    increment = funding.fee_for(incremental, max_vsize)
    if new_total < old_fee + increment:
        raise BumpError(INVALID_PARAMETER, f"Insufficient total fee {_money(new_total)}, must be at least "
                        f"{_money(old_fee + increment)} (oldFee {_money(old_fee)} + incrementalFee "
                        f"{_money(increment)})")
    required = funding.fee_for(REQUIRED_FEE_RATE, max_vsize)
    if new_total < required:
        raise BumpError(INVALID_PARAMETER, f"Insufficient total fee (cannot be less than required fee "
                        f"{_money(required)})")
    if new_total > DEFAULT_TRANSACTION_MAXFEE:
        raise BumpError(WALLET_ERROR, f"Specified or calculated fee {_money(new_total)} is too high (cannot be "
                        f"higher than -maxtxfee {_money(DEFAULT_TRANSACTION_MAXFEE)})")


def _estimated_fee_rate(tx: Transaction, old_fee: int, incremental: int, minimum: int) -> int:
    """Core's EstimateFeeRate: the original rate plus one satoshi plus the larger incremental fee,
    at least the wallet's minimum (GetMinimumFeeRate: the node's estimate, else the -fallbackfee
    rate when set, and never below the required rate)."""
    vsize = -(-tx.weight() // WITNESS_SCALE_FACTOR)
    rate = old_fee * 1000 // vsize + 1 + max(incremental, WALLET_INCREMENTAL_RELAY_FEE)
    return max(rate, minimum, REQUIRED_FEE_RATE)


def _locktime(tip_height: int, tip_time: int | None) -> int:
    """Core's DiscourageFeeSniping: the tip's height while the tip is recent, else 0."""
    if tip_time is None or tip_time < time.time() - MAX_ANTI_FEE_SNIPING_TIP_AGE:
        return 0
    return tip_height


def create_bump(wallet: Any, request: BumpRequest, find_coin: Any, mempool_children: Any,
                tip: tuple[int, int | None]) -> Bump:
    """The replacement of wallet transaction `request.txid`. Raises BumpError."""
    if request.outputs and request.original_change_index is not None:
        raise BumpError(INVALID_PARAMETER, "The options 'outputs' and 'original_change_index' are incompatible. "
                        "You can only either specify a new set of outputs, or designate a change output to be "
                        "recycled.")
    row = wallet.store.get_tx(request.txid)
    if row is None:
        raise BumpError(INVALID_ADDRESS_OR_KEY, "Invalid or non-wallet transaction id")
    original = row.tx
    if request.original_change_index is not None and request.original_change_index >= len(original.vout):
        raise BumpError(INVALID_PARAMETER, "Change position is out of range")
    coins = _spent_coins(wallet, original, find_coin)
    _preconditions(wallet, row, mempool_children(request.txid))
    old_fee = sum(c.txout.value for c in coins) - sum(o.value for o in original.vout)

    txouts = request.outputs or original.vout
    change: bytes | None = None
    recipients: list[TxOut] = []
    for i, out in enumerate(txouts):
        is_change = (i == request.original_change_index if request.original_change_index is not None
                     else wallet.is_change(out.script_pubkey))
        if is_change:
            change = out.script_pubkey
        else:
            recipients.append(TxOut(out.value, out.script_pubkey))
    subtract: set[int] = set()
    if not recipients:
        if change is None:
            raise BumpError(INVALID_PARAMETER, "Unable to create transaction. Transaction must have at least one "
                            "recipient")
        recipients = [TxOut(sum(o.value for o in txouts), change)]
        subtract, change = {0}, None

    sequence = MAX_BIP125_RBF_SEQUENCE if request.replaceable else MAX_SEQUENCE_NONFINAL
    template = Transaction(2, [TxIn(txin.prevout, b"", sequence, []) for txin in original.vin], list(txouts),
                           original.locktime)
    max_vsize = signed_vsize(template, coins)
    if request.fee_rate is not None:
        rate = request.fee_rate
        _check_fee_rate(rate, max_vsize, old_fee, request.incremental_relay_fee,
                        _combined_bump_fee(request, coins, rate))
    else:
        rate = _estimated_fee_rate(original, old_fee, request.incremental_relay_fee, request.min_fee_rate)

    reason = ""
    if change is not None:
        change_script, change_spend = change, _spend_vsize(wallet, change)
    else:
        change_script, change_spend, reason = request.new_change(recipients)
    template.vout = recipients
    template.locktime = _locktime(*tip)
    # Core's CreateTransaction with the original inputs preset, other inputs allowed (confirmed
    # ones only: Core's m_min_depth = 1) and the change last (Core: a random place).
    rules = funding.FundingRules(rate, subtract, change_script, change_spend, len(template.vout), reason,
                                 allow_other_inputs=True, new_input_sequence=sequence,
                                 bump_fees=request.bump_fees, discard_rate=request.discard_rate,
                                 available=[] if request.available is None else request.available(template))
    try:
        funded = funding.fund(template, coins, rules)
    except funding.FundingError as e:
        raise BumpError(WALLET_ERROR, f"Unable to create transaction. {e}") from None
    return Bump(request.txid, funded.tx, old_fee, funded.fee, change is None)


def _spend_vsize(wallet: Any, script: bytes) -> int:
    """Core's change_spend_size: spending the change output, from its descriptor."""
    owners = wallet.scripts.get(script, [])
    if owners:
        try:
            return funding.input_vsize(wallet.descs[owners[0][0]].desc.node)
        except funding.FundingError:
            pass
    return funding.DUMMY_NESTED_P2WPKH_INPUT_SIZE
