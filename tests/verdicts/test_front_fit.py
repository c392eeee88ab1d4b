"""verdicts/front_fit.py: the front's local linear fit against a brute-force oracle, and
what it is for: a steadier reading of a front than its best configuration."""

import math

import numpy as np
import pytest

from verdicts.front_fit import front_fit, tricube
from verdicts.front_reading import best_within, estimate_at
from verdicts.uncertainty import front_draws


def oracle(values, params, budgets, sign, include=None, window=3.0):
    """One row and one budget at a time, with np.polyfit for the weighted line."""
    values = np.atleast_2d(values)
    out = np.full((values.shape[0], len(budgets)), np.nan)
    h = math.log(window)
    for r, row in enumerate(values):
        keep = np.ones(len(params), bool) if include is None else include[r]
        pts = sorted((p, sign * v) for p, v, k in zip(params, row, keep, strict=True) if k)
        corners, best = [], -np.inf
        for p, v in pts:
            if v > best:
                corners.append((p, v))
                best = v
        for i, b in enumerate(budgets):
            below = [v for p, v in pts if p <= b]
            if not below:
                continue
            low = max(below)
            above = [v for p, v in corners if p > b]
            high = min(above) if above else low
            near = [(math.log(p / b), v, (1 - (abs(math.log(p / b)) / h) ** 3) ** 3) for p, v in corners]
            near = [(x, v, w) for x, v, w in near if w > 0]
            if not near:
                est = low
            elif len({x for x, _, _ in near}) == 1:
                est = sum(w * v for _, v, w in near) / sum(w for _, _, w in near)
            else:
                xs, ys, ws = (np.array(t) for t in zip(*near, strict=True))
                est = np.polyfit(xs, ys, 1, w=np.sqrt(ws))[1]
            out[r, i] = sign * min(max(est, low), max(low, high))
    return out


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("seed", range(6))
def test_front_fit_matches_the_oracle(sign, seed):
    rng = np.random.default_rng(seed)
    k, d = int(rng.integers(1, 30)), 7
    params = np.round(10 ** rng.uniform(3, 5, k))
    values = rng.normal(size=(d, k)) + np.log10(params)[None, :]
    include = rng.random((d, k)) < 0.7
    budgets = np.array([500.0, 3e3, 1e4, 4e4, 1e5, 2e5])
    got = front_fit(values, params, budgets, sign, include)
    want = oracle(values, params, budgets, sign, include)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True)


def test_a_smooth_dense_front_is_read_off_the_curve_not_the_step():
    """Every configuration on a rising front (no noise): the best within B is the last
    one at or below B, the fit is the curve's value at B."""
    params = np.geomspace(1e3, 1e5, 9)
    curve = lambda p: 20 + 2 * np.log(p)  # noqa: E731
    budgets = np.array([2e3, 7e3, 4e4])
    fit = front_fit(curve(params)[None, :], params, budgets, 1.0)[0]
    step = best_within(curve(params)[None, :], params, budgets, 1.0)[0]
    np.testing.assert_allclose(fit, curve(budgets), rtol=1e-9)
    assert np.all(step < fit)


def test_the_fit_stays_between_the_step_and_the_next_corner_and_at_the_step_at_the_top():
    rng = np.random.default_rng(3)
    params = np.round(10 ** rng.uniform(3, 5, 40))
    values = rng.normal(size=(50, 40))
    budgets = np.array([3e3, 2e4, params.max()])
    fit = front_fit(values, params, budgets, 1.0)
    step = best_within(values, params, budgets, 1.0)
    assert np.all(fit >= step - 1e-12)
    np.testing.assert_allclose(fit[:, -1], step[:, -1])  # nothing above the largest model
    assert np.isnan(front_fit(values, params, np.array([10.0]), 1.0)).all()  # nothing this small


def test_the_fit_moves_less_between_searches_than_the_best_configuration():
    """Replicate searches of one family with a known front: each tries 24 configurations at
    log-uniform sizes, most of them short of the front, with seed noise. At budgets inside
    the range the fit's value varies less from search to search than the best within."""
    rng = np.random.default_rng(0)
    budgets = np.array([3e3, 1e4, 3e4])
    fits, steps = [], []
    for _ in range(300):
        params = 10 ** rng.uniform(3, 5, 24)
        values = 20 + 2 * np.log(params) - rng.exponential(1.0, 24) + rng.normal(0, 0.2, 24)
        fits.append(front_fit(values[None, :], params, budgets, 1.0)[0])
        steps.append(best_within(values[None, :], params, budgets, 1.0)[0])
    ratio = np.std(fits, axis=0) / np.std(steps, axis=0)
    assert np.all(ratio < 0.9), ratio


def test_estimate_at_and_front_draws_read_with_the_fit():
    rng = np.random.default_rng(1)
    k = 30
    params = np.round(10 ** rng.uniform(3, 5, k))
    means = np.log10(params) + rng.normal(0, 0.3, k)
    stds, runs = np.full(k, 0.1), np.full(k, 2)
    budgets = np.array([5e3, 3e4])
    np.testing.assert_allclose(
        estimate_at("fit", means[None, :], params, budgets, 1.0), front_fit(means[None, :], params, budgets, 1.0)
    )
    with pytest.raises(ValueError, match="unknown estimate"):
        estimate_at("mean", means[None, :], params, budgets, 1.0)
    for method in ("trials", "seed", "subsample"):
        fit = front_draws(params, means, stds, runs, np.arange(k), budgets, 1.0, method=method, estimate="fit")
        best = front_draws(params, means, stds, runs, np.arange(k), budgets, 1.0, method=method, estimate="best")
        assert fit.shape == best.shape and np.isfinite(fit).all()
        assert not np.allclose(fit, best)


def test_tricube_is_one_at_the_centre_and_zero_at_the_reach():
    np.testing.assert_allclose(tricube(np.array([0.0, 1.0, -2.0, 0.5]), 1.0), [1.0, 0.0, 0.0, (1 - 0.125) ** 3])
