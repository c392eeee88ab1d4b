"""benchmarks/speed/plugin_overhead.py end to end at a small size: the default search and
the same search with Optuna's own GPSampler side by side with bare Optuna TPE, each
arm's wall time and ratios; bad arguments one line and exit 2."""

import json

import pytest

from tests.bench_scripts import run_benchmark

ARMS = "product,product with Optuna's GP,optuna tpe"


@pytest.mark.slow
def test_the_arms_are_timed_side_by_side(tmp_path):
    out = tmp_path / "o.json"
    done = run_benchmark("speed.plugin_overhead", "--seeds", "1", "--trials", "12", "--arms", ARMS, "--out", out)
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())
    assert list(got["wall_s"]) == ARMS.split(",") and all(len(v) == 1 and v[0] > 0 for v in got["wall_s"].values())
    assert got["ratio_to_first_arm"]["product"] == 1.0 and got["ratio_to_optuna_tpe"]["optuna tpe"] == 1.0
    assert 0 <= got["outside_share_median"]["product"] <= 1


@pytest.mark.parametrize("args", [("--arms", "product,nope"), ("--arms", ","), ("--trials", "3"), ("--seeds", "0")])
def test_bad_arguments_are_one_line_and_exit_2(args):
    done = run_benchmark("speed.plugin_overhead", *args)
    assert done.returncode == 2 and done.stderr.startswith("error:") and done.stderr.count("\n") == 1
