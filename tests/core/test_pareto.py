"""Pareto mask and 2-D hypervolume on hand-computed and brute-force cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.pareto import default_reference, hypervolume_2d, hypervolume_history, hypervolume_share, pareto_mask

MIN2 = ["minimize", "minimize"]
MIN_MAX = ["minimize", "maximize"]
MAX2 = ["maximize", "maximize"]


# ------------------------------------------------------------------------ pareto_mask


def test_mask_minimize_both():
    pts = np.array([[1, 5], [2, 3], [3, 4], [4, 1], [5, 5]])
    assert pareto_mask(pts, MIN2).tolist() == [True, True, False, True, False]


def test_mask_params_down_metric_up():
    pts = np.array([[1, 1], [2, 3], [3, 2], [4, 5], [4, 4]])
    assert pareto_mask(pts, MIN_MAX).tolist() == [True, True, False, True, False]


def test_mask_maximize_both():
    pts = np.array([[1, 3], [3, 1], [2, 2], [1, 1], [3, 3]])
    assert pareto_mask(pts, MAX2).tolist() == [False, False, False, False, True]


def test_mask_ties_in_one_objective():
    # equal in objective 0, better in 1: the worse one is dominated (weak dominance)
    pts = np.array([[1, 2], [1, 1]])
    assert pareto_mask(pts, MIN2).tolist() == [False, True]


def test_mask_duplicates_first_only():
    pts = np.array([[2, 2], [1, 3], [2, 2], [1, 3], [3, 3]])
    assert pareto_mask(pts, MIN2).tolist() == [True, True, False, False, False]


def test_mask_non_finite_never_on_front_and_never_dominates():
    pts = np.array([[np.nan, 0.0], [1.0, 1.0], [0.0, np.inf], [-np.inf, -np.inf], [2.0, 0.5]])
    assert pareto_mask(pts, MIN2).tolist() == [False, True, False, False, True]


def test_mask_empty_and_single():
    assert pareto_mask(np.zeros((0, 2)), MIN2).shape == (0,)
    assert pareto_mask(np.zeros((0, 2)), MIN2).dtype == bool
    assert pareto_mask(np.array([[3.0, 4.0]]), MIN2).tolist() == [True]
    assert pareto_mask(np.array([[np.nan, 4.0]]), MIN2).tolist() == [False]


def test_mask_three_objectives():
    pts = np.array([[1, 2, 3], [2, 1, 3], [2, 2, 3], [3, 3, 0]])
    assert pareto_mask(pts, ["minimize"] * 3).tolist() == [True, True, False, True]


def test_mask_bad_directions():
    with pytest.raises(ValueError):
        pareto_mask(np.zeros((2, 2)), ["minimize", "up"])
    with pytest.raises(ValueError):
        pareto_mask(np.zeros((2, 2)), ["minimize"])
    with pytest.raises(ValueError):
        pareto_mask(np.zeros(3), MIN2)


def _brute_mask(pts, directions):
    s = np.array([1 if d == "minimize" else -1 for d in directions])
    y = pts * s
    out = []
    for i, a in enumerate(y):
        if not np.isfinite(a).all():
            out.append(False)
            continue
        ok = True
        for j, b in enumerate(y):
            if j == i or not np.isfinite(b).all():
                continue
            if (b <= a).all() and (b < a).any():
                ok = False
            if j < i and (b == a).all():
                ok = False
        out.append(ok)
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directions", [MIN2, MIN_MAX, MAX2, ["maximize", "minimize", "maximize"]])
def test_mask_matches_brute_force(seed, directions):
    rng = np.random.default_rng(seed)
    pts = rng.integers(0, 8, size=(60, len(directions))).astype(float)  # many ties/duplicates
    pts[rng.random(60) < 0.1, 0] = np.nan
    np.testing.assert_array_equal(pareto_mask(pts, directions), _brute_mask(pts, directions))


def test_mask_chunking(monkeypatch):
    import core.pareto as p

    rng = np.random.default_rng(1)
    pts = rng.integers(0, 20, size=(300, 2)).astype(float)
    full = p.pareto_mask_brute(pts, MIN_MAX)
    monkeypatch.setattr(p, "_CHUNK_ELEMENTS", 50)
    np.testing.assert_array_equal(p.pareto_mask_brute(pts, MIN_MAX), full)


# ---------------------------------------------------------------------- hypervolume


def test_hv_staircase_minimize():
    pts = np.array([[1, 3], [2, 2], [3, 1]])
    assert hypervolume_2d(pts, MIN2, [4, 4]) == pytest.approx(6.0)


def test_hv_params_down_metric_up():
    # boxes [1,4]x[0,1] and [2,4]x[0,3]; (3,2) is dominated by (2,3)
    pts = np.array([[1, 1], [2, 3], [3, 2]])
    assert hypervolume_2d(pts, MIN_MAX, [4, 0]) == pytest.approx(7.0)


def test_hv_maximize_both():
    pts = np.array([[3, 1], [1, 3]])
    assert hypervolume_2d(pts, MAX2, [0, 0]) == pytest.approx(5.0)


def test_hv_single_point_is_box():
    assert hypervolume_2d(np.array([[1.5, 2.0]]), MIN_MAX, [3.5, 0.5]) == pytest.approx(3.0)


def test_hv_points_not_better_than_reference_contribute_nothing():
    ref = [4, 4]
    base = np.array([[1, 3], [2, 2]])
    worse = np.array([[4, 0], [0, 4], [5, 5], [0, 10]])
    assert hypervolume_2d(worse, MIN2, ref) == 0.0
    assert hypervolume_2d(np.vstack([base, worse]), MIN2, ref) == pytest.approx(hypervolume_2d(base, MIN2, ref))


def test_hv_ignores_nan_and_duplicates_and_dominated():
    pts = np.array([[1, 3], [2, 2], [np.nan, 0], [2, 2], [3, 3], [1, 3]])
    assert hypervolume_2d(pts, MIN2, [4, 4]) == pytest.approx(5.0)


def test_hv_empty():
    assert hypervolume_2d(np.zeros((0, 2)), MIN2, [1, 1]) == 0.0


def test_hv_bad_reference():
    with pytest.raises(ValueError):
        hypervolume_2d(np.zeros((1, 2)), MIN2, [1, 2, 3])
    with pytest.raises(ValueError):
        hypervolume_2d(np.zeros((1, 2)), MIN2, [np.nan, 2])
    with pytest.raises(ValueError):
        hypervolume_2d(np.zeros((1, 3)), MIN2, [1, 2])


def _grid_hv(pts, directions, ref):
    """Count unit cells dominated: exact for integer points and reference."""
    s = np.array([1 if d == "minimize" else -1 for d in directions])
    y = pts * s
    r = np.asarray(ref) * s
    y = y[np.isfinite(y).all(axis=1)]
    area = 0
    lo0, lo1 = int(min(y[:, 0].min(), r[0])), int(min(y[:, 1].min(), r[1]))
    for a, b in itertools.product(range(lo0, int(r[0])), range(lo1, int(r[1]))):
        # cell [a, a+1] x [b, b+1] is dominated when some point is <= its lower corner
        if ((y[:, 0] <= a) & (y[:, 1] <= b)).any():
            area += 1
    return area


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("directions", [MIN2, MIN_MAX, MAX2])
def test_hv_matches_grid_count(seed, directions):
    rng = np.random.default_rng(seed)
    pts = rng.integers(-5, 10, size=(25, 2)).astype(float)
    ref = np.array([8.0 if d == "minimize" else -3.0 for d in directions])
    assert hypervolume_2d(pts, directions, ref) == pytest.approx(_grid_hv(pts, directions, ref))


@pytest.mark.parametrize("directions", [MIN2, MIN_MAX, MAX2])
def test_history_matches_prefixes_and_is_monotone(directions):
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(80, 2))
    pts[::9, 1] = np.nan
    ref = default_reference(pts, directions)
    pts[5] = ref + np.array([1.0, -1.0]) * 5  # worse than the reference in one objective
    hist = hypervolume_history(pts, directions, ref)
    assert hist.shape == (80,)
    assert (np.diff(hist) >= -1e-12).all()
    expected = [hypervolume_2d(pts[: k + 1], directions, ref) for k in range(len(pts))]
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-12)
    assert hist[-1] == pytest.approx(hypervolume_2d(pts, directions, ref))


def test_history_empty():
    assert hypervolume_history(np.zeros((0, 2)), MIN2, [1, 1]).shape == (0,)


# ------------------------------------------------------------------ default_reference


def test_default_reference_pads_ten_percent_of_range():
    pts = np.array([[1.0, 10.0], [3.0, 20.0], [np.nan, 0.0]])
    np.testing.assert_allclose(default_reference(pts, MIN_MAX), [3.2, 9.0])
    np.testing.assert_allclose(default_reference(pts, ["maximize", "minimize"]), [0.8, 21.0])


def test_default_reference_zero_range():
    np.testing.assert_allclose(default_reference(np.array([[5.0, 2.0]]), MIN_MAX), [5.5, 1.8])
    np.testing.assert_allclose(default_reference(np.array([[0.0, 0.0]]), MIN_MAX), [0.1, -0.1])


def test_default_reference_makes_every_point_count():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(30, 2))
    for directions in (MIN2, MIN_MAX, MAX2):
        ref = default_reference(pts, directions)
        for p in pts:
            assert hypervolume_2d(p[None], directions, ref) > 0


def test_default_reference_needs_a_finite_point():
    with pytest.raises(ValueError):
        default_reference(np.array([[np.nan, 1.0]]), MIN2)


def test_hypervolume_share_hand_case_and_front_only():
    """Minimised x, maximised y, reference from the points (pad 0.1 of the ranges)."""
    pts = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]])  # (3, 2) is dominated by (2, 3)
    ref = default_reference(pts, MIN_MAX)  # (3.2, 0.8)
    whole = hypervolume_2d(pts, MIN_MAX, ref)
    assert hypervolume_share(pts, [True, True, True], MIN_MAX) == 1.0
    assert hypervolume_share(pts, [True, True, False], MIN_MAX) == 1.0  # a dominated point adds nothing
    assert hypervolume_share(pts, [True, False, True], MIN_MAX) == pytest.approx(
        hypervolume_2d(pts[[0, 2]], MIN_MAX, ref) / whole
    )
    assert hypervolume_share(pts, [False, False, False], MIN_MAX) == 0.0
    assert hypervolume_share(np.array([[1.0, 1.0]]), [False], MIN_MAX) == 0.0  # one point: padded reference
