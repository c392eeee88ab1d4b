"""The O(n log n) front and hypervolume history held against the brute force (issue 33):
random data with ties, duplicates, signed zeros, non-finite rows and points outside the
reference."""

from __future__ import annotations

import numpy as np
import pytest

import core.pareto as pareto
from core.pareto import hypervolume_2d, hypervolume_history, pareto_mask, pareto_mask_brute
from core.pareto_sweep import sweep_history, sweep_mask

DIRECTIONS = [["minimize", "minimize"], ["minimize", "maximize"], ["maximize", "minimize"], ["maximize", "maximize"]]


def _messy_points(rng: np.random.Generator, n: int, span: int) -> np.ndarray:
    """(n, 2) small integers (many ties and exact duplicates), some signed zeros, NaN and
    infinities."""
    pts = rng.integers(-span, span + 1, size=(n, 2)).astype(float)
    pts[rng.random((n, 2)) < 0.05] = -0.0
    pts[rng.random(n) < 0.05, rng.integers(0, 2)] = np.nan
    pts[rng.random(n) < 0.03, 1] = np.inf
    pts[rng.random(n) < 0.03, 0] = -np.inf
    if n > 4:
        pts[rng.integers(0, n, size=n // 4)] = pts[rng.integers(0, n, size=n // 4)]  # duplicates
    return pts


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("directions", DIRECTIONS)
def test_sweep_mask_matches_brute_force(seed, directions):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 3, 7, 50, 400]))
    pts = _messy_points(rng, n, span=int(rng.choice([1, 3, 20])))
    np.testing.assert_array_equal(pareto_mask(pts, directions), pareto_mask_brute(pts, directions))


@pytest.mark.parametrize("seed", range(5))
def test_sweep_mask_matches_brute_force_on_continuous_values(seed):
    pts = np.random.default_rng(seed).normal(size=(2000, 2))
    for directions in DIRECTIONS:
        np.testing.assert_array_equal(pareto_mask(pts, directions), pareto_mask_brute(pts, directions))


def test_sweep_mask_all_equal_keeps_the_first_only():
    assert sweep_mask(np.ones((5, 2))).tolist() == [True, False, False, False, False]


def test_sweep_mask_signed_zeros_are_equal():
    # -0.0 == 0.0: the later row is a duplicate, as for the brute force
    assert sweep_mask(np.array([[0.0, 1.0], [-0.0, 1.0]])).tolist() == [True, False]


def test_two_objectives_use_the_sweep(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the brute force was called for two objectives")

    monkeypatch.setattr(pareto, "pareto_mask_brute", refuse)
    assert pareto_mask(np.array([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0]]), DIRECTIONS[0]).tolist() == [True, True, False]
    with pytest.raises(AssertionError):
        pareto_mask(np.zeros((2, 3)), ["minimize"] * 3)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("directions", DIRECTIONS)
def test_history_matches_hypervolume_of_every_prefix(seed, directions):
    """Integer points and reference: every area is an exact float, so equality is exact."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 5, 60, 250]))
    pts = _messy_points(rng, n, span=int(rng.choice([2, 4, 15])))
    span = np.nanmax(np.abs(np.where(np.isfinite(pts), pts, np.nan))) if np.isfinite(pts).any() else 1
    # a reference some points are worse than, or on the boundary of
    ref = np.array([float(rng.integers(-1, int(span) + 1)) * (1 if d == "minimize" else -1) for d in directions])
    hist = hypervolume_history(pts, directions, ref)
    expected = [hypervolume_2d(pts[: k + 1], directions, ref) for k in range(n)]
    np.testing.assert_array_equal(hist, expected)
    assert (np.diff(hist) >= 0).all()


@pytest.mark.parametrize("seed", range(5))
def test_history_matches_on_continuous_values(seed):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(600, 2)) * [3.0, 0.01] + [5.0, 0.9]
    ref = pareto.default_reference(pts, ["minimize", "maximize"])
    hist = hypervolume_history(pts, ["minimize", "maximize"], ref)
    expected = [hypervolume_2d(pts[: k + 1], ["minimize", "maximize"], ref) for k in range(len(pts))]
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=0)
    assert (np.diff(hist) >= 0).all()


def test_history_of_points_that_improve_in_turn():
    # each point dominates the one before: the front is always one point
    y = np.array([[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]])
    assert sweep_history(y, np.array([4.0, 4.0])).tolist() == [1.0, 4.0, 9.0]


def test_history_bad_reference():
    with pytest.raises(ValueError):
        hypervolume_history(np.zeros((1, 2)), DIRECTIONS[0], [np.nan, 1.0])
    with pytest.raises(ValueError):
        hypervolume_history(np.zeros((1, 2)), DIRECTIONS[0], [1.0, 1.0, 1.0])


@pytest.mark.slow
def test_hundred_thousand_points_in_one_pass():
    """Size check, not a timing: the fronts of 10^5 points agree with `hypervolume_2d` of
    the whole set and with the front `pareto_mask` finds (the brute force would hold 10^10
    comparisons)."""
    rng = np.random.default_rng(0)
    pts = np.column_stack([rng.integers(1, 10**6, 100_000), rng.integers(0, 10**4, 100_000)]).astype(float)
    dirs = ["minimize", "maximize"]
    ref = np.array([10.0**6, -1.0])
    hist = hypervolume_history(pts, dirs, ref)
    mask = pareto_mask(pts, dirs)
    assert hist[-1] == hypervolume_2d(pts, dirs, ref) == hypervolume_2d(pts[mask], dirs, ref)
    assert hist[49_999] == hypervolume_2d(pts[:50_000], dirs, ref)
