"""Funding a transaction from the wallet's coins, as Core's CreateTransactionInternal does
(wallet/spend.cpp): input weights from the
descriptors' maximum satisfactions, the change output and its dust/discard rules, the exact fee at
the fee rate, and subtracting the fee from chosen outputs.

With other inputs allowed, the wallet's coins are chosen as Core's SelectCoins does
(quill.wallet.coinselection).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from quill.consensus import WITNESS_SCALE_FACTOR
from quill.tx import script as S
from quill.tx.hashes import hash_to_hex
from quill.tx.script import solver
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet import coinselection as cs
from quill.wallet.coinselection import fee_at as fee_for

DEFAULT_DISCARD_FEE = 10_000      # sat/kvB: Core's -discardfee (the most GetDiscardRate gives)
DEFAULT_CONSOLIDATE_FEERATE = 10_000  # sat/kvB: Core's -consolidatefeerate, the long-term fee rate
DEFAULT_TRANSACTION_MAXFEE = 10_000_000  # sat: Core's -maxtxfee
MAX_BIP125_RBF_SEQUENCE = 0xFFFFFFFD
SEQUENCE_NONFINAL = 0xFFFFFFFE
MIN_STANDARD_TX_WEIGHT = 65 * WITNESS_SCALE_FACTOR  # Core's MIN_STANDARD_TX_NONWITNESS_SIZE in weight
DUST_RELAY_TX_FEE = 3_000         # sat/kvB: Core's -dustrelayfee
MAX_SIG_SIZE = 72                 # a DER signature with the sighash byte, at its largest (no R grinding)
SCHNORR_SIG_SIZE = 65             # a BIP340 signature with a sighash byte, at its largest
TX_NOINPUTS_BASE = 10             # version, locktime, input count and half the segwit marker (Core's 10)


class FundingError(Exception):
    """A funding failure with Core's message (the handler gives it Core's RPC code)."""


def compact_size_len(n: int) -> int:
    return 1 if n < 253 else 3 if n <= 0xFFFF else 5 if n <= 0xFFFFFFFF else 9


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


def _key_size(key: Any) -> int:
    """A key's serialized size: 65 for an uncompressed constant key, else 33."""
    return 65 if key.const is not None and len(key.const) == 65 else 33


def _script_size(node: Any) -> int:
    """Core's Descriptor::ScriptSize: the length of the script a node stands for."""
    if node.kind in ("multi", "sortedmulti"):
        # OP_k, each key's push, OP_n, OP_CHECKMULTISIG (n <= 16)
        return 3 + sum(1 + _key_size(k) for k in node.keys)
    if node.kind == "pk":
        return 2 + _key_size(node.keys[0])
    sizes = {"pkh": 25, "wpkh": 22, "sh": 23, "wsh": 34, "tr": 34, "rawtr": 34}
    if node.kind not in sizes:
        raise FundingError("Not solvable pre-selected input")
    return sizes[node.kind]


def _max_sat_size(node: Any) -> tuple[int, int]:
    """Core's MaxSatSize and MaxSatisfactionElems of a script inside sh() or wsh(): the bytes of
    the largest satisfaction (maximum-size signatures) and its stack elements."""
    if node.kind in ("multi", "sortedmulti"):
        return 1 + (1 + MAX_SIG_SIZE) * node.threshold, 1 + node.threshold  # the dummy, then k signatures
    if node.kind == "pk":
        return 1 + MAX_SIG_SIZE, 1
    if node.kind in ("pkh", "wpkh"):
        return (1 + MAX_SIG_SIZE) + (1 + _key_size(node.keys[0])), 2
    raise FundingError("Not solvable pre-selected input")


def _max_satisfaction(node: Any) -> tuple[int, int, bool]:
    """(weight of the satisfaction, witness stack elements, is segwit) of a descriptor node, as
    Core's MaxSatisfactionWeight/MaxSatisfactionElems with maximum-size signatures."""
    if node.kind == "wpkh":
        return (1 + MAX_SIG_SIZE) + (1 + 33), 2, True
    if node.kind in ("tr", "rawtr") and node.sub is None:
        return 1 + SCHNORR_SIG_SIZE, 1, True
    if node.kind == "wsh":
        size, elems = _max_sat_size(node.sub)
        script = _script_size(node.sub)
        return size + compact_size_len(script) + script, elems + 1, True
    if node.kind == "sh" and node.sub.kind in ("wpkh", "wsh"):
        sat, elems, _ = _max_satisfaction(node.sub)
        return (1 + _script_size(node.sub)) * WITNESS_SCALE_FACTOR + sat, elems, True
    if node.kind == "sh":
        size, elems = _max_sat_size(node.sub)
        return (1 + _script_size(node.sub) + size) * WITNESS_SCALE_FACTOR, elems, False
    if node.kind in ("pkh", "pk", "multi", "sortedmulti"):
        size, elems = _max_sat_size(node)
        return size * WITNESS_SCALE_FACTOR, elems, False
    raise FundingError("Not solvable pre-selected input")


def max_input_weight(node: Any, tx_is_segwit: bool = True) -> int:
    """Core's MaxInputWeight: prevout, sequence, scriptSig length, witness stack count (for every
    input once any input has a witness) and the satisfaction."""
    sat, elems, segwit = _max_satisfaction(node)
    scriptsig_len = 1 if segwit else compact_size_len(sat // WITNESS_SCALE_FACTOR)
    witstack_len = compact_size_len(elems) if segwit else (1 if tx_is_segwit else 0)
    return (32 + 4 + 4 + scriptsig_len) * WITNESS_SCALE_FACTOR + witstack_len + sat


DUMMY_NESTED_P2WPKH_INPUT_SIZE = 91  # Core's guess for spending change the wallet cannot solve


def input_vsize(node: Any) -> int:
    return -(-max_input_weight(node) // WITNESS_SCALE_FACTOR)


def output_type_of(node: Any) -> str:
    """Core's GetOutputType of a coin from the descriptor that solves it (AvailableCoins' grouping)."""
    kind = node.kind
    if kind == "tr":
        return "bech32m"
    if kind in ("wpkh", "wsh"):
        return "bech32"
    if kind == "sh":
        return "p2sh-segwit" if node.sub.kind in ("wpkh", "wsh") else "legacy"
    if kind == "pkh":
        return "legacy"
    return "unknown"


@dataclass
class Coin:
    """A wallet coin and the descriptor node that solves it (None: the wallet cannot solve it).
    Pre-selected coins need only `txout` and `node`."""
    txout: TxOut
    node: Any
    outpoint: OutPoint = field(default_factory=OutPoint)
    depth: int = 0
    from_me: bool = False
    ancestors: int = 0
    descendants: int = 0
    weight: int | None = None   # the caller's weight of the signed input (Core's input_weights)

    def input_bytes(self) -> int:
        if self.weight is not None:
            return -(-self.weight // WITNESS_SCALE_FACTOR)
        if self.node is None:
            return -1
        try:
            return input_vsize(self.node)
        except FundingError:
            return -1


@dataclass
class Funded:
    tx: Transaction
    fee: int
    change_pos: int


@dataclass
class FundingRules:
    """How to fund: Core's coin control and wallet settings for one call."""
    rate_per_kvb: int
    subtract_from: set[int]
    change_script: bytes
    change_spend_vsize: int
    change_pos: int = -1                  # -1: a random place, as Core
    no_change_reason: str = ""
    allow_other_inputs: bool = False
    available: list[Coin] = field(default_factory=list)
    avoid_partial_spends: bool = False
    include_unsafe: bool = False
    max_tx_weight: int | None = None
    new_input_sequence: int = MAX_BIP125_RBF_SEQUENCE
    # What unconfirmed coins' ancestors lack at the rate: the node's calculateIndividualBumpFees and
    # calculateCombinedBumpFee (quill.chain.mini_miner.BumpFees); None: no unconfirmed coins
    bump_fees: Any = None
    rng: random.Random = field(default_factory=random.Random)
    # Core's GetDiscardRate: change worth less than its spending at this rate is dropped
    discard_rate: int = DEFAULT_DISCARD_FEE
    # `available` as coin selection sees them (effective values at rate_per_kvb), made once by the
    # first fund() and shared by the second try (avoiding partial spends) at the same fee rate.
    available_outputs: list[cs.CoinOutput] | None = None


PRESET_SHORT = ("The preselected coins total amount does not cover the transaction target. "
                "Please allow other inputs to be automatically selected or include more coins manually")


def _selection_params(tx: Transaction, rules: FundingRules) -> cs.SelectionParams:
    """Core's CoinSelectionParams for these recipients and this change script."""
    recipients = tx.vout
    rate = rules.rate_per_kvb
    change_proto = TxOut(0, rules.change_script)
    change_output_size = output_size(change_proto)
    change_fee = fee_for(rate, change_output_size)
    change_spend_fee = fee_for(rules.discard_rate, rules.change_spend_vsize)
    recipients_sum = sum(o.value for o in recipients)
    return cs.SelectionParams(
        rng=rules.rng, effective_feerate=rate, long_term_feerate=DEFAULT_CONSOLIDATE_FEERATE,
        change_output_size=change_output_size, change_fee=change_fee,
        cost_of_change=change_spend_fee + change_fee,
        min_change_target=cs.generate_change_target(recipients_sum // len(recipients), change_fee, rules.rng),
        min_viable_change=max(change_spend_fee + 1, dust_threshold(change_proto, rules.discard_rate)),
        tx_noinputs_size=TX_NOINPUTS_BASE + compact_size_len(len(recipients)) + sum(output_size(o) for o in recipients),
        subtract_fee_outputs=bool(rules.subtract_from), avoid_partial_spends=rules.avoid_partial_spends,
        include_unsafe_inputs=rules.include_unsafe, max_tx_weight=rules.max_tx_weight)


def _outputs(coins: list[Coin], params: cs.SelectionParams, bump_fees: dict[tuple[bytes, int], int]
             ) -> list[cs.CoinOutput]:
    """The coins as coin selection sees them; the size and output type of spending a descriptor
    node are worked out once per node (a wallet's coins share a few)."""
    by_node: dict[int, tuple[int, str]] = {}
    out = []
    for c in coins:
        if c.weight is None and id(c.node) in by_node:
            size, output_type = by_node[id(c.node)]
        else:
            size, output_type = c.input_bytes(), "unknown" if c.node is None else output_type_of(c.node)
            if c.weight is None:
                by_node[id(c.node)] = size, output_type
        out.append(cs.make_output(c.outpoint, c.txout, c.depth, size, c.from_me, output_type,
                                  params.effective_feerate, params.long_term_feerate, c.ancestors, c.descendants,
                                  bump_fees.get((c.outpoint.hash, c.outpoint.n), 0)))
    return out


def _individual_bump_fees(coins: list[Coin], rules: FundingRules) -> dict[tuple[bytes, int], int]:
    unconfirmed = [c.outpoint for c in coins if c.depth == 0]
    if rules.bump_fees is None or not unconfirmed:
        return {}
    return dict(rules.bump_fees.individual(unconfirmed, rules.rate_per_kvb))


def outpoint_string(outpoint: OutPoint) -> str:
    """Core's COutPoint::ToString, as its error messages quote an outpoint."""
    return f"COutPoint({hash_to_hex(outpoint.hash)[:10]}, {outpoint.n})"


def fund(tx: Transaction, preset: list[Coin], rules: FundingRules) -> Funded:
    """Complete `tx` (its inputs are the pre-selected `preset`, its outputs the recipients) with
    more of the wallet's coins if allowed and needed, a change output and the fee, as Core's
    CreateTransactionInternal. An empty change script fails only if change is needed."""
    recipients = list(tx.vout)
    sffo = bool(rules.subtract_from)
    max_weight = cs.MAX_STANDARD_TX_WEIGHT if rules.max_tx_weight is None else rules.max_tx_weight
    if not MIN_STANDARD_TX_WEIGHT <= max_weight <= cs.MAX_STANDARD_TX_WEIGHT:
        raise FundingError(f"Maximum transaction weight must be between {MIN_STANDARD_TX_WEIGHT} and "
                           f"{cs.MAX_STANDARD_TX_WEIGHT}")
    for i, out in enumerate(recipients):
        if i not in rules.subtract_from and out.value < dust_threshold(out, DUST_RELAY_TX_FEE):
            raise FundingError("Transaction amount too small")
    params = _selection_params(tx, rules)
    not_input_fees = 0 if sffo else fee_for(rules.rate_per_kvb, params.tx_noinputs_size)
    target = sum(o.value for o in recipients) + not_input_fees
    if target == 0 and not preset:
        raise FundingError("Transaction requires one destination of non-zero value, a non-zero feerate, "
                           "or a pre-selected input")
    for coin in preset:
        if coin.input_bytes() < 0:  # Core's FetchSelectedInputs: no size, no fee
            raise FundingError(f"Not solvable pre-selected input {outpoint_string(coin.outpoint)}")
    # Core's FetchSelectedInputs and AvailableCoins each ask the node for their coins' bump fees.
    preset_outputs = _outputs(preset, params, _individual_bump_fees(preset, rules))
    candidates = rules.available if rules.allow_other_inputs else []
    if not rules.allow_other_inputs:
        available = []
    elif rules.available_outputs is not None:
        available = rules.available_outputs
    else:
        available = rules.available_outputs = _outputs(candidates, params, _individual_bump_fees(candidates, rules))

    def combined(coins: list[cs.CoinOutput]) -> int:
        return 0 if rules.bump_fees is None else int(rules.bump_fees.combined([c.outpoint for c in coins],
                                                                               rules.rate_per_kvb))

    params.combined_bump_fee = combined
    try:
        selection = cs.select_coins(available, preset_outputs, target, params, rules.allow_other_inputs,
                                    PRESET_SHORT)
    except cs.SelectionError as e:
        raise FundingError(e.message or "Insufficient funds") from None

    out = Transaction(tx.version, list(tx.vin), [TxOut(o.value, o.script_pubkey) for o in recipients], tx.locktime)
    change = selection.change(params.min_viable_change, params.change_fee)
    pos = -1
    if change > 0:
        pos = rules.rng.randrange(len(out.vout) + 1) if rules.change_pos == -1 else rules.change_pos
        out.vout.insert(pos, TxOut(change, rules.change_script))
    chosen = [c for c in selection.coins() if all(c is not p for p in preset_outputs)]
    rules.rng.shuffle(chosen)
    out.vin.extend(TxIn(c.outpoint, b"", rules.new_input_sequence) for c in chosen)

    by_outpoint = {id(o): c for o, c in zip(available, candidates, strict=True)}
    spent = preset + [by_outpoint[id(o)] for o in chosen]
    if any(c.node is None and c.weight is None for c in spent):
        raise FundingError("Missing solving data for estimating transaction size")
    weight = signed_weight(out, [c.node for c in spent], [c.weight for c in spent])
    fee_needed = fee_for(rules.rate_per_kvb, -(-weight // WITNESS_SCALE_FACTOR)) + selection.total_bump_fees()
    selected = selection.selected_value()
    current_fee = selected - sum(o.value for o in out.vout)
    if pos != -1 and fee_needed < current_fee:
        out.vout[pos].value += current_fee - fee_needed
        current_fee = fee_needed
    if sffo:
        _subtract_fee(out, recipients, rules.subtract_from, pos, fee_needed - current_fee)
        current_fee = selected - sum(o.value for o in out.vout)
    if fee_needed > current_fee:
        raise FundingError("Fee needed > fee paid")
    if pos != -1 and not rules.change_script:
        raise FundingError(f"Transaction needs a change address, but we can't generate it. {rules.no_change_reason}")
    if weight > cs.MAX_STANDARD_TX_WEIGHT:
        raise FundingError("Transaction too large")
    if current_fee > DEFAULT_TRANSACTION_MAXFEE:
        raise FundingError("Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)")
    return Funded(out, current_fee, pos)


def _signed_vsize(tx: Transaction, coins: list[Coin]) -> int:
    """Core's CalculateMaximumSignedTxSize of `tx` spending `coins` (virtual bytes)."""
    return -(-signed_weight(tx, [c.node for c in coins]) // WITNESS_SCALE_FACTOR)


# The destinations whose output type (Core's OutputTypeFromDestination) is bech32 or bech32m.
_WITNESS_DESTINATIONS = (S.WITNESS_V0_KEYHASH, S.WITNESS_V0_SCRIPTHASH, S.WITNESS_V1_TAPROOT, S.WITNESS_UNKNOWN,
                         S.ANCHOR)


def _is_segwit(node: Any) -> bool:
    """Core's IsSegwit of the descriptor inferred for an input: an addr() one (unsolvable) by its
    destination's output type."""
    if node is None:
        return False
    if node.kind == "addr":
        return solver(node.data)[0] in _WITNESS_DESTINATIONS
    try:
        return _max_satisfaction(node)[2]
    except FundingError:
        return False


def signed_weight(tx: Transaction, nodes: list[Any], weights: list[int | None] | None = None) -> int:
    """Core's CalculateMaximumSignedTxSize (as weight): the transaction as if every input were signed;
    an input with a weight given (Core's input_weights) counts that weight."""
    given = weights or [None] * len(nodes)
    weight = (4 + 4 + compact_size_len(len(tx.vin)) + compact_size_len(len(tx.vout))) * WITNESS_SCALE_FACTOR
    segwit = any(_is_segwit(node) for node in nodes)
    if segwit:
        weight += 2  # segwit marker and flag
    weight += sum(output_size(o) for o in tx.vout) * WITNESS_SCALE_FACTOR
    weight += sum(max_input_weight(node, segwit) if w is None else w for node, w in zip(nodes, given, strict=True))
    return weight


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


MAX_ANTI_FEE_SNIPING_TIP_AGE = 8 * 60 * 60  # seconds: Core's limit for trusting the tip's height


def discourage_fee_sniping(tx: Transaction, rng: random.Random, tip_height: int, tip_time: int, now: int,
                           initial_download: bool) -> None:
    """Core's DiscourageFeeSniping: the locktime at the tip's height (one time in ten up to 99
    blocks earlier), or 0 when the tip is not current."""
    if initial_download or tip_time < now - MAX_ANTI_FEE_SNIPING_TIP_AGE:
        tx.locktime = 0
        return
    tx.locktime = tip_height
    if rng.randrange(10) == 0:
        tx.locktime = max(0, tip_height - rng.randrange(100))


class SweepError(FundingError):
    """A sendall failure; `kind` is Core's error class: "funds" (insufficient funds), "parameter"
    (invalid parameter) or "wallet"."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def sweep(tx: Transaction, nodes: list[Any], total_in: int, remainder_to: list[int], rate_per_kvb: int,
          bump_fee: int, send_max: bool) -> None:
    """Core's sendall after the inputs are chosen: the fee at the rate on the signed-size estimate
    (plus `bump_fee`, what unconfirmed ancestors lack: calculateCombinedBumpFee), then what is left
    shared among the outputs at `remainder_to` (the first also takes the odd satoshis). Outputs are
    changed in place."""
    weight = signed_weight(tx, nodes)
    fee_from_size = fee_for(rate_per_kvb, -(-weight // WITNESS_SCALE_FACTOR))
    effective = total_in - fee_from_size - bump_fee
    if fee_from_size > DEFAULT_TRANSACTION_MAXFEE:
        raise SweepError("Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)", "wallet")
    if effective <= 0:
        if send_max:
            raise SweepError("Total value of UTXO pool too low to pay for transaction, try using lower feerate.",
                             "funds")
        raise SweepError("Total value of UTXO pool too low to pay for transaction. Try using lower feerate or "
                         "excluding uneconomic UTXOs with 'send_max' option.", "funds")
    if weight > cs.MAX_STANDARD_TX_WEIGHT:
        raise SweepError("Transaction too large.", "wallet")
    claimed = sum(o.value for o in tx.vout)
    if claimed > total_in:
        raise SweepError("Assigned more value to outputs than available funds.", "funds")
    remainder = effective - claimed
    if remainder < 0:
        raise SweepError("Insufficient funds for fees after creating specified outputs.", "funds")
    share, odd = divmod(remainder, len(remainder_to))
    for n, out in enumerate(tx.vout):
        if n in remainder_to:
            out.value = share + (odd if n == remainder_to[0] else 0)
            if out.value < dust_threshold(out, DUST_RELAY_TX_FEE):
                raise SweepError("Dynamically assigned remainder results in dust output.", "funds")
        elif out.value < dust_threshold(out, DUST_RELAY_TX_FEE):
            raise SweepError("Specified output amount to {} is below dust threshold.", "parameter")
