"""Data behind the figures and tables (asserted on data, not pixels)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reports import plots
from reports.pareto import hypervolume_2d
from tests.reports.frames import make_trials, trial, two_family_trials


@pytest.fixture
def df():
    return two_family_trials()


def test_front_data_per_family_fronts(df):
    data = plots.front_data(df, "psnr", "maximize")
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
    data = plots.front_data(df, "psnr", "maximize")
    assert data.overall_numbers.tolist() == [7, 0, 1, 6, 9]
    conv = data.family("conventional")
    assert conv.on_overall_front.tolist() == [True, False, True, False, False]
    assert data.family("hourglass").on_overall_front.tolist() == [True, True, False, True]


def test_front_data_std_and_hover(df):
    hg = plots.front_data(df, "psnr", "maximize").family("hourglass")
    assert hg.stds[0] == pytest.approx(0.1)
    assert math.isnan(hg.stds[1])
    assert hg.front_stds[-1] == pytest.approx(0.3)
    h = hg.hover[0]
    assert "#0" in h and "hourglass" in h and "d_z=1024" in h and "L=1" in h
    assert "1K (1,000)" in h and "20 ± 0.1" in h


def test_front_data_minimize_direction():
    df = make_trials([
        trial(0, "a", 100, 5.0), trial(1, "a", 200, 3.0), trial(2, "a", 300, 4.0),
        trial(3, "a", 50, 9.0),
    ])
    a = plots.front_data(df, "psnr", "minimize").family("a")
    assert a.front_numbers.tolist() == [3, 0, 1]


def test_front_data_empty_and_missing_metric():
    empty = make_trials([])
    assert plots.front_data(empty, "psnr", "maximize").empty
    only_failed = make_trials([trial(0, "a", 10, status="failed")])
    assert plots.front_data(only_failed, "psnr", "maximize").empty
    assert plots.front_data(only_failed, "accuracy", "maximize").empty
    with pytest.raises(ValueError):
        plots.front_data(only_failed, "psnr", "up")


def test_pareto_figure_data(df):
    data = plots.front_data(df, "psnr", "maximize")
    fig = plots.pareto_figure(data, title="t", metric_label="PSNR (dB)")
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
    assert plots.pareto_figure(plots.front_data(make_trials([]), "psnr", "maximize")).data == ()


def test_hypervolume_data(df):
    numbers, hv = plots.hypervolume_data(df, "psnr", "maximize")
    assert numbers.tolist() == [0, 1, 2, 6, 7, 8, 9, 10, 12]
    assert (np.diff(hv) >= 0).all() and hv[0] > 0
    ref = plots.hypervolume_reference(df, "psnr", "maximize")
    pts = plots.hypervolume_points(df, "psnr")[["x", "y"]].to_numpy()
    assert hv[-1] == pytest.approx(hypervolume_2d(pts, ["minimize", "maximize"], ref))
    # reference from all complete points: log10(5000) + 10% range, 17 - 10% of 9
    lo, hi = np.log10(800), np.log10(5000)
    np.testing.assert_allclose(ref, [hi + 0.1 * (hi - lo), 17 - 0.9])

    fam_numbers, fam_hv = plots.hypervolume_data(df, "psnr", "maximize", "hourglass")
    assert fam_numbers.tolist() == [0, 1, 2, 6]
    assert (np.diff(fam_hv) >= 0).all()
    assert fam_hv[-1] <= hv[-1] + 1e-12
    assert fam_hv[2] == fam_hv[1]  # #2 is dominated

    n_lin, hv_lin = plots.hypervolume_data(df, "psnr", "maximize", log_params=False)
    assert n_lin.tolist() == numbers.tolist() and (np.diff(hv_lin) >= 0).all()


def test_hypervolume_figure(df):
    fig = plots.hypervolume_figure(df, "psnr", "maximize")
    assert [t.name for t in fig.data] == ["conventional", "hourglass", "all families"]
    numbers, hv = plots.hypervolume_data(df, "psnr", "maximize")
    np.testing.assert_allclose(fig.data[-1].y, hv)
    assert plots.hypervolume_data(make_trials([]), "psnr", "maximize")[0].shape == (0,)


def test_pareto_table(df):
    table = plots.pareto_table(df, "psnr", "maximize")
    assert table["number"].tolist() == [7, 8, 9, 0, 1, 6]
    assert table["family"].tolist() == ["conventional"] * 3 + ["hourglass"] * 3
    assert list(table.columns) == ["family", "number", "d_z", "d_h", "L", "lr", "params",
                                   "psnr", "psnr_std", "ssim", "ssim_std", "overall_front"]
    hg = table[table["family"] == "hourglass"]
    assert hg["params"].tolist() == [1000, 2000, 4000]
    assert hg["d_z"].tolist() == [1024, 1025, 1030]
    assert hg["psnr"].tolist() == [20.0, 22.0, 25.0]
    assert hg["psnr_std"].iloc[0] == pytest.approx(0.1)
    assert hg["ssim"].iloc[0] == pytest.approx(0.80)
    assert table["overall_front"].tolist() == [True, False, True, True, True, True]
    assert table[table["family"] == "conventional"]["lr"].isna().all()  # key absent there


def test_pareto_table_formatted(df):
    table = plots.pareto_table(df, "psnr", "maximize", formatted=True)
    assert "psnr_std" not in table.columns
    row = table[table["number"] == 0].iloc[0]
    assert row["psnr"] == "20 ± 0.1"
    assert row["ssim"] == "0.8 ± 0.01"
    assert row["params"] == "1K (1,000)"
    assert row["lr"] == "0.001"
    assert row["overall_front"] == "✓"


def test_pareto_table_empty():
    t = plots.pareto_table(make_trials([trial(0, "a", 5, status="failed")]), "psnr", "maximize")
    assert len(t) == 0 and "psnr" in t.columns


def test_status_counts_and_problems(df):
    counts = plots.status_counts(df)
    assert counts == {"running": 1, "complete": 10, "failed": 1, "diverged": 1,
                      "interrupted": 0, "rejected": 1}
    assert plots.status_counts(make_trials([]))["complete"] == 0
    probs = plots.problem_trials(df)
    assert probs["number"].tolist() == [3, 4, 11]
    assert probs["reason"].tolist() == ["CUDA out of memory", "over budget: 10M > 80M?",
                                        "loss is NaN at epoch 3"]


def test_best_trial(df):
    best = plots.best_trial(df, "psnr", "maximize")
    assert best["number"] == 9 and best["value"] == 26.0  # first of the tied #9 / #12
    assert plots.best_trial(df, "psnr", "minimize")["number"] == 10
    assert plots.best_trial(make_trials([]), "psnr", "maximize") is None


def test_trials_table(df):
    t = plots.trials_table(df, "psnr")
    assert len(t) == len(df)
    assert {"number", "status", "family", "d_z", "params", "psnr", "ssim"} <= set(t.columns)
    assert t.loc[0, "psnr"] == "20 ± 0.1"
    assert t.loc[3, "note / error"] == "CUDA out of memory"


def test_config_as_json_string():
    df = make_trials([trial(0, "a", 100, 5.0)])
    df["config"] = ['{"d_z": 3, "k": "x"}']
    a = plots.front_data(df, "psnr", "maximize").family("a")
    assert "d_z=3" in a.hover[0] and "k=x" in a.hover[0]
    assert isinstance(pd.DataFrame(plots.pareto_table(df, "psnr", "maximize")), pd.DataFrame)


def test_nullable_dtypes(df):
    df = df.assign(number=df["number"].astype("Int64"), family=df["family"].astype("string"),
                   note=df["note"].astype("string"), error=df["error"].astype("string"))
    assert plots.front_data(df, "psnr", "maximize").overall_numbers.tolist() == [7, 0, 1, 6, 9]
    assert plots.pareto_table(df, "psnr", "maximize")["number"].tolist() == [7, 8, 9, 0, 1, 6]
    assert plots.problem_trials(df)["reason"].tolist()[0] == "CUDA out of memory"
    assert plots.trials_table(df, "psnr").loc[0, "note / error"] == ""


def test_minimal_frame_single_metric():
    df = pd.DataFrame({"number": [0, 1], "status": ["complete"] * 2, "family": ["a", "a"],
                       "params": [10, 20], "config": [{"w": 1}, {"w": 2}], "acc": [0.5, 0.7]})
    t = plots.pareto_table(df, "acc", "maximize")
    assert t["number"].tolist() == [0, 1] and t["w"].tolist() == [1, 2]
