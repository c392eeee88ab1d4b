"""benchmarks/search_quality/tune_front.py (issue 29 item 3): the same short study on `--executor local`
and on `--executor tune --max-concurrent 1`, compared trial by trial and front by front."""

from __future__ import annotations

import json

import pytest

import benchmarks.search_quality.tune_front as tune_front
from tests.bench_scripts import run_benchmark


def trial(number, config, params, status="complete", metric=10.0, epochs=2):
    return {
        "number": number,
        "config": {"d_h": config},
        "params": params,
        "status": status,
        "metric": metric,
        "epochs": epochs,
    }


def test_compare_finds_the_first_different_trial_and_the_metric_difference():
    a = {"trials": [trial(0, 1, 100), trial(1, 2, 200, metric=11.0)], "front": [0, 1], "family_fronts": {"h": [0, 1]}}
    same = tune_front.compare(a, a)
    assert same["same_configs"] and same["same_front"] and same["same_config_metric_max_abs_diff"] == 0
    b = {"trials": [trial(0, 1, 100, metric=10.5), trial(1, 3, 300)], "front": [0], "family_fronts": {"h": [0]}}
    diff = tune_front.compare(a, b)
    assert diff["first_different_trial"] == 1 and not diff["same_configs"] and not diff["same_front"]
    assert diff["same_config_metric_max_abs_diff"] == 0.5  # trial 1 differs in config: not compared


@pytest.mark.slow
def test_the_quick_mode_gives_the_same_study_on_tune_and_local(tmp_path):
    out = tmp_path / "front.json"
    done = run_benchmark("search_quality.tune_front", "--quick", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    d = json.loads(out.read_text())
    assert [r["name"] for r in d["runs"]] == ["local", "tune-max-concurrent-1"]
    assert "--executor tune --max-concurrent 1" in d["runs"][1]["command"]
    same = d["local_vs_tune_one_in_flight"]
    assert same["trials"] == [6, 6]
    assert same["same_configs"] and same["same_params"] and same["same_statuses"] and same["same_front"], same
    assert same["same_config_metric_max_abs_diff"] < 1e-6
    h = d["hypervolume"]
    assert h["local"] == pytest.approx(h["tune-max-concurrent-1"])
