"""Core's coin selection (wallet/coinselection.cpp and the selection half of wallet/spend.cpp):
output groups and their eligibility filters, the four algorithms and the waste metric that
chooses between their answers.

    select_coins(available, preset, target, params)   Core's SelectCoins

Algorithms, each over a list of OutputGroups and a target in effective value:
    select_bnb       Branch and Bound: a changeless input set within cost_of_change of the target
    coin_grinder     the lightest input set that pays target + change (only at high fee rates)
    knapsack         Core's legacy stochastic subset sum
    select_srd       Single Random Draw

Amounts are satoshis, fee rates sat/kvB, weights weight units. `params.rng` is the only source
of randomness (Core's FastRandomContext), so a seeded Random makes every choice repeatable.
"""
from __future__ import annotations

import bisect
import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from quill.consensus import MAX_MONEY, WITNESS_SCALE_FACTOR
from quill.tx.transaction import OutPoint, TxOut

CHANGE_LOWER = 50_000            # Core's lower bound of the random change target
CHANGE_UPPER = 1_000_000         # and its upper bound
TOTAL_TRIES = 100_000            # BnB's and CoinGrinder's search limit
KNAPSACK_ITERATIONS = 1_000      # ApproximateBestSubset's repetitions
OUTPUT_GROUP_MAX_ENTRIES = 100   # coins to one script in one group when avoiding partial spends
MAX_STANDARD_TX_WEIGHT = 400_000
DEFAULT_ANCESTOR_LIMIT = 25      # the mempool's package limits, as the wallet reads them
DEFAULT_DESCENDANT_LIMIT = 25

# Core's OutputType enum order: AttemptSelection walks its per-type map in this order.
OUTPUT_TYPE_ORDER = ("legacy", "p2sh-segwit", "bech32", "bech32m", "unknown")

MAX_WEIGHT_EXCEEDED = ("The inputs size exceeds the maximum weight. Please try sending a smaller amount or manually "
                       "consolidating your wallet's UTXOs")
LONG_CHAIN = ("Unconfirmed UTXOs are available, but spending them creates a chain of transactions that will be "
              "rejected by the mempool")
WEIGHT_BELOW_NO_INPUTS = "Maximum transaction weight is less than transaction weight without inputs"
WEIGHT_BELOW_CHANGE = "Maximum transaction weight is too low, can not accommodate change output"
PRESET_AND_AUTO_TOO_HEAVY = ("The combination of the pre-selected inputs and the wallet automatic inputs selection "
                             "exceeds the transaction maximum weight. Please try sending a smaller amount or manually "
                             "consolidating your wallet's UTXOs")


class SelectionError(Exception):
    """No input set was found. An empty message is Core's plain failure ("Insufficient funds"
    to the caller); any other is one of Core's specific errors, which takes precedence."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


def fee_at(rate_per_kvb: int, vsize: int) -> int:
    """Core's CFeeRate::GetFee: rounded up to the next satoshi."""
    return -(-rate_per_kvb * vsize // 1000)


@dataclass(eq=False)
class CoinOutput:
    """Core's COutput: a spendable coin with its fees at the effective and long-term fee rates.
    `input_bytes` is the virtual size of spending it, -1 when the wallet cannot tell."""
    outpoint: OutPoint
    txout: TxOut
    depth: int
    input_bytes: int
    from_me: bool
    output_type: str
    fee: int = 0
    long_term_fee: int = 0
    ancestors: int = 0
    descendants: int = 0
    ancestor_bump_fees: int = 0   # what its unconfirmed ancestors lack at the fee rate (in `fee`)

    @property
    def effective_value(self) -> int:
        return self.txout.value - self.fee


def make_output(outpoint: OutPoint, txout: TxOut, depth: int, input_bytes: int, from_me: bool, output_type: str,
                feerate: int, long_term_feerate: int, ancestors: int = 0, descendants: int = 0,
                bump_fee: int = 0) -> CoinOutput:
    """Core's COutput with ApplyBumpFee: an unconfirmed coin also pays its ancestors' shortfall."""
    fee = (0 if input_bytes < 0 else fee_at(feerate, input_bytes)) + bump_fee
    long_term = 0 if input_bytes < 0 else fee_at(long_term_feerate, input_bytes)
    return CoinOutput(outpoint, txout, depth, input_bytes, from_me, output_type, fee, long_term, ancestors, descendants,
                      bump_fee)


class OutputGroup:
    """Core's OutputGroup: coins spent together, with their summed values, fees and weight."""
    __slots__ = ("outputs", "fee", "long_term_fee", "effective_value", "value", "from_me", "depth", "ancestors",
                 "descendants", "weight", "subtract_fee_outputs", "amount")

    def __init__(self, subtract_fee_outputs: bool) -> None:
        self.outputs: list[CoinOutput] = []
        self.fee = self.long_term_fee = self.effective_value = self.value = 0
        self.from_me = True
        self.depth = 999_999_999
        self.ancestors = self.descendants = self.weight = 0
        self.subtract_fee_outputs = subtract_fee_outputs
        self.amount = 0  # GetSelectionAmount, kept current

    def insert(self, coin: CoinOutput) -> None:
        self.outputs.append(coin)
        self.fee += coin.fee
        self.long_term_fee += coin.long_term_fee
        self.effective_value += coin.effective_value
        self.from_me = self.from_me and coin.from_me
        self.value += coin.txout.value
        self.depth = min(self.depth, coin.depth)
        # Ancestors add up (an overestimate when they share some); descendants are the largest count.
        self.ancestors += coin.ancestors
        self.descendants = max(self.descendants, coin.descendants)
        if coin.input_bytes > 0:
            self.weight += coin.input_bytes * WITNESS_SCALE_FACTOR
        self.amount = self.value if self.subtract_fee_outputs else self.effective_value

    @classmethod
    def of(cls, coin: CoinOutput, subtract_fee_outputs: bool) -> OutputGroup:
        """A group of the one coin (what insert() makes of a new group), each field set once."""
        group = cls.__new__(cls)
        group.outputs = [coin]
        group.fee = coin.fee
        group.long_term_fee = coin.long_term_fee
        group.value = coin.txout.value
        group.effective_value = group.value - coin.fee
        group.from_me = coin.from_me
        group.depth = min(999_999_999, coin.depth)
        group.ancestors = coin.ancestors
        group.descendants = max(0, coin.descendants)
        group.weight = coin.input_bytes * WITNESS_SCALE_FACTOR if coin.input_bytes > 0 else 0
        group.subtract_fee_outputs = subtract_fee_outputs
        group.amount = group.value if subtract_fee_outputs else group.effective_value
        return group

    @property
    def waste(self) -> int:
        return self.fee - self.long_term_fee


class EligibilityFilter(NamedTuple):
    """Core's CoinEligibilityFilter."""
    conf_mine: int
    conf_theirs: int
    max_ancestors: int
    max_descendants: int
    include_partial_groups: bool = False


class SelectionFilter(NamedTuple):
    rule: EligibilityFilter
    allow_mixed_output_types: bool = True


@dataclass
class SelectionParams:
    """Core's CoinSelectionParams (the discard fee rate and change spend size only enter through
    cost_of_change and min_viable_change)."""
    rng: random.Random
    effective_feerate: int
    long_term_feerate: int
    change_output_size: int
    change_fee: int
    cost_of_change: int
    min_change_target: int
    min_viable_change: int
    tx_noinputs_size: int
    subtract_fee_outputs: bool = False
    avoid_partial_spends: bool = False
    include_unsafe_inputs: bool = False
    max_tx_weight: int | None = None
    # Core's calculateCombinedBumpFee: the shortfall of the unconfirmed coins' ancestors together.
    combined_bump_fee: Callable[[list[CoinOutput]], int] | None = None
    spend_zero_conf_change: bool = True
    reject_long_chains: bool = True


@dataclass
class Selection:
    """Core's SelectionResult: the chosen coins (in insertion order, without duplicates), the
    target they were chosen for, and the waste metric once computed."""
    target: int
    algorithm: str
    inputs: dict[int, CoinOutput] = field(default_factory=dict)
    use_effective: bool = False
    weight: int = 0
    waste: int | None = None
    bump_fee_discount: int = 0   # shared ancestors counted once rather than per coin

    def add(self, group: OutputGroup) -> None:
        for coin in group.outputs:
            self.inputs[id(coin)] = coin
        self.use_effective = not group.subtract_fee_outputs
        self.weight += group.weight

    def merge(self, other: Selection) -> None:
        self.inputs.update(other.inputs)
        self.target += other.target
        self.use_effective = self.use_effective or other.use_effective
        self.weight += other.weight

    def coins(self) -> list[CoinOutput]:
        return list(self.inputs.values())

    def selected_value(self) -> int:
        return sum(c.txout.value for c in self.inputs.values())

    def selected_effective_value(self) -> int:
        return sum(c.effective_value for c in self.inputs.values()) + self.bump_fee_discount

    def total_bump_fees(self) -> int:
        return sum(c.ancestor_bump_fees for c in self.inputs.values()) - self.bump_fee_discount

    def change(self, min_viable_change: int, change_fee: int) -> int:
        """Core's GetChange: what is left for a change output, 0 when not worth one."""
        if self.use_effective:
            change = self.selected_effective_value() - self.target - change_fee
        else:
            change = self.selected_value() - self.target
        return 0 if change < min_viable_change else change

    def recalculate_waste(self, min_viable_change: int, change_cost: int, change_fee: int) -> None:
        waste = sum(c.fee - c.long_term_fee for c in self.inputs.values()) - self.bump_fee_discount
        if self.change(min_viable_change, change_fee):
            waste += change_cost
        else:
            selected = self.selected_effective_value() if self.use_effective else self.selected_value()
            waste += selected - self.target
        self.waste = waste

    def rank(self) -> tuple[int, int]:
        """Core's operator<: less waste first; on equal waste, more inputs first."""
        assert self.waste is not None
        return self.waste, -len(self.inputs)


def _by_amount_then_waste(group: OutputGroup) -> tuple[int, int]:
    return -group.amount, group.fee - group.long_term_fee   # the waste, without the property's call


def _by_amount_then_weight(group: OutputGroup) -> tuple[int, int]:
    return -group.amount, group.weight


# -- the algorithms --------------------------------------------------------------------------


def _run_tries(index: int, end: int, selection: list[int], amounts: list[int], fees: list[int],
               clones: list[int]) -> int:
    """Core's tries over groups index..end-1 each included and taken back at once: two per group,
    one for a clone of the omitted group before it (which is not included)."""
    skipped = 0
    if selection:
        skipped = clones[end] - clones[index + 1] + (
            index - 1 != selection[-1] and amounts[index] == amounts[index - 1] and fees[index] == fees[index - 1])
    return 2 * (end - index) - skipped


def _least_waste_reaching(index: int, end: int, selection: list[int],
                          columns: tuple[list[int], list[int], list[int], list[int], list[int]], base: int, room: int,
                          best_waste: int) -> tuple[int, int, bool]:
    """BnB over groups index..end-1 that each reach the target on top of `selection` (whose waste
    with its excess is `base`, its weight `room` under the limit): the last group of least waste
    no more than `best_waste` (-1: none), that waste, and whether one was too heavy. Clones of the
    omitted group before them are not included, as in Core."""
    amounts, wastes, weights, clones, reach = columns
    first_clone = bool(selection) and index - 1 != selection[-1] and clones[index + 1] != clones[index]
    if not (first_clone or (selection and clones[end] != clones[index + 1])) and max(weights[index:end]) <= room:
        # No clone and none too heavy: the least of waste + amount over the run, its last place.
        window = reach[index:end]
        least = min(window)
        if base + least > best_waste:
            return -1, best_waste, False
        return end - 1 - window[::-1].index(least), base + least, False
    found = -1
    exceeded = False
    for k in range(index, end):
        if selection and (k > index or index - 1 != selection[-1]) and clones[k + 1] != clones[k]:
            continue
        if weights[k] > room:
            exceeded = True
        elif base + wastes[k] + amounts[k] <= best_waste:
            best_waste, found = base + wastes[k] + amounts[k], k
    return found, best_waste, exceeded


def select_bnb(pool: list[OutputGroup], target: int, cost_of_change: int, max_weight: int) -> Selection:
    """Core's SelectCoinsBnB: depth-first over the groups by descending amount, inclusion branch
    first, keeping the least wasteful selection within [target, target + cost_of_change].

    Core's search step for step, tries counted as Core counts them, with one shortcut: the groups
    too large to include on top of the current selection (the selection would go over the upper
    bound at once) form a run, the amounts being sorted; Core includes each and backtracks at
    once (two tries, one for a clone of the group before it), which changes nothing else, so the
    run is passed in one step. Giving the omitted groups back to the lookahead is one difference
    of prefix sums."""
    available = sum(g.amount for g in pool)
    if available < target:
        raise SelectionError()
    pool = sorted(pool, key=_by_amount_then_waste)
    n = len(pool)
    amounts = [g.amount for g in pool]
    negated = [-a for a in amounts]   # ascending, for bisect
    wastes = [g.waste for g in pool]
    weights = [g.weight for g in pool]
    fees = [g.fee for g in pool]
    prefix = [0] * (n + 1)            # prefix[k]: the amounts before index k
    clones = [0] * (n + 1)            # clones[k]: the groups before k equal (amount, fee) to the one before them
    for k in range(n):
        prefix[k + 1] = prefix[k] + amounts[k]
        clones[k + 1] = clones[k] + (k > 0 and amounts[k] == amounts[k - 1] and fees[k] == fees[k - 1])
    feerate_high = pool[0].fee > pool[0].long_term_fee
    upper = target + cost_of_change
    reach = [w + a for w, a in zip(wastes, amounts, strict=True)]   # a group's waste with its amount

    curr_value = curr_waste = curr_weight = 0
    selection: list[int] = []
    best: list[int] = []
    best_waste = MAX_MONEY
    weight_exceeded = False
    index = tries = 0
    while tries < TOTAL_TRIES:
        tries += 1
        backtrack = False
        if curr_value + available < target or curr_value > upper or (curr_waste > best_waste and feerate_high):
            backtrack = True
        elif curr_weight > max_weight:
            weight_exceeded = True
            backtrack = True
        elif curr_value >= target:
            waste = curr_waste + curr_value - target
            if waste <= best_waste:
                best = list(selection)
                best_waste = waste
            backtrack = True
        if backtrack:
            if not selection:
                break
            last = selection.pop()
            available += prefix[index] - prefix[last + 1]   # the omitted ones back to the lookahead
            curr_value -= amounts[last]
            curr_waste -= wastes[last]
            curr_weight -= weights[last]
            index = last + 1
        elif curr_value + amounts[index] > upper:
            # Groups index..end-1 each go over the upper bound: included and taken back at once.
            end = bisect.bisect_left(negated, curr_value - upper, index)
            tries += _run_tries(index, end, selection, amounts, fees, clones) - 1
            if tries > TOTAL_TRIES:
                break   # Core's search stops inside the run, where nothing changes
            available -= prefix[end] - prefix[index]
            index = end
        elif (not feerate_high and curr_value + amounts[index] >= target
              and tries + _run_tries(index, end := bisect.bisect_right(negated, curr_value - target, index),
                                     selection, amounts, fees, clones) <= TOTAL_TRIES + 1):
            # Groups index..end-1 each reach the target on top of the selection: Core includes
            # each, keeps it if it is the least waste so far (the last of equals), and takes it
            # back; the waste only matters at a fee rate above the long-term one.
            tries += _run_tries(index, end, selection, amounts, fees, clones) - 1
            found, best_waste, exceeded = _least_waste_reaching(
                index, end, selection, (amounts, wastes, weights, clones, reach),
                curr_waste + curr_value - target, max_weight - curr_weight, best_waste)
            weight_exceeded = weight_exceeded or exceeded
            if found >= 0:
                best = selection + [found]
            available -= prefix[end] - prefix[index]
            index = end
        else:
            available -= amounts[index]
            # Skip including a group equal (amount and fee) to the omitted one before it.
            if (not selection or index - 1 == selection[-1] or amounts[index] != amounts[index - 1]
                    or fees[index] != fees[index - 1]):
                selection.append(index)
                curr_value += amounts[index]
                curr_waste += wastes[index]
                curr_weight += weights[index]
            index += 1
    if not best:
        raise SelectionError(MAX_WEIGHT_EXCEEDED if weight_exceeded else "")
    result = Selection(target, "bnb")
    for i in best:
        result.add(pool[i])
    return result


def _tails(amounts: list[int], weights: list[int]) -> tuple[list[int], list[int], int]:
    """CoinGrinder's lookahead (amount after each index), min_tail_weight (lightest group after
    each index) and the total amount."""
    n = len(amounts)
    lookahead = [0] * n
    min_tail_weight = [0] * n
    total = 0
    lightest = 2 ** 31 - 1
    for index in range(n - 1, -1, -1):
        lookahead[index] = total
        min_tail_weight[index] = lightest
        total += amounts[index]
        lightest = min(lightest, weights[index])
    return lookahead, min_tail_weight, total


def _skip_clones(amounts: list[int], next_utxo: int) -> tuple[int, bool]:
    """After a SHIFT: an equal amount after the omitted group is a clone or heavier (the sort puts
    lighter first), so skip it; at the end of the pool SHIFT again instead."""
    while amounts[next_utxo - 1] == amounts[next_utxo]:
        if next_utxo >= len(amounts) - 1:
            return next_utxo, True
        next_utxo += 1
    return next_utxo, False


def coin_grinder(pool: list[OutputGroup], target: int, change_target: int, max_weight: int) -> Selection:
    """Core's CoinGrinder: the lowest-weight input set reaching target + change_target (ties: the
    smaller amount), by a depth-first search that EXPLOREs, SHIFTs and CUTs as Core's does."""
    pool = sorted(pool, key=_by_amount_then_weight)
    n = len(pool)
    amounts = [g.amount for g in pool]
    weights = [g.weight for g in pool]
    lookahead, min_tail_weight, total = _tails(amounts, weights)
    total_target = target + change_target
    if total < total_target:
        raise SelectionError()

    selection: list[int] = []
    best: list[int] = []
    curr_amount = curr_weight = 0
    best_amount = MAX_MONEY
    best_weight = max_weight
    weight_exceeded = False
    next_utxo = 0
    tries = 0
    while True:
        shift = cut = False
        curr_amount += amounts[next_utxo]
        curr_weight += weights[next_utxo]
        selection.append(next_utxo)
        next_utxo += 1
        tries += 1
        tail = selection[-1]
        if curr_amount + lookahead[tail] < total_target:
            cut = True
        elif curr_weight > best_weight:
            if curr_weight > max_weight:
                weight_exceeded = True
            if weights[tail] <= min_tail_weight[tail]:
                cut = True
            else:
                shift = True
        elif curr_amount >= total_target:
            shift = True
            if curr_weight < best_weight or (curr_weight == best_weight and curr_amount < best_amount):
                best = list(selection)
                best_weight = curr_weight
                best_amount = curr_amount
        elif best and curr_weight + min_tail_weight[tail] * (
                (total_target - curr_amount + amounts[tail] - 1) // amounts[tail]) > best_weight:
            if weights[tail] <= min_tail_weight[tail]:
                cut = True
            else:
                shift = True
        if tries >= TOTAL_TRIES:
            break
        if next_utxo == n:
            cut = True
        if cut:
            last = selection.pop()
            curr_amount -= amounts[last]
            curr_weight -= weights[last]
            shift = True
        done = False
        while shift:
            if not selection:
                done = True
                break
            next_utxo = selection[-1] + 1
            last = selection.pop()
            curr_amount -= amounts[last]
            curr_weight -= weights[last]
            next_utxo, shift = _skip_clones(amounts, next_utxo)
        if done:
            break
    if not best:
        raise SelectionError(MAX_WEIGHT_EXCEEDED if weight_exceeded else "")
    result = Selection(target, "cg")
    for i in best:
        result.add(pool[i])
    return result


def select_srd(pool: list[OutputGroup], target: int, change_fee: int, rng: random.Random,
               max_weight: int) -> Selection:
    """Core's SelectCoinsSRD: random groups until target + CHANGE_LOWER + change_fee is reached,
    dropping the smallest ones whenever the weight goes over."""
    target_value = target + CHANGE_LOWER + change_fee
    order = list(range(len(pool)))
    rng.shuffle(order)
    heap: list[tuple[int, int]] = []
    selected = weight = 0
    weight_exceeded = False
    for i in order:
        group = pool[i]
        heapq.heappush(heap, (group.amount, i))
        selected += group.amount
        weight += group.weight
        if weight > max_weight:
            weight_exceeded = True
            while True:
                _, smallest = heapq.heappop(heap)
                selected -= pool[smallest].amount
                weight -= pool[smallest].weight
                if not heap or weight <= max_weight:
                    break
        if selected >= target_value:
            result = Selection(target, "srd")
            for _, j in sorted(heap):
                result.add(pool[j])
            return result
    raise SelectionError(MAX_WEIGHT_EXCEEDED if weight_exceeded else "")


def _approximate_best_subset(rng: random.Random, groups: list[OutputGroup], total_lower: int, target: int,
                             max_weight: int) -> tuple[list[bool], int]:
    """Core's ApproximateBestSubset: random subsets (then the rest in a second pass), each taken
    back one group as soon as it reaches the target, keeping the smallest total at or above it.

    Equivalent shortcuts, the groups being sorted by decreasing amount:
    * once a group reaches the target and is taken back, the groups right after it with the same
      amount and weight would do exactly the same (same total, same candidate, not better), so
      they are skipped in one step;
    * while no group can exceed the weight limit, the groups that reach the target from the
      running total are a run [i, k) found by bisection; each is taken back, so the total does not
      move, and the run's best candidate is its smallest amount, first met at the first chosen
      group of that amount: one step for the whole run instead of one per group."""
    n = len(groups)
    amounts = [g.amount for g in groups]
    negated = [-a for a in amounts]    # ascending, for bisect
    weights = [g.weight for g in groups]
    heaviest = max(weights, default=0)
    run_end = list(range(1, n + 1))   # the first index after i with another amount or weight
    for i in range(n - 2, -1, -1):
        if amounts[i] == amounts[i + 1] and weights[i] == weights[i + 1]:
            run_end[i] = run_end[i + 1]
    best = bytes([1]) * n
    best_total = total_lower
    for _ in range(KNAPSACK_ITERATIONS):
        if best_total == target:
            break
        included = bytearray(n)
        total = weight = 0
        coin_flips = format(rng.getrandbits(n), f"0{n}b") if n else ""
        # First pass: the groups the coin flips chose; second (only if that never reached the
        # target): all the others.
        for flips, wanted in ((coin_flips, "1"), (None, "")):
            if flips is None:
                flips = "".join("0" if b else "1" for b in included)
                wanted = "1"
            reached = False
            i = flips.find(wanted)
            while i != -1:
                if total + amounts[i] >= target and weight + heaviest <= max_weight:
                    reaching = bisect.bisect_right(negated, total - target)   # amounts >= target - total
                    reached = True
                    last = flips.rfind(wanted, i, reaching)
                    candidate = total + amounts[last]
                    if candidate < best_total:
                        first = flips.find(wanted, max(i, bisect.bisect_left(negated, -amounts[last])), reaching)
                        included[first] = 1
                        best_total = candidate
                        best = bytes(included)
                        included[first] = 0
                    i = flips.find(wanted, reaching) if reaching < n else -1
                    continue
                total += amounts[i]
                weight += weights[i]
                if total >= target and weight <= max_weight:
                    reached = True
                    if total < best_total:
                        included[i] = 1
                        best_total = total
                        best = bytes(included)
                        included[i] = 0
                    total -= amounts[i]
                    weight -= weights[i]
                    i = flips.find(wanted, run_end[i]) if run_end[i] < n else -1
                else:
                    included[i] = 1
                    i = flips.find(wanted, i + 1)
            if reached:
                break
    return [bool(b) for b in best], best_total


def knapsack(groups: list[OutputGroup], target: int, change_target: int, rng: random.Random,
             max_weight: int) -> Selection:
    """Core's KnapsackSolver over the groups (negative effective values included, as Core's)."""
    result = Selection(target, "knapsack")
    groups = list(groups)
    rng.shuffle(groups)
    weight_exceeded = False
    lowest_larger: OutputGroup | None = None
    applicable: list[OutputGroup] = []
    total_lower = 0
    for group in groups:
        if group.weight > max_weight:
            weight_exceeded = True
            continue
        if group.amount == target:
            result.add(group)
            return result
        if group.amount < target + change_target:
            applicable.append(group)
            total_lower += group.amount
        elif lowest_larger is None or group.amount < lowest_larger.amount:
            lowest_larger = group
    if total_lower == target:
        for group in applicable:
            result.add(group)
        if result.weight <= max_weight:
            return result
        weight_exceeded = True
        result = Selection(target, "knapsack")
    if total_lower < target:
        if lowest_larger is None:
            raise SelectionError(MAX_WEIGHT_EXCEEDED if weight_exceeded else "")
        result.add(lowest_larger)
        return result
    applicable.sort(key=_by_amount_then_waste)
    chosen, best = _approximate_best_subset(rng, applicable, total_lower, target, max_weight)
    if best != target and total_lower >= target + change_target:
        chosen, best = _approximate_best_subset(rng, applicable, total_lower, target + change_target, max_weight)
    if lowest_larger is not None and (
            (best != target and best < target + change_target) or lowest_larger.amount <= best):
        result.add(lowest_larger)
        return result
    for group, taken in zip(applicable, chosen, strict=True):
        if taken:
            result.add(group)
    if result.weight > max_weight:
        if lowest_larger is None:
            raise SelectionError(MAX_WEIGHT_EXCEEDED)
        result = Selection(target, "knapsack")
        result.add(lowest_larger)
    return result


def generate_change_target(payment_value: int, change_fee: int, rng: random.Random) -> int:
    """Core's GenerateChangeTarget: a random change budget between 50k sat and min(2x payment, 1M sat)."""
    if payment_value <= CHANGE_LOWER // 2:
        return change_fee + CHANGE_LOWER
    upper = min(payment_value * 2, CHANGE_UPPER)
    return change_fee + rng.randrange(upper - CHANGE_LOWER) + CHANGE_LOWER


# -- choosing among the algorithms ---------------------------------------------------------


@dataclass
class Groups:
    positive: list[OutputGroup] = field(default_factory=list)
    mixed: list[OutputGroup] = field(default_factory=list)


@dataclass
class GroupsByType:
    """Core's OutputGroupTypeMap: per output type, and all together."""
    by_type: dict[str, Groups] = field(default_factory=dict)
    all: Groups = field(default_factory=Groups)

    def push(self, group: OutputGroup, output_type: str, positive: bool, mixed: bool) -> None:
        if not group.outputs:
            return
        groups = self.by_type.setdefault(output_type, Groups())
        if positive and group.amount > 0:
            groups.positive.append(group)
            self.all.positive.append(group)
        if mixed:
            groups.mixed.append(group)
            self.all.mixed.append(group)


def choose_selection(target: int, groups: Groups, params: SelectionParams) -> Selection:
    """Core's ChooseSelectionResult: every algorithm that applies, the least waste wins."""
    results: list[Selection] = []
    errors: list[SelectionError] = []
    max_weight = (MAX_STANDARD_TX_WEIGHT if params.max_tx_weight is None else params.max_tx_weight) \
        - params.tx_noinputs_size * WITNESS_SCALE_FACTOR
    if max_weight <= 0:
        raise SelectionError(WEIGHT_BELOW_NO_INPUTS)

    def attempt(run: object, *args: object) -> Selection | None:
        try:
            found: Selection = run(*args)  # type: ignore[operator]
        except SelectionError as e:
            if e.message:
                errors.append(e)
            return None
        results.append(found)
        return found

    if not params.subtract_fee_outputs and groups.positive:  # BnB makes no change: not with SFFO
        attempt(select_bnb, groups.positive, target, params.cost_of_change, max_weight)
    max_weight -= params.change_output_size * WITNESS_SCALE_FACTOR
    if max_weight < 0 and not results:
        raise SelectionError(WEIGHT_BELOW_CHANGE)
    attempt(knapsack, groups.mixed, target, params.min_change_target, params.rng, max_weight)
    if params.effective_feerate > 3 * params.long_term_feerate and groups.positive:
        attempt(coin_grinder, groups.positive, target, params.min_change_target, max_weight)
    attempt(select_srd, groups.positive, target, params.change_fee, params.rng, max_weight)
    if not results:
        raise errors[0] if errors else SelectionError()
    for result in results:
        unconfirmed = [c for c in result.inputs.values() if c.depth == 0]
        if unconfirmed and params.combined_bump_fee is not None:
            summed = sum(c.ancestor_bump_fees for c in unconfirmed)
            result.bump_fee_discount = summed - params.combined_bump_fee(unconfirmed)
        result.recalculate_waste(params.min_viable_change, params.cost_of_change, params.change_fee)
    return min(results, key=Selection.rank)


def attempt_selection(target: int, groups: GroupsByType, params: SelectionParams, allow_mixed: bool) -> Selection:
    """Core's AttemptSelection: each output type alone first; mixing types only as a last resort."""
    results = []
    for output_type in sorted(groups.by_type, key=OUTPUT_TYPE_ORDER.index):
        try:
            results.append(choose_selection(target, groups.by_type[output_type], params))
        except SelectionError as e:
            if e.message:
                raise
    if results:
        return min(results, key=Selection.rank)
    if allow_mixed and len(groups.by_type) > 1:
        return choose_selection(target, groups.all, params)
    raise SelectionError()


def eligibility_filters(params: SelectionParams) -> list[SelectionFilter]:
    """Core's ordered filters, from six confirmations on foreign coins to unconfirmed ones."""
    max_anc = max(1, DEFAULT_ANCESTOR_LIMIT)
    max_desc = max(1, DEFAULT_DESCENDANT_LIMIT)
    filters = [SelectionFilter(EligibilityFilter(1, 6, 0, 0), allow_mixed_output_types=False),
               SelectionFilter(EligibilityFilter(1, 1, 0, 0))]
    if params.spend_zero_conf_change:
        filters.append(SelectionFilter(EligibilityFilter(0, 1, 2, 2)))
        filters.append(SelectionFilter(EligibilityFilter(0, 1, min(4, max_anc // 3), min(4, max_desc // 3))))
        filters.append(SelectionFilter(EligibilityFilter(0, 1, max_anc // 2, max_desc // 2)))
        filters.append(SelectionFilter(EligibilityFilter(0, 1, max_anc - 1, max_desc - 1, True)))
        if params.include_unsafe_inputs:
            filters.append(SelectionFilter(EligibilityFilter(0, 0, max_anc - 1, max_desc - 1, True)))
        if not params.reject_long_chains:
            unlimited = 2 ** 64 - 1
            filters.append(SelectionFilter(EligibilityFilter(0, 1, unlimited, unlimited, True)))
    return filters


class FilteredGroups:
    """Core's GroupOutputs result: the coins' groups, built once per selection (one per coin, or
    avoiding partial spends, per script in groups of up to OUTPUT_GROUP_MAX_ENTRIES), each with
    its amounts, fees and weight; `groups_for(rule)` files them under one eligibility filter,
    when the selection gets to it (most selections stop at the first filter), for every
    algorithm to share. `discarded` are the groups no filter accepts."""

    def __init__(self, coins: list[CoinOutput], params: SelectionParams, filters: list[SelectionFilter]) -> None:
        self._filters = filters
        self._filed: dict[EligibilityFilter, GroupsByType | None] = {}
        sffo = params.subtract_fee_outputs
        # (group, output type, goes to `positive`, goes to `mixed`, a partial group among several)
        self._entries: list[tuple[OutputGroup, str, bool, bool, bool]] = []
        if not params.avoid_partial_spends:
            of = OutputGroup.of
            self._entries = [(of(coin, sffo), coin.output_type, True, True, False) for coin in coins]
        else:
            by_script: dict[tuple[bytes, str], list[CoinOutput]] = {}
            for coin in coins:
                key = (coin.txout.script_pubkey, coin.output_type)
                same = by_script.get(key)
                if same is None:
                    by_script[key] = [coin]
                else:
                    same.append(coin)
            order = {t: i for i, t in enumerate(OUTPUT_TYPE_ORDER)}
            keys = sorted(by_script, key=lambda k: (len(k[0]), k[0], order[k[1]]))
            # Core groups all the coins, then the positive ones apart: where every coin of a
            # script is positive, the two sets of groups are the same and are made once.
            every = {key: _chunks(by_script[key], sffo) for key in keys}
            for key in keys:
                self._file(every[key], key[1], False)
            for key in keys:
                same = by_script[key]
                positive = [c for c in same if c.effective_value > 0]
                self._file(every[key] if len(positive) == len(same) else _chunks(positive, sffo), key[1], True)
        # The filters only loosen (each accepts what the one before it does), but any order gives the
        # same answer: the loosest first leaves the fewest to look at again.
        remaining = self._entries
        for rule in reversed([f.rule for f in filters]):
            if not remaining:
                break
            accepted = {id(entry) for entry in self._accepted(rule, remaining)}
            remaining = [entry for entry in remaining if id(entry) not in accepted]
        self.discarded = [entry[0] for entry in remaining]

    def _file(self, groups: list[OutputGroup], output_type: str, positive_only: bool) -> None:
        for back, group in enumerate(reversed(groups)):  # the partial group first
            self._entries.append((group, output_type, positive_only, not positive_only,
                                  back == 0 and len(groups) > 1))

    @staticmethod
    def _accepted(rule: EligibilityFilter, entries: list[tuple[OutputGroup, str, bool, bool, bool]]
                  ) -> list[tuple[OutputGroup, str, bool, bool, bool]]:
        """The entries `rule` accepts: deep enough (Core's OutputGroup::EligibleForSpending), within its
        ancestor and descendant limits, and partial groups only if it takes them."""
        conf_mine, conf_theirs = rule.conf_mine, rule.conf_theirs
        max_anc, max_desc, partial = rule.max_ancestors, rule.max_descendants, rule.include_partial_groups
        return [entry for entry in entries
                if entry[0].depth >= (conf_mine if entry[0].from_me else conf_theirs)
                and entry[0].ancestors <= max_anc and entry[0].descendants <= max_desc and (partial or not entry[4])]

    def groups_for(self, rule: EligibilityFilter) -> GroupsByType | None:
        """The groups `rule` accepts, by output type; None when it accepts none."""
        if rule not in self._filed:
            accepted = self._accepted(rule, self._entries)
            filed = GroupsByType()
            for group, output_type, positive, mixed, _ in accepted:
                filed.push(group, output_type, positive, mixed)
            self._filed[rule] = filed if accepted else None
        return self._filed[rule]


def _chunks(coins: list[CoinOutput], sffo: bool) -> list[OutputGroup]:
    """One script's coins in groups of up to OUTPUT_GROUP_MAX_ENTRIES, in order (Core's
    GroupOutputs with partial spends avoided)."""
    if len(coins) == 1:
        return [OutputGroup.of(coins[0], sffo)]
    groups = []
    for start in range(0, len(coins), OUTPUT_GROUP_MAX_ENTRIES):
        group = OutputGroup(sffo)
        for coin in coins[start:start + OUTPUT_GROUP_MAX_ENTRIES]:
            group.insert(coin)
        groups.append(group)
    return groups


def automatic_selection(coins: list[CoinOutput], target: int, params: SelectionParams) -> Selection:
    """Core's AutomaticCoinSelection: the filters from strictest to loosest, the first that funds."""
    if params.avoid_partial_spends and len(coins) > OUTPUT_GROUP_MAX_ENTRIES:
        coins = list(coins)
        params.rng.shuffle(coins)
    filters = eligibility_filters(params)
    grouped = FilteredGroups(coins, params, filters)
    discarded = grouped.discarded
    max_anc, max_desc = max(1, DEFAULT_ANCESTOR_LIMIT), max(1, DEFAULT_DESCENDANT_LIMIT)
    total_discarded = sum(g.amount for g in discarded)
    long_chain = sum(g.amount for g in discarded if g.ancestors >= max_anc or g.descendants >= max_desc)
    total = sum(c.txout.value for c in coins)
    if total - total_discarded < target:
        if total - total_discarded + long_chain > target:
            raise SelectionError(LONG_CHAIN)
        raise SelectionError()
    detailed: list[SelectionError] = []
    for selection_filter in filters:
        groups = grouped.groups_for(selection_filter.rule)
        if groups is None:
            continue
        try:
            return attempt_selection(target, groups, params, selection_filter.allow_mixed_output_types)
        except SelectionError as e:
            if e.message:
                detailed.append(e)
    raise detailed[0] if detailed else SelectionError()


def select_coins(available: list[CoinOutput], preset: list[CoinOutput], target: int, params: SelectionParams,
                 allow_other_inputs: bool, preset_error: str) -> Selection:
    """Core's SelectCoins: the pre-selected coins, then (if allowed and needed) automatic ones."""
    sffo = params.subtract_fee_outputs
    preset_total = sum(c.txout.value if sffo else c.effective_value for c in preset)
    remaining = target - preset_total
    if not allow_other_inputs and remaining > 0:
        raise SelectionError(preset_error)
    preselected = Selection(preset_total, "manual")
    preselected.use_effective = not sffo
    for coin in preset:
        preselected.inputs[id(coin)] = coin
        preselected.weight += max(coin.input_bytes, 0) * WITNESS_SCALE_FACTOR
    if remaining <= 0:
        preselected.target = target
        preselected.recalculate_waste(params.min_viable_change, params.cost_of_change, params.change_fee)
        return preselected
    if sffo:
        available_total = sum(c.txout.value for c in available)
    else:
        available_total = sum(c.effective_value for c in available)
    if remaining > available_total:
        raise SelectionError()
    result = automatic_selection(available, remaining, params)
    if preset:
        result.merge(preselected)
        result.recalculate_waste(params.min_viable_change, params.cost_of_change, params.change_fee)
        limit = MAX_STANDARD_TX_WEIGHT if params.max_tx_weight is None else params.max_tx_weight
        if result.weight > limit:
            raise SelectionError(PRESET_AND_AUTO_TOO_HEAVY)
    return result
