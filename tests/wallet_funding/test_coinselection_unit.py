"""quill.wallet.coinselection's algorithms against brute force and against a literal transcription
of Core's ApproximateBestSubset loop (the module skips runs of equal groups; the answers must not
change)."""
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
