"""Front and hypervolume data of a trials frame (asserted on data, not pixels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.pareto import hypervolume_2d
from reports import fronts
from tests.reports.frames import make_trials, trial, two_family_trials


@pytest.fixture
def df():
    return two_family_trials()


def test_front_data_per_family_fronts(df):
    data = fronts.front_data(df, "psnr", "maximize")
    assert [f.family for f in data.families] == ["conventional", "hourglass"]
    hg = data.family("hourglass")
    # complete, finite points only, in trial order (failed #3, rejected #4, NaN #5 left out)
    assert hg.numbers.tolist() == [0, 1, 2, 6]
    assert hg.params.tolist() == [1000, 2000, 1500, 4000]
    assert hg.on_front.tolist() == [True, True, False, True]
    assert hg.front_numbers.tolist() == [0, 1, 6]
    assert hg.front_params.tolist() == [1000, 2000, 4000]
    assert hg.front_values.tolist() == [20.0, 22.0, 25.0]
    conv = data.family("conventional")
    assert conv.numbers.tolist() == [7, 8, 9, 10, 12]  # diverged #11, running #13 left out
    assert conv.front_numbers.tolist() == [7, 8, 9]  # duplicate #12 is not on the front
    assert data.n_excluded == 1  # #5: complete without a finite metric


def test_front_data_overall_front(df):
    data = fronts.front_data(df, "psnr", "maximize")
    assert data.overall_numbers.tolist() == [7, 0, 1, 6, 9]
    conv = data.family("conventional")
    assert conv.on_overall_front.tolist() == [True, False, True, False, False]
    assert data.family("hourglass").on_overall_front.tolist() == [True, True, False, True]


def test_front_data_std_and_hover(df):
    hg = fronts.front_data(df, "psnr", "maximize").family("hourglass")
    assert hg.stds[0] == pytest.approx(0.1)
    assert math.isnan(hg.stds[1])
    assert hg.front_stds[-1] == pytest.approx(0.3)
    h = hg.hover[0]
    assert "#0" in h and "hourglass" in h and "d_z=1024" in h and "L=1" in h
    assert "1K (1,000)" in h and "20 ± 0.1" in h


def test_front_data_minimize_direction():
    df = make_trials(
        [trial(0, "a", 100, 5.0), trial(1, "a", 200, 3.0), trial(2, "a", 300, 4.0), trial(3, "a", 50, 9.0)]
    )
    a = fronts.front_data(df, "psnr", "minimize").family("a")
    assert a.front_numbers.tolist() == [3, 0, 1]


def test_front_data_empty_and_missing_metric():
    empty = make_trials([])
    assert fronts.front_data(empty, "psnr", "maximize").empty
    only_failed = make_trials([trial(0, "a", 10, status="failed")])
    assert fronts.front_data(only_failed, "psnr", "maximize").empty
    assert fronts.front_data(only_failed, "accuracy", "maximize").empty
    with pytest.raises(ValueError):
        fronts.front_data(only_failed, "psnr", "up")


def test_hypervolume_data(df):
    numbers, hv = fronts.hypervolume_data(df, "psnr", "maximize")
    assert numbers.tolist() == [0, 1, 2, 6, 7, 8, 9, 10, 12]
    assert (np.diff(hv) >= 0).all() and hv[0] > 0
    ref = fronts.hypervolume_reference(df, "psnr", "maximize")
    pts = fronts.hypervolume_points(df, "psnr")[["x", "y"]].to_numpy()
    assert hv[-1] == pytest.approx(hypervolume_2d(pts, ["minimize", "maximize"], ref))
    # reference from all complete points: log10(5000) + 10% range, 17 - 10% of 9
    lo, hi = np.log10(800), np.log10(5000)
    np.testing.assert_allclose(ref, [hi + 0.1 * (hi - lo), 17 - 0.9])

    fam_numbers, fam_hv = fronts.hypervolume_data(df, "psnr", "maximize", "hourglass")
    assert fam_numbers.tolist() == [0, 1, 2, 6]
    assert (np.diff(fam_hv) >= 0).all()
    assert fam_hv[-1] <= hv[-1] + 1e-12
    assert fam_hv[2] == fam_hv[1]  # #2 is dominated

    n_lin, hv_lin = fronts.hypervolume_data(df, "psnr", "maximize", log_params=False)
    assert n_lin.tolist() == numbers.tolist() and (np.diff(hv_lin) >= 0).all()


def test_hypervolume_curves_on_a_hand_computed_toy_study():
    """Two families, four points, linear params: every area computed by hand."""
    df = make_trials([trial(0, "a", 1, 2.0), trial(1, "b", 2, 4.0), trial(2, "a", 3, 3.0), trial(3, "b", 4, 1.0)])
    data = fronts.hypervolume_curves(df, "psnr", "maximize", log_params=False)
    # the reference: 10% beyond the worst point on each axis (params 4 + 0.3, psnr 1 - 0.3)
    np.testing.assert_allclose(data.reference, [4.3, 0.7])
    a, b = data.family("a"), data.family("b")
    assert (a.numbers.tolist(), b.numbers.tolist()) == ([0, 2], [1, 3])
    # a: #0 (1, 2) dominates 3.3 x 1.3; #2 (3, 3) adds 1.3 x 1.0 above it
    np.testing.assert_allclose(a.values, [3.3 * 1.3, 3.3 * 1.3 + 1.3 * 1.0])
    # b: #1 (2, 4) alone 2.3 x 3.3; #3 (4, 1) is dominated
    np.testing.assert_allclose(b.values, [2.3 * 3.3, 2.3 * 3.3])
    # all: #0; + #1: 2.3 x 3.3 + 1 x 1.3; #2 and #3 add nothing
    overall = [3.3 * 1.3, 2.3 * 3.3 + 1.0 * 1.3, 2.3 * 3.3 + 1.0 * 1.3, 2.3 * 3.3 + 1.0 * 1.3]
    np.testing.assert_allclose(data.overall.values, overall)
    assert data.overall.numbers.tolist() == [0, 1, 2, 3] and not data.empty
    assert [s.color for s in data.families] != ["black", "black"]


def test_hypervolume_curves_of_no_complete_trial():
    data = fronts.hypervolume_curves(make_trials([trial(0, "a", 5, status="failed")]), "psnr", "maximize")
    assert data.empty and data.families == [] and data.overall is None


def test_hypervolume_curves_are_hypervolume_data_of_each_family(df):
    """The curves come from one pass over the frame; each is what `hypervolume_data` gives."""
    curves = fronts.hypervolume_curves(df, "psnr", "maximize")
    assert [s.name for s in curves.families] == ["conventional", "hourglass"]
    np.testing.assert_array_equal(curves.reference, fronts.hypervolume_reference(df, "psnr", "maximize"))
    for s in [*curves.families, curves.overall]:
        family = None if s is curves.overall else s.name
        numbers, hv = fronts.hypervolume_data(df, "psnr", "maximize", family, reference=curves.reference)
        assert s.numbers.tolist() == numbers.tolist()
        np.testing.assert_array_equal(s.values, hv)
