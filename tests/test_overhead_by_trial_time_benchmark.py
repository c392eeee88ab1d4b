"""benchmarks/speed/overhead_by_trial_time.py end to end at a small size: trials of two
lengths, the orchestration between trials read from the database, the longer trial's
ratio smaller; bad arguments one line and exit 2."""

import json

import pytest

from tests.bench_scripts import run_benchmark


def test_the_orchestration_is_read_against_trials_of_each_length(tmp_path):
    out = tmp_path / "o.json"
    done = run_benchmark(
        "speed.overhead_by_trial_time", "--seconds", "0,0.3", "--seeds", "1", "--trials", "8", "--out", out
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["lengths"]
    assert set(rows) == {"0.0", "0.3"}
    assert rows["0.3"]["trial_s"] >= 0.3  # the trial's recorded duration holds its training
    assert 0 < rows["0.0"]["orchestration_s"] < 60 and 0 < rows["0.3"]["orchestration_s"] < 60
    assert rows["0.3"]["ratio"] < rows["0.0"]["ratio"]
    assert "| 0.3 |" in done.stdout


@pytest.mark.parametrize("args", [("--seconds", "x"), ("--seconds", "-1"), ("--trials", "3")])
def test_bad_arguments_are_one_line_and_exit_2(args):
    done = run_benchmark("speed.overhead_by_trial_time", *args)
    assert done.returncode == 2 and done.stderr.startswith("error:") and done.stderr.count("\n") == 1
