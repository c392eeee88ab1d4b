"""Figures are drawn from the data objects: their traces carry exactly the data's values."""

from __future__ import annotations

import numpy as np
import pytest

from reports import figures, fronts
from tests.reports.frames import make_trials, two_family_trials


@pytest.fixture
def df():
    return two_family_trials()


def test_pareto_figure_data(df):
    data = fronts.front_data(df, "psnr", "maximize")
    fig = figures.pareto_figure(data, title="t", metric_label="PSNR (dB)")
    assert fig.layout.xaxis.type == "log"
    steps = [t for t in fig.data if t.mode == "lines"]
    assert len(steps) == 2 and all(t.line.shape == "hv" for t in steps)
    hg_step = [t for t in steps if t.name == "hourglass front"][0]
    # front points, then the last step extended to the study's largest params (5000)
    assert list(hg_step.x) == [1000, 2000, 4000, 5000]
    assert list(hg_step.y) == [20, 22, 25, 25]
    hg_front = [t for t in fig.data if t.name == "hourglass front" and t.mode == "markers"][0]
    assert list(hg_front.error_y.array) == [0.1, None, 0.3]
    assert "d_z=" in hg_front.text[0]
    assert "PSNR" in fig.layout.yaxis.title.text
    assert figures.pareto_figure(fronts.front_data(make_trials([]), "psnr", "maximize")).data == ()


def test_hypervolume_figure(df):
    data = fronts.hypervolume_curves(df, "psnr", "maximize")
    fig = figures.hypervolume_figure(data)
    assert [t.name for t in fig.data] == ["conventional", "hourglass", "all families"]
    numbers, hv = fronts.hypervolume_data(df, "psnr", "maximize")
    np.testing.assert_allclose(fig.data[-1].y, figures.steps(numbers, hv)[1])
    assert fronts.hypervolume_data(make_trials([]), "psnr", "maximize")[0].shape == (0,)
    # each trace is exactly one series of the data object, through its corners
    for trace, series in zip(fig.data, [*data.families, data.overall]):
        x, y = figures.steps(series.numbers, series.values)
        assert list(trace.x) == x.tolist()
        np.testing.assert_array_equal(trace.y, y)
    assert "log10 params" in fig.layout.yaxis.title.text


def test_hypervolume_figure_of_an_empty_study():
    fig = figures.hypervolume_figure(fronts.hypervolume_curves(make_trials([]), "psnr", "maximize"))
    assert fig.data == () and "no complete trials" in fig.layout.annotations[0].text


def _step_value(x, y, at):
    """The value a "hv" step line through (x, y) shows at `at` (brute force)."""
    return y[np.flatnonzero(np.asarray(x) <= at)[-1]]


@pytest.mark.parametrize("seed", range(20))
def test_steps_draw_the_same_line(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    x = np.cumsum(rng.integers(1, 4, n))
    y = np.maximum.accumulate(rng.integers(0, 4, n)).astype(float)  # long runs of equal values
    kx, ky = figures.steps(x, y)
    assert len(kx) == len(ky) <= n
    if n:
        assert kx[0] == x[0] and kx[-1] == x[-1]
        for at, value in zip(x, y):
            assert _step_value(kx, ky, at) == value
    if n > 2:
        assert len(kx) == 2 + int((y[1:-1] != y[:-2]).sum())


def test_big_figures_draw_with_webgl(df, monkeypatch):
    small_front = figures.pareto_figure(fronts.front_data(df, "psnr", "maximize"))
    small_hv = figures.hypervolume_figure(fronts.hypervolume_curves(df, "psnr", "maximize"))
    assert {t.type for t in small_front.data} == {t.type for t in small_hv.data} == {"scatter"}
    monkeypatch.setattr(figures, "WEBGL_POINTS", 3)  # this study has more points than that
    front = figures.pareto_figure(fronts.front_data(df, "psnr", "maximize"))
    hv = figures.hypervolume_figure(fronts.hypervolume_curves(df, "psnr", "maximize"))
    assert {t.type for t in front.data} == {t.type for t in hv.data} == {"scattergl"}
    assert [list(t.x) for t in front.data] == [list(t.x) for t in small_front.data]


def test_big_figures_hover_their_dominated_points_from_a_template(df, monkeypatch):
    monkeypatch.setattr(figures, "WEBGL_POINTS", 3)
    data = fronts.front_data(df, "psnr", "maximize")
    fig = figures.pareto_figure(data)
    hg = data.family("hourglass")
    rest = [t for t in fig.data if t.name == "hourglass trials"][0]
    assert list(rest.customdata) == hg.numbers[~hg.on_front].tolist() and rest.text is None
    assert "%{customdata}" in rest.hovertemplate and "psnr %{y" in rest.hovertemplate
    front = [t for t in fig.data if t.name == "hourglass front" and t.mode == "markers"][0]
    assert list(front.text) == [hg.hover[i] for i in hg.front_index]  # the front keeps its full text
