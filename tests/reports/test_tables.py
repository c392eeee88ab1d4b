"""The tables of a study: Pareto-optimal configurations, counts, best trial, problems, all trials."""

from __future__ import annotations

import pandas as pd
import pytest

from reports import fronts, tables
from tests.reports.frames import make_trials, trial, two_family_trials


@pytest.fixture
def df():
    return two_family_trials()


def test_pareto_table(df):
    table = tables.pareto_table(df, "psnr", "maximize")
    assert table["number"].tolist() == [7, 8, 9, 0, 1, 6]
    assert table["family"].tolist() == ["conventional"] * 3 + ["hourglass"] * 3
    assert list(table.columns) == [
        "family",
        "number",
        "d_z",
        "d_h",
        "L",
        "lr",
        "params",
        "psnr",
        "psnr_std",
        "ssim",
        "ssim_std",
        "overall_front",
    ]
    hg = table[table["family"] == "hourglass"]
    assert hg["params"].tolist() == [1000, 2000, 4000]
    assert hg["d_z"].tolist() == [1024, 1025, 1030]
    assert hg["psnr"].tolist() == [20.0, 22.0, 25.0]
    assert hg["psnr_std"].iloc[0] == pytest.approx(0.1)
    assert hg["ssim"].iloc[0] == pytest.approx(0.80)
    assert table["overall_front"].tolist() == [True, False, True, True, True, True]
    assert table[table["family"] == "conventional"]["lr"].isna().all()  # key absent there


def test_pareto_table_formatted(df):
    table = tables.pareto_table(df, "psnr", "maximize", formatted=True)
    assert "psnr_std" not in table.columns
    row = table[table["number"] == 0].iloc[0]
    assert row["psnr"] == "20 ± 0.1"
    assert row["ssim"] == "0.8 ± 0.01"
    assert row["params"] == "1K (1,000)"
    assert row["lr"] == "0.001"
    assert row["overall_front"] == "✓"


def test_pareto_table_empty():
    t = tables.pareto_table(make_trials([trial(0, "a", 5, status="failed")]), "psnr", "maximize")
    assert len(t) == 0 and "psnr" in t.columns


def test_status_counts_and_problems(df):
    counts = tables.status_counts(df)
    assert counts == {
        "running": 1,
        "complete": 10,
        "failed": 1,
        "diverged": 1,
        "interrupted": 0,
        "rejected": 1,
        "pruned": 0,
    }
    assert tables.status_counts(make_trials([]))["complete"] == 0
    probs = tables.problem_trials(df)
    assert probs["number"].tolist() == [3, 4, 11]
    assert probs["reason"].tolist() == ["CUDA out of memory", "over budget: 10M > 80M?", "loss is NaN at epoch 3"]


def test_best_trial(df):
    best = tables.best_trial(df, "psnr", "maximize")
    assert best["number"] == 9 and best["value"] == 26.0  # first of the tied #9 / #12
    assert tables.best_trial(df, "psnr", "minimize")["number"] == 10
    assert tables.best_trial(make_trials([]), "psnr", "maximize") is None


def test_trials_table(df):
    t = tables.trials_table(df, "psnr")
    assert len(t) == len(df)
    assert {"number", "status", "family", "d_z", "params", "psnr", "ssim"} <= set(t.columns)
    assert t.loc[0, "psnr"] == "20 ± 0.1"
    assert t.loc[3, "note / error"] == "CUDA out of memory"


def test_config_as_json_string():
    df = make_trials([trial(0, "a", 100, 5.0)])
    df["config"] = ['{"d_z": 3, "k": "x"}']
    a = fronts.front_data(df, "psnr", "maximize").family("a")
    assert "d_z=3" in a.hover[0] and "k=x" in a.hover[0]
    assert isinstance(pd.DataFrame(tables.pareto_table(df, "psnr", "maximize")), pd.DataFrame)


def test_nullable_dtypes(df):
    df = df.assign(
        number=df["number"].astype("Int64"),
        family=df["family"].astype("string"),
        note=df["note"].astype("string"),
        error=df["error"].astype("string"),
    )
    assert fronts.front_data(df, "psnr", "maximize").overall_numbers.tolist() == [7, 0, 1, 6, 9]
    assert tables.pareto_table(df, "psnr", "maximize")["number"].tolist() == [7, 8, 9, 0, 1, 6]
    assert tables.problem_trials(df)["reason"].tolist()[0] == "CUDA out of memory"
    assert tables.trials_table(df, "psnr").loc[0, "note / error"] == ""


def test_minimal_frame_single_metric():
    df = pd.DataFrame(
        {
            "number": [0, 1],
            "status": ["complete"] * 2,
            "family": ["a", "a"],
            "params": [10, 20],
            "config": [{"w": 1}, {"w": 2}],
            "acc": [0.5, 0.7],
        }
    )
    t = tables.pareto_table(df, "acc", "maximize")
    assert t["number"].tolist() == [0, 1] and t["w"].tolist() == [1, 2]
