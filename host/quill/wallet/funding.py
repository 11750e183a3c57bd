"""Funding a transaction from a fixed set of the wallet's coins, as Core's CreateTransactionInternal
does with pre-selected inputs and no other inputs allowed (wallet/spend.cpp): input weights from the
descriptors' maximum satisfactions, the change output and its dust/discard rules, the exact fee at
the fee rate, and subtracting the fee from chosen outputs.

Automatic coin selection (BnB, CoinGrinder, Knapsack, SRD) is not here yet.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quill.consensus import WITNESS_SCALE_FACTOR
from quill.tx.script import solver
from quill.tx.transaction import Transaction, TxOut

DEFAULT_DISCARD_FEE = 10_000      # sat/kvB: Core's -discardfee (no long-term estimate on a fresh node)
DUST_RELAY_TX_FEE = 3_000         # sat/kvB: Core's -dustrelayfee
MAX_SIG_SIZE = 72                 # a DER signature with the sighash byte, at its largest (no R grinding)
SCHNORR_SIG_SIZE = 65             # a BIP340 signature with a sighash byte, at its largest
TX_NOINPUTS_BASE = 10             # version, locktime, input count and half the segwit marker (Core's 10)


class FundingError(Exception):
    """A funding failure with Core's message (the handler gives it Core's RPC code)."""


def compact_size_len(n: int) -> int:
    return 1 if n < 253 else 3 if n <= 0xFFFF else 5 if n <= 0xFFFFFFFF else 9


def fee_for(rate_per_kvb: int, vsize: int) -> int:
    """Core's CFeeRate::GetFee: rounded up to the next satoshi."""
    return -(-rate_per_kvb * vsize // 1000)


def output_size(txout: TxOut) -> int:
    return 8 + compact_size_len(len(txout.script_pubkey)) + len(txout.script_pubkey)


def dust_threshold(txout: TxOut, rate_per_kvb: int) -> int:
    """Core's GetDustThreshold: the output and the smallest input that could spend it."""
    size = output_size(txout)
    kind, _ = solver(txout.script_pubkey)
    if kind.startswith("witness"):
        size += 32 + 4 + 1 + 107 // WITNESS_SCALE_FACTOR + 4
    else:
        size += 32 + 4 + 1 + 107 + 4
    return fee_for(rate_per_kvb, size)


def _max_satisfaction(node: Any) -> tuple[int, int, bool]:
    """(weight of the satisfaction, witness stack elements, is segwit) of a descriptor node, as
    Core's MaxSatisfactionWeight/MaxSatisfactionElems with maximum-size signatures."""
    if node.kind == "wpkh":
        return (1 + MAX_SIG_SIZE) + (1 + 33), 2, True
    if node.kind == "tr" and node.sub is None:
        return 1 + SCHNORR_SIG_SIZE, 1, True
    if node.kind == "sh" and node.sub.kind == "wpkh":
        sat, elems, _ = _max_satisfaction(node.sub)
        return (1 + 22) * WITNESS_SCALE_FACTOR + sat, elems, True
    if node.kind == "pkh":
        return ((1 + MAX_SIG_SIZE) + (1 + 33)) * WITNESS_SCALE_FACTOR, 2, False
    raise FundingError("Not solvable pre-selected input")


def max_input_weight(node: Any) -> int:
    """Core's MaxInputWeight for a transaction with a witness: prevout, sequence, scriptSig length,
    witness stack count and the satisfaction."""
    sat, elems, segwit = _max_satisfaction(node)
    scriptsig_len = 1 if segwit else compact_size_len(sat // WITNESS_SCALE_FACTOR)
    witstack_len = compact_size_len(elems) if segwit else 1
    return (32 + 4 + 4 + scriptsig_len) * WITNESS_SCALE_FACTOR + witstack_len + sat


DUMMY_NESTED_P2WPKH_INPUT_SIZE = 91  # Core's guess for spending change the wallet cannot solve


def input_vsize(node: Any) -> int:
    return -(-max_input_weight(node) // WITNESS_SCALE_FACTOR)


@dataclass
class Coin:
    """A pre-selected wallet coin and the descriptor node that solves it."""
    txout: TxOut
    node: Any


@dataclass
class Funded:
    tx: Transaction
    fee: int
    change_pos: int


def _signed_vsize(tx: Transaction, coins: list[Coin]) -> int:
    """Core's CalculateMaximumSignedTxSize: the transaction as if every input were signed."""
    weight = (4 + 4 + compact_size_len(len(tx.vin)) + compact_size_len(len(tx.vout))) * WITNESS_SCALE_FACTOR
    if any(_max_satisfaction(c.node)[2] for c in coins):
        weight += 2  # segwit marker and flag
    weight += sum(output_size(o) for o in tx.vout) * WITNESS_SCALE_FACTOR
    weight += sum(max_input_weight(c.node) for c in coins)
    return -(-weight // WITNESS_SCALE_FACTOR)


def fund_preset(tx: Transaction, coins: list[Coin], subtract_from: set[int], rate_per_kvb: int,
                change_script: bytes, change_spend_vsize: int, change_pos: int, no_change_reason: str = "") -> Funded:
    """Complete `tx` (its inputs are `coins`, its outputs the recipients) with a change output and
    fees as Core does when no other inputs may be added. `change_pos` -1 means at the end (Core
    picks a random place; callers wanting Core's exact bytes give a position). An empty
    `change_script` fails only if change is needed, with `no_change_reason`."""
    recipients = list(tx.vout)
    sffo = bool(subtract_from)
    for i, out in enumerate(recipients):
        if i not in subtract_from and out.value < dust_threshold(out, DUST_RELAY_TX_FEE):
            raise FundingError("Transaction amount too small")
    noinputs_size = TX_NOINPUTS_BASE + compact_size_len(len(recipients)) + sum(output_size(o) for o in recipients)
    not_input_fees = fee_for(rate_per_kvb, noinputs_size)
    recipients_sum = sum(o.value for o in recipients)
    target = recipients_sum if sffo else recipients_sum + not_input_fees

    change_proto = TxOut(0, change_script)
    change_fee = fee_for(rate_per_kvb, output_size(change_proto))
    change_spend_fee = fee_for(DEFAULT_DISCARD_FEE, change_spend_vsize)
    min_viable_change = max(change_spend_fee + 1, dust_threshold(change_proto, DEFAULT_DISCARD_FEE))

    selected = sum(c.txout.value for c in coins)
    effective = sum(c.txout.value - fee_for(rate_per_kvb, input_vsize(c.node)) for c in coins)
    if (selected if sffo else effective) < target:
        raise FundingError("The preselected coins total amount does not cover the transaction target. "
                           "Please allow other inputs to be automatically selected or include more coins manually")

    change = selected - target if sffo else effective - target - change_fee
    out = Transaction(tx.version, list(tx.vin), [TxOut(o.value, o.script_pubkey) for o in recipients], tx.locktime)
    pos = -1
    if change >= min_viable_change:
        if not change_script:
            raise FundingError(f"Transaction needs a change address, but we can't generate it. {no_change_reason}")
        pos = len(out.vout) if change_pos == -1 else change_pos
        out.vout.insert(pos, TxOut(change, change_script))

    fee_needed = fee_for(rate_per_kvb, _signed_vsize(out, coins))
    current_fee = selected - sum(o.value for o in out.vout)
    if not sffo and current_fee < fee_needed:
        raise FundingError("Fee needed > fee paid")
    if pos != -1 and fee_needed < current_fee:
        out.vout[pos].value += current_fee - fee_needed
        current_fee = fee_needed
    if sffo:
        _subtract_fee(out, recipients, subtract_from, pos, fee_needed - current_fee)
        current_fee = selected - sum(o.value for o in out.vout)
    return Funded(out, current_fee, pos)


def _subtract_fee(tx: Transaction, recipients: list[TxOut], subtract_from: set[int], change_pos: int,
                  to_reduce: int) -> None:
    """Core: the fee split equally among the chosen outputs, the first paying the remainder."""
    count = len(subtract_from)
    first = True
    i = 0
    for n in range(len(recipients)):
        if i == change_pos:
            i += 1
        if n in subtract_from:
            txout = tx.vout[i]
            txout.value -= to_reduce // count
            if first:
                first = False
                txout.value -= to_reduce % count
            if txout.value < dust_threshold(txout, DUST_RELAY_TX_FEE):
                if txout.value < 0:
                    raise FundingError("The transaction amount is too small to pay the fee")
                raise FundingError("The transaction amount is too small to send after the fee has been deducted")
        i += 1
