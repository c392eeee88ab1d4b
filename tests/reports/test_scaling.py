"""The saturating law of `search predict` (reports/scaling.py) on fronts whose E, A and
alpha are known."""

from __future__ import annotations

import numpy as np
import pytest

from core.pareto import pareto_mask
from reports.scaling import ERROR_SCALES, IDENTITY, Law, error_scale, fit_law, front_mask, predict_family, race

TRUE = Law(E=0.02, A=8.0, alpha=0.45)


def test_front_mask_is_the_brute_force_front():
    rng = np.random.default_rng(0)
    for _ in range(50):
        params = rng.integers(1, 20, 15).astype(float)
        errors = rng.integers(1, 10, 15).astype(float)
        errors[rng.random(15) < 0.1] = np.nan
        want = pareto_mask(np.column_stack([params, errors]), ["minimize", "minimize"])
        assert np.array_equal(front_mask(params, errors), want)


@pytest.mark.parametrize("law", [TRUE, Law(0.0, 3.0, 0.3), Law(0.1, 50.0, 0.8)])
def test_an_exact_front_gives_back_its_law(law):
    n = np.geomspace(1e3, 1e6, 8)
    fit = fit_law(n, law(n))
    assert fit.E == pytest.approx(law.E, abs=1e-4) and fit.alpha == pytest.approx(law.alpha, rel=1e-3)
    assert fit.A == pytest.approx(law.A, rel=1e-2)


def test_a_noisy_front_gives_back_its_law_within_a_fifth_and_predicts_ten_times_further():
    rng = np.random.default_rng(1)
    n = np.geomspace(1e3, 1e6, 10)
    fit = fit_law(n, TRUE(n) * np.exp(rng.normal(0, 0.02, len(n))))
    assert fit.alpha == pytest.approx(TRUE.alpha, rel=0.2) and fit.E == pytest.approx(TRUE.E, rel=0.2)
    assert fit(1e7) == pytest.approx(TRUE(1e7), rel=0.1)


def test_error_scales_round_trip_and_refuse_unknown_maximised_metrics():
    v = np.array([12.0, 30.0])
    assert np.allclose(ERROR_SCALES["psnr"].from_error(ERROR_SCALES["psnr"].to_error(v)), v)
    assert error_scale("loss", "minimize") is IDENTITY and error_scale("accuracy", "maximize").to_error(
        0.9
    ) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="no error scale"):
        error_scale("bleu", "maximize")


def family(rng, law: Law, k: int = 16, shortfall: float = 0.05):
    """A synthetic search on the PSNR scale: k configurations below the law's front."""
    params = np.exp(rng.uniform(np.log(1e3), np.log(1e5), k))
    err = law(params) * np.exp(rng.exponential(shortfall, k))
    means = ERROR_SCALES["psnr"].from_error(err)
    return params, means, np.full(k, 0.05), np.full(k, 3), np.arange(k)


def test_the_interval_holds_the_true_value_at_ten_times_the_largest_model():
    rng = np.random.default_rng(2)
    scale = ERROR_SCALES["psnr"]
    hits = 0
    for _ in range(6):
        p = predict_family("a", *family(rng, TRUE), [1e6], scale, draws=200)
        assert p.trust is None and p.front_points >= 4
        hits += p.low[0] <= float(scale.from_error(TRUE(1e6))) <= p.high[0]
    assert hits >= 4


def test_a_fit_that_cannot_be_trusted_says_why_instead_of_a_number():
    rng = np.random.default_rng(3)
    params, means, stds, runs, numbers = family(rng, TRUE)
    narrow = predict_family(
        "a", params / params.max() * 5e3 + 1e3, means, stds, runs, numbers, [1e6], ERROR_SCALES["psnr"], draws=50
    )
    assert narrow.trust is not None and np.isnan(narrow.values[0])
    few = predict_family(
        "a", params[:2], means[:2], stds[:2], runs[:2], numbers[:2], [1e6], ERROR_SCALES["psnr"], draws=50
    )
    assert "front points (a fit needs 4)" in few.trust


def test_the_better_law_wins_the_race():
    rng = np.random.default_rng(4)
    scale = ERROR_SCALES["psnr"]
    good = predict_family("good", *family(rng, Law(0.005, 8.0, 0.45)), [1e6], scale, draws=200)
    bad = predict_family("bad", *family(rng, Law(0.02, 8.0, 0.45)), [1e6], scale, draws=200)
    (r,) = race([bad, good], [1e6], sign=1.0)
    assert r.leader == "good" and r.p_win["good"] > 0.9 and r.low > 0


def test_draw_fronts_are_front_mask_of_each_draw():
    """The per-draw fronts the bootstrap refits (one sort for all draws) against
    `front_mask` of each draw's kept configurations: distinct sizes, tied sizes, tied
    errors, non-finite errors, draws that keep nothing."""
    from reports.scaling import draw_fronts

    rng = np.random.default_rng(12)
    for case in range(300):
        k, d = int(rng.integers(1, 25)), int(rng.integers(1, 5))
        params = (rng.integers(1, 10, k) if case % 3 == 0 else rng.permutation(k) + 1).astype(float)
        errors = rng.integers(0, 6, (d, k)).astype(float)
        errors[rng.random((d, k)) < 0.05] = np.nan
        keep = rng.random((d, k)) < 0.6
        got = draw_fronts(params, keep, errors)
        for r in range(d):
            want = keep[r] & front_mask(np.where(keep[r], params, np.nan), errors[r])
            assert (got[r] == want).all(), (case, r)
