"""Search-efficiency fractions on hand-computed fronts (reports/efficiency.py)."""

import math

import numpy as np
import pandas as pd
import pytest

from core.pareto import default_reference, hypervolume_2d
from reports.efficiency import (
    cheapest_undominated,
    fraction_at,
    fraction_at_work,
    fraction_curve,
    ks_uniform,
    least_work,
    random_order_fractions,
    random_orders,
    union_hypervolume,
    union_reference,
    work_to_reach,
)
from tests.reports.frames import make_trials, trial


def study(rows):
    """rows: (number, params, psnr, status, duration_s)."""
    df = make_trials([trial(n, "a", p, v, status=s) for n, p, v, s, _ in rows])
    return df.assign(duration_s=[d for *_, d in rows])


def test_fractions_against_the_union_front():
    # log10 params 1, 2, 3 (params 10, 100, 1000); psnr maximised
    a = study([(0, 100, 20.0, "complete", 1.0), (1, 10, 10.0, "complete", 2.0), (2, 1000, 30.0, "failed", 4.0)])
    b = study([(0, 1000, 30.0, "complete", 8.0)])
    ref = union_reference([a, b], "psnr", "maximize")
    # union points (1, 10), (2, 20), (3, 30): x range 2 -> ref x 3.2; y range 20 -> ref y 8
    np.testing.assert_allclose(ref, [3.2, 8.0])
    best = union_hypervolume([a, b], "psnr", "maximize", ref)
    # slabs from the left: (1,10): 2.2 x 2; (2,20): 1.2 x 10; (3,30): 0.2 x 10
    assert best == pytest.approx(2.2 * 2 + 1.2 * 10 + 0.2 * 10)
    curve = fraction_curve(a, "psnr", "maximize", ref, best)
    assert curve["trials"].tolist() == [1, 2, 3] and curve["compute_s"].tolist() == [1.0, 3.0, 7.0]
    first = 1.2 * 12 / best  # (2, 20) alone: (3.2 - 2) x (20 - 8)
    np.testing.assert_allclose(curve["fraction"], [first, (1.2 * 12 + 1.0 * 2) / best, (1.2 * 12 + 1.0 * 2) / best])
    assert fraction_at(curve, trials=1) == pytest.approx(first) and fraction_at(curve, compute_s=0.5) == 0.0
    assert fraction_at(fraction_curve(b, "psnr", "maximize", ref, best), trials=1) == pytest.approx(0.2 * 22 / best)


def test_a_search_that_found_everything_reaches_one():
    a = study([(0, 10, 10.0, "complete", 1.0), (1, 100, 20.0, "complete", 1.0)])
    ref = union_reference([a], "psnr", "maximize")
    curve = fraction_curve(a, "psnr", "maximize", ref, union_hypervolume([a], "psnr", "maximize", ref))
    assert curve["fraction"].iloc[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fraction_curve(a, "psnr", "maximize", ref, 0.0)


def test_ks_uniform_hand_computed():
    # one value at the middle: the empirical CDF jumps 0 -> 1 at 0.5, distance 0.5 either side
    assert ks_uniform([5.0], 0.0, 10.0) == pytest.approx(0.5)
    # quartiles 1/8, 3/8, 5/8, 7/8 of [0, 1] with n = 4: largest gap 1/8
    assert ks_uniform([0.875, 0.125, 0.625, 0.375], 0.0, 1.0) == pytest.approx(0.125)
    # everything at the low end: distance 1; out-of-range values count at the nearer end
    assert ks_uniform([-3.0, 0.0], 0.0, 1.0) == pytest.approx(1.0)
    assert ks_uniform([2.0, 9.0, 1.0], 1.0, 2.0) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        ks_uniform([], 0.0, 1.0)
    with pytest.raises(ValueError):
        ks_uniform([1.0], 1.0, 1.0)


def test_ks_uniform_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        xs = rng.uniform(-0.2, 1.2, size=int(rng.integers(1, 30)))
        grid = np.linspace(0.0, 1.0, 20_001)  # sup over the CDF's points, approached from both sides
        cdf = lambda t: np.mean(np.clip(xs, 0, 1)[:, None] <= t, axis=0)  # noqa: E731
        brute = max(np.max(np.abs(cdf(grid) - grid)), np.max(np.abs(cdf(grid - 1e-12) - grid)))
        assert ks_uniform(xs, 0.0, 1.0) == pytest.approx(brute, abs=1e-3)


def _least_work_brute(points, costs, directions, reference, goal):
    """Every subset: the cheapest whose hypervolume reaches goal."""
    from itertools import combinations

    from core.pareto import hypervolume_2d

    if goal <= 0:
        return 0.0
    best = math.inf
    for k in range(1, len(points) + 1):
        for idx in combinations(range(len(points)), k):
            if hypervolume_2d(points[list(idx)], directions, reference) >= goal * (1 - 1e-12):
                best = min(best, float(sum(costs[i] for i in idx)))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_least_work_matches_every_subset(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 10))
    directions = ["minimize", "maximize" if seed % 2 else "minimize"]
    points = np.round(rng.uniform(0, 10, size=(n, 2)), 1)  # rounded: ties in either objective occur
    if seed % 3 == 0:  # costs that grow with the first objective, as params x epochs do
        costs = points[:, 0] * 3.0
    else:
        costs = np.round(rng.uniform(0, 5, size=n), 1)
    reference = default_reference(points, directions)
    whole = hypervolume_2d(points, directions, reference)
    for share in (0.0, 0.3, 0.7, 0.95, 1.0, 1.2):
        goal = share * whole
        assert least_work(points, costs, directions, reference, goal) == pytest.approx(
            _least_work_brute(points, costs, directions, reference, goal)
        )


def test_least_work_by_hand():
    # minimise both, reference (10, 10): a = (1, 8) alone covers 9 x 2 = 18, b = (5, 2) alone 5 x 8 = 40;
    # together a's slab 18 and b's (10 - 5) x (8 - 2) = 30: 48
    pts, costs, dirs, ref = np.array([[1.0, 8.0], [5.0, 2.0]]), [1.0, 5.0], ["minimize", "minimize"], [10.0, 10.0]
    assert least_work(pts, costs, dirs, ref, 18.0) == 1.0  # a alone
    assert least_work(pts, costs, dirs, ref, 40.0) == 5.0  # b alone
    assert least_work(pts, costs, dirs, ref, 41.0) == 6.0  # both
    assert least_work(pts, costs, dirs, ref, 48.1) == math.inf
    with pytest.raises(ValueError):
        least_work(pts, [1.0, -1.0], dirs, ref, 1.0)


def _cheapest_undominated_brute(y, c):
    """The rule by its definition: i is dropped when another point weakly dominates it at
    no more cost; of identical copies the first stays."""
    kept = []
    for i in range(len(y)):
        drops = [
            j
            for j in range(len(y))
            if j != i
            and (y[j] <= y[i]).all()
            and c[j] <= c[i]
            and (j < i or not ((y[j] == y[i]).all() and c[j] == c[i]))
        ]
        if not drops:
            kept.append(i)
    return kept


@pytest.mark.parametrize("seed", range(20))
def test_cheapest_undominated_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    y = rng.integers(0, 6, size=(n, 2)).astype(float)  # a coarse grid: ties and copies in every objective
    c = rng.integers(0, 4, size=n).astype(float)
    assert cheapest_undominated(y, c).tolist() == _cheapest_undominated_brute(y, c)


def test_cheapest_undominated_by_hand():
    y = np.array([[1.0, 5.0], [1.0, 5.0], [2.0, 6.0], [0.0, 9.0], [2.0, 6.0]])
    c = np.array([3.0, 3.0, 1.0, 1.0, 0.5])
    # 1 is a copy of 0 (dropped); 2 is dominated by 4 at less cost; 0 beats 4 only at more cost
    assert cheapest_undominated(y, c).tolist() == [0, 3, 4]


def test_work_to_reach_counts_up_to_the_first_trial_at_the_goal():
    curve = pd.DataFrame({"number": [0, 2, 5], "fraction": [0.2, 0.6, 0.9]})
    work = {0: 1.0, 2: 2.0, 5: 4.0, 9: 100.0}
    assert work_to_reach(curve, work, 0.6) == 3.0
    assert work_to_reach(curve, work, 0.1) == 1.0
    assert work_to_reach(curve, work, 0.9) == 7.0
    assert work_to_reach(curve, work, 0.95) == math.inf


def test_fraction_at_work_is_the_last_trial_paid_for_within_the_budget():
    curve = pd.DataFrame({"number": [0, 2, 5], "fraction": [0.2, 0.6, 0.9]})
    work = {0: 1.0, 2: 2.0, 5: 4.0, 9: 100.0}
    assert fraction_at_work(curve, work, 0.5) == 0.0  # not even the first trial paid for
    assert fraction_at_work(curve, work, 1.0) == 0.2  # exactly the first
    assert fraction_at_work(curve, work, 6.9) == 0.6  # the third is running when it runs out
    assert fraction_at_work(curve, work, 7.0) == 0.9
    assert fraction_at_work(curve, work, 1e9) == 0.9
    # brute force: the fraction at a budget is that of the longest prefix whose work fits
    for budget in np.linspace(0, 8, 33):
        fits = [f for i, f in enumerate(curve["fraction"]) if sum(work[n] for n in curve["number"][: i + 1]) <= budget]
        assert fraction_at_work(curve, work, float(budget)) == (fits[-1] if fits else 0.0)
    # it and work_to_reach agree: reaching a fraction needs exactly the work at which it is reached
    for goal in (0.2, 0.6, 0.9):
        assert fraction_at_work(curve, work, work_to_reach(curve, work, goal)) >= goal


@pytest.mark.parametrize("seed", range(4))
def test_random_order_fractions_match_a_brute_force_prefix(seed):
    """Each random order of a trained grid, cut at a work budget, holds the hypervolume of
    the complete points it paid for within the budget (failed trials cost work, add none)."""
    rng = np.random.default_rng(seed)
    n = 7
    rows = [
        (k, int(rng.integers(10, 10_000)), float(rng.uniform(5, 30)), "failed" if k == 3 else "complete", 1.0)
        for k in range(n)
    ]
    grid = study(rows)
    ref = union_reference([grid], "psnr", "maximize")
    best = union_hypervolume([grid], "psnr", "maximize", ref)
    work = {k: float(rng.uniform(1, 5)) for k in range(n)}
    budgets = [0.0, 3.0, 7.5, 12.0, 100.0]
    orders = random_orders(n, 6, seed)
    got = random_order_fractions(grid, "psnr", "maximize", ref, best, work, budgets, orders)
    assert got.shape == (len(budgets), 6)
    for i, order in enumerate(orders):
        in_order = sorted(range(n), key=lambda j: order[j])  # the trials by their place in this order
        for b, budget in enumerate(budgets):
            spent, paid = 0.0, []
            for j in in_order:
                spent += work[j]
                if spent > budget + 1e-9:
                    break
                paid.append(j)
            pts = np.array([[math.log10(rows[j][1]), rows[j][2]] for j in paid if rows[j][3] == "complete"]).reshape(
                -1, 2
            )
            want = hypervolume_2d(pts, ["minimize", "maximize"], ref) / best if len(pts) else 0.0
            assert got[b, i] == pytest.approx(want)
    assert np.allclose(got[-1], 1.0) and (got[0] == 0.0).all()  # all of it; none of it
    with pytest.raises(ValueError, match="not a permutation"):
        random_order_fractions(grid, "psnr", "maximize", ref, best, work, budgets, np.zeros((1, n), dtype=int))
    assert (random_orders(n, 6, seed) == orders).all()  # seeded
