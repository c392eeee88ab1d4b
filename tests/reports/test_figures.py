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
    np.testing.assert_allclose(fig.data[-1].y, hv)
    assert fronts.hypervolume_data(make_trials([]), "psnr", "maximize")[0].shape == (0,)
    # each trace is exactly one series of the data object
    for trace, series in zip(fig.data, [*data.families, data.overall]):
        assert list(trace.x) == series.numbers.tolist()
        np.testing.assert_array_equal(trace.y, series.values)
    assert "log10 params" in fig.layout.yaxis.title.text


def test_hypervolume_figure_of_an_empty_study():
    fig = figures.hypervolume_figure(fronts.hypervolume_curves(make_trials([]), "psnr", "maximize"))
    assert fig.data == () and "no complete trials" in fig.layout.annotations[0].text
