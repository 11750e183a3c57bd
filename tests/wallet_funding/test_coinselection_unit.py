"""quill.wallet.coinselection's algorithms against brute force and against literal transcriptions
of Core's ApproximateBestSubset and SelectCoinsBnB loops (the module skips runs of equal groups
and of groups too large to include; the answers must not change)."""
from __future__ import annotations

import itertools
import random

import pytest

from quill.tx.transaction import OutPoint, TxOut
from quill.wallet import coinselection as cs

P2TR = b"\x51\x20" + bytes(32)


def group(n: int, value: int, input_bytes: int = 58, rate: int = 5_000) -> cs.OutputGroup:
    coin = cs.make_output(OutPoint(n.to_bytes(32, "little"), 0), TxOut(value, P2TR), 10, input_bytes, False,
                          "bech32m", rate, 10_000)
    g = cs.OutputGroup(False)
    g.insert(coin)
    return g


def literal_best_subset(rng: random.Random, groups: list[cs.OutputGroup], total_lower: int, target: int,
                        max_weight: int) -> tuple[list[bool], int]:
    """Core's loop as written (coin flips drawn the same way as the module draws them)."""
    n = len(groups)
    best, best_total = [True] * n, total_lower
    for _ in range(cs.KNAPSACK_ITERATIONS):
        if best_total == target:
            break
        included = [False] * n
        total = weight = 0
        flips = format(rng.getrandbits(n), f"0{n}b")
        reached = False
        for first_pass in (True, False):
            if reached:
                break
            for i in range(n):
                if (flips[i] == "1") if first_pass else not included[i]:
                    total += groups[i].amount
                    weight += groups[i].weight
                    included[i] = True
                    if total >= target and weight <= max_weight:
                        reached = True
                        if total < best_total:
                            best_total, best = total, list(included)
                        total -= groups[i].amount
                        weight -= groups[i].weight
                        included[i] = False
    return best, best_total


@pytest.mark.parametrize("seed", range(6))
def test_knapsack_subset_shortcut_changes_nothing(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.choice([20_000, 50_000, 50_000, 120_000, rng.randrange(10_000, 400_000)]) for _ in range(60)]
    groups = sorted((group(i, v, rng.choice([58, 68])) for i, v in enumerate(values)),
                    key=lambda g: (-g.amount, g.waste))
    total = sum(g.amount for g in groups)
    for target, max_weight in ((total // 3, 400_000), (total // 2 + 1, 400_000), (total // 4, 3_000)):
        ours = cs._approximate_best_subset(random.Random(seed), groups, total, target, max_weight)
        theirs = literal_best_subset(random.Random(seed), groups, total, target, max_weight)
        assert ours == theirs


def literal_bnb(pool: list[cs.OutputGroup], target: int, cost_of_change: int,
                max_weight: int) -> tuple[list[int], bool] | None:
    """Core's SelectCoinsBnB loop as written: (the chosen positions in the sorted pool, whether the
    weight limit was hit), or None when the pool cannot reach the target."""
    available = sum(g.amount for g in pool)
    if available < target:
        return None
    pool = sorted(pool, key=lambda g: (-g.amount, g.waste))
    upper = target + cost_of_change
    feerate_high = pool[0].fee > pool[0].long_term_fee
    value = waste = weight = 0
    selection: list[int] = []
    best: list[int] = []
    best_waste = cs.MAX_MONEY
    exceeded = False
    index = 0
    for _ in range(cs.TOTAL_TRIES):
        backtrack = False
        if value + available < target or value > upper or (waste > best_waste and feerate_high):
            backtrack = True
        elif weight > max_weight:
            exceeded = backtrack = True
        elif value >= target:
            if waste + value - target <= best_waste:
                best, best_waste = list(selection), waste + value - target
            backtrack = True
        if backtrack:
            if not selection:
                break
            index -= 1
            while index > selection[-1]:
                available += pool[index].amount
                index -= 1
            value -= pool[index].amount
            waste -= pool[index].waste
            weight -= pool[index].weight
            selection.pop()
        else:
            g = pool[index]
            available -= g.amount
            if (not selection or index - 1 == selection[-1] or g.amount != pool[index - 1].amount
                    or g.fee != pool[index - 1].fee):
                selection.append(index)
                value += g.amount
                waste += g.waste
                weight += g.weight
        index += 1
    return best, exceeded


@pytest.mark.parametrize("seed", range(8))
def test_branch_and_bound_shortcut_changes_nothing(seed: int) -> None:
    """Pools that run into the search limit (many close amounts), with clones, both sides of the
    long-term fee rate and tight weight limits: the same coins, or the same failure."""
    rng = random.Random(seed)
    for _ in range(40):
        n = rng.choice([3, 40, 300, 1_000])
        span = rng.choice([5, 3_000, 20_000, 1_000_000])
        rate = rng.choice([1_000, 5_000, 20_000])
        pool = [group(i, 1_000 + rng.randrange(span), rng.choice([58, 68, 91]), rate) for i in range(n)]
        pool = [g for g in pool if g.amount > 0]
        total = sum(g.amount for g in pool)
        target = rng.randrange(1, total + 2)
        cost_of_change, max_weight = rng.choice([0, 300, 1_000, 5_000]), rng.choice([400_000, 3_000, 700])
        expected = literal_bnb(pool, target, cost_of_change, max_weight)
        try:
            found = cs.select_bnb(pool, target, cost_of_change, max_weight)
        except cs.SelectionError as e:
            assert expected is None or not expected[0]
            assert e.message == (cs.MAX_WEIGHT_EXCEEDED if expected is not None and expected[1] else "")
            continue
        assert expected is not None
        ordered = sorted(pool, key=lambda g: (-g.amount, g.waste))
        assert sorted(id(c) for c in found.coins()) == sorted(id(ordered[i].outputs[0]) for i in expected[0])


def test_branch_and_bound_finds_the_one_match_and_coin_grinder_the_lightest() -> None:
    values = [1_000_000 * 2 ** k for k in range(8)]
    pool = [group(i, v) for i, v in enumerate(values)]
    fee = cs.fee_at(5_000, 58)
    for subset in ([0, 3], [7], [1, 2, 6]):
        target = sum(values[i] - fee for i in subset) - 10
        found = cs.select_bnb(pool, target, 500, 400_000)
        assert sorted(c.txout.value for c in found.coins()) == sorted(values[i] for i in subset)
    # CoinGrinder: the fewest inputs (lightest) reaching target + change, smallest amount on ties.
    rng = random.Random(3)
    pool = [group(i, rng.randrange(10_000, 2_000_000), rng.choice([58, 68, 91])) for i in range(12)]
    target, change = 2_500_000, 60_000
    lightest = min((sum(g.weight for g in combo), sum(g.amount for g in combo))
                   for r in range(1, 13) for combo in itertools.combinations(pool, r)
                   if sum(g.amount for g in combo) >= target + change)
    found = cs.coin_grinder(pool, target, change, 400_000)
    assert (found.weight, sum(c.effective_value for c in found.coins())) == lightest
    with pytest.raises(cs.SelectionError) as failure:
        cs.coin_grinder(pool, target, change, 300)
    assert failure.value.message == cs.MAX_WEIGHT_EXCEEDED


def test_single_random_draw_keeps_under_the_weight_limit() -> None:
    pool = [group(i, 100_000 + i) for i in range(50)]
    found = cs.select_srd(pool, 500_000, 200, random.Random(1), 232 * 8)
    assert found.weight <= 232 * 8 and sum(c.effective_value for c in found.coins()) >= 500_000 + 50_200
    with pytest.raises(cs.SelectionError) as failure:
        cs.select_srd(pool, 5_000_000, 200, random.Random(1), 232 * 8)
    assert failure.value.message == cs.MAX_WEIGHT_EXCEEDED


Filed = dict[str, tuple[list[list[int]], list[list[int]]]]


def literal_group_outputs(coins: list[cs.CoinOutput], sffo: bool, aps: bool,
                          rule: cs.EligibilityFilter) -> tuple[Filed, list[tuple[list[int], bool]]]:
    """Core's GroupOutputs as written, for one filter: per output type, the positive and the mixed
    groups as lists of coin ids, in Core's order; then every group made (its coin ids, and whether
    the filter took it)."""
    out: Filed = {}
    made: list[tuple[list[int], bool]] = []

    def eligible(g: cs.OutputGroup) -> bool:
        return (g.depth >= (rule.conf_mine if g.from_me else rule.conf_theirs)
                and g.ancestors <= rule.max_ancestors and g.descendants <= rule.max_descendants)

    def push(g: cs.OutputGroup, output_type: str, positive: bool, mixed: bool) -> None:
        lists = out.setdefault(output_type, ([], []))
        if positive and g.amount > 0:
            lists[0].append([id(c) for c in g.outputs])
        if mixed:
            lists[1].append([id(c) for c in g.outputs])

    if not aps:
        for coin in coins:
            g = cs.OutputGroup(sffo)
            g.insert(coin)
            made.append(([id(coin)], eligible(g)))
            if eligible(g):
                push(g, coin.output_type, True, True)
        return out, made
    for positive_only in (False, True):
        by_script: dict[tuple[bytes, str], list[cs.OutputGroup]] = {}
        for coin in coins:
            if positive_only and coin.effective_value <= 0:
                continue
            groups = by_script.setdefault((coin.txout.script_pubkey, coin.output_type), [])
            if not groups or len(groups[-1].outputs) >= cs.OUTPUT_GROUP_MAX_ENTRIES:
                groups.append(cs.OutputGroup(sffo))
            groups[-1].insert(coin)
        for key in sorted(by_script, key=lambda k: (len(k[0]), k[0], cs.OUTPUT_TYPE_ORDER.index(k[1]))):
            groups = by_script[key]
            for back, g in enumerate(reversed(groups)):
                taken = eligible(g) and not (back == 0 and len(groups) > 1 and not rule.include_partial_groups)
                made.append(([id(c) for c in g.outputs], taken))
                if taken:
                    push(g, key[1], positive_only, not positive_only)
    return out, made


@pytest.mark.parametrize("seed", range(4))
def test_groups_are_cores_under_every_filter(seed: int) -> None:
    """FilteredGroups (groups made once, shared between the positive and the mixed sets, filters
    applied inline) files the same groups as Core's GroupOutputs, and discards what no filter takes."""
    rng = random.Random(seed)
    for _ in range(25):
        scripts = [bytes([0, 20]) + bytes([rng.randrange(4)]) * 20 for _ in range(rng.choice([1, 3, 30]))]
        coins = []
        for n in range(rng.choice([5, 120, 260])):
            depth = rng.choice([0, 0, 1, 3, 10])
            coins.append(cs.make_output(OutPoint(n.to_bytes(32, "little"), 0),
                                        TxOut(rng.choice([100, 400, 5_000, 80_000]), rng.choice(scripts)), depth,
                                        rng.choice([68, 91]), rng.random() < 0.5, rng.choice(["bech32", "legacy"]),
                                        5_000, 10_000, rng.choice([0, 1, 3, 30]) if depth == 0 else 0,
                                        rng.choice([0, 2, 30]) if depth == 0 else 0))
        for aps in (False, True):
            params = cs.SelectionParams(random.Random(1), 5_000, 10_000, 31, 155, 835, 60_000, 700, 42,
                                        subtract_fee_outputs=rng.random() < 0.3, avoid_partial_spends=aps,
                                        include_unsafe_inputs=rng.random() < 0.5)
            filters = cs.eligibility_filters(params)
            grouped = cs.FilteredGroups(coins, params, filters)
            kept: list[bool] | None = None   # per group made: some filter takes it
            made: list[tuple[list[int], bool]] = []
            for f in filters:
                expected, made = literal_group_outputs(coins, params.subtract_fee_outputs, aps, f.rule)
                taken_now = [taken for _, taken in made]
                kept = taken_now if kept is None else [a or b for a, b in zip(kept, taken_now, strict=True)]
                found = grouped.groups_for(f.rule)
                got = {} if found is None else {
                    t: ([[id(c) for c in g.outputs] for g in groups.positive],
                        [[id(c) for c in g.outputs] for g in groups.mixed]) for t, groups in found.by_type.items()}
                assert got == expected
            assert kept is not None
            assert [[id(c) for c in g.outputs] for g in grouped.discarded] == [
                ids for (ids, _), taken in zip(made, kept, strict=True) if not taken]
