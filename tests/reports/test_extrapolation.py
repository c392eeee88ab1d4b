"""The fronts beyond the search as the pages draw them (reports/extrapolation.py and the
curves of reports/figures.py), on synthetic studies whose laws are known."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from reports import figures, fronts
from reports.extrapolation import DEFAULT_REACH, extrapolate, extrapolation_note, page_draws
from reports.scaling import ERROR_SCALES, Law
from tests.reports.frames import make_trials, trial

LAWS = {"hourglass": Law(0.004, 1.0, 0.5), "conventional": Law(0.008, 1.0, 0.5)}  # bent within the search


def lawful_trials(families=("hourglass", "conventional"), k: int = 16, seed: int = 0):
    """k trials per family from 1K to 100K parameters, PSNR just below the family's law."""
    rng = np.random.default_rng(seed)
    rows = []
    for fam in families:
        for p in np.geomspace(1e3, 1e5, k):
            psnr = float(ERROR_SCALES["psnr"].from_error(LAWS[fam](p))) - rng.exponential(0.1)
            rows.append(trial(len(rows), fam, int(p), psnr, psnr_std=0.05, n_runs=3))
    return make_trials(rows)


def test_each_trusted_family_is_drawn_past_its_largest_trial_to_the_furthest_target():
    ext = extrapolate(lawful_trials(), "psnr", "maximize", 100_000, [1e6, 1e7])
    assert {c.family for c in ext.curves} == set(LAWS) and not ext.untrusted and ext.reach == 1e7
    for c in ext.curves:
        assert c.x[0] == pytest.approx(1e5, rel=0.01) and c.x[-1] == pytest.approx(1e7)
        assert np.all(c.low <= c.value) and np.all(c.value <= c.high)
        truth = ERROR_SCALES["psnr"].from_error(LAWS[c.family](c.targets))
        assert list(c.targets) == [1e6, 1e7] and np.all(np.abs(c.at - truth) < 1.0)
    assert ext.draws == page_draws(2) == 40


def test_without_targets_the_curve_reaches_ten_times_the_budget_and_says_so():
    ext = extrapolate(lawful_trials(), "psnr", "maximize", 100_000)
    assert ext.reach == DEFAULT_REACH * 100_000 and all(len(c.targets) == 0 for c in ext.curves)
    assert "read up to 1M (10 times the search budget" in extrapolation_note(ext, "psnr")


def test_an_untrusted_family_gets_a_line_saying_why_and_no_curve():
    df = lawful_trials()
    df = df[(df["family"] == "hourglass") | (df["number"] % 16 < 2)]  # conventional: 2 trials
    ext = extrapolate(df, "psnr", "maximize", 100_000, [1e6])
    assert [c.family for c in ext.curves] == ["hourglass"]
    assert ext.untrusted == (("conventional", "2 front points (a fit needs 4)"),)
    assert "conventional: not extrapolated, 2 front points (a fit needs 4)." in extrapolation_note(ext, "psnr")


def test_a_metric_without_an_error_scale_is_not_extrapolated():
    df = lawful_trials().rename(columns={"psnr": "bleu", "psnr_std": "bleu_std"})
    ext = extrapolate(df, "bleu", "maximize", 100_000)
    assert not ext.curves and "no error scale" in extrapolation_note(ext, "bleu")


def test_the_front_figure_holds_each_curve_its_band_and_the_target_markers():
    df = lawful_trials()
    ext = extrapolate(df, "psnr", "maximize", 100_000, [1e6, 1e7])
    fig = figures.pareto_figure(fronts.front_data(df, "psnr", "maximize"), extrapolation=ext)
    by_name = {t.name: t for t in fig.data}
    for c in ext.curves:
        line, band, marks = (by_name[f"{c.family} {s}"] for s in ("predicted", "predicted 90%", "at the targets"))
        assert line.line.dash == "dash" and list(line.x) == list(c.x) and line.y[-1] == pytest.approx(c.value[-1])
        assert band.fill == "toself" and max(band.x) == pytest.approx(1e7) and len(band.x) == 2 * len(c.x)
        assert list(marks.x) == [1e6, 1e7] and list(marks.y) == pytest.approx(list(c.at))
        assert marks.error_y.array[0] == pytest.approx(c.at_high[0] - c.at[0])
        assert line.line.color == next(
            f.color for f in fronts.front_data(df, "psnr", "maximize").families if f.family == c.family
        )
    plain = figures.pareto_figure(fronts.front_data(df, "psnr", "maximize"))
    assert not any("predicted" in (t.name or "") for t in plain.data) and isinstance(fig, go.Figure)
