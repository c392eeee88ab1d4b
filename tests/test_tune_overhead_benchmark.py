"""benchmarks/speed/tune_overhead.py (issue 29 item 3): its stand-in trial is a trial result the
study stores, and the quick mode runs the same stand-in through the local, Ray and Tune
executors (the Tune path's searcher, scheduler and trainable) and writes its figures."""

from __future__ import annotations

import json
import math

import pytest

import benchmarks.speed.tune_overhead as tune_overhead
from core.trials import TrainSettings, TrialSpec
from tests.bench_scripts import run_benchmark


def test_the_stand_in_sleeps_reports_each_seeds_epoch_and_returns_a_complete_result(monkeypatch):
    monkeypatch.setenv(tune_overhead.SLEEP_ENV, "0.01")
    spec = TrialSpec(
        "s",
        3,
        "hourglass",
        {"d_z": 8, "d_h": 16, "L": 2, "lr": 0.001},
        "digits-denoise",
        (5, 6),
        TrainSettings(epochs=1),
    )
    seen = []
    result = tune_overhead.stand_in_run_guarded(spec, on_epoch=lambda repeat, record: seen.append((repeat, record)))
    assert result.number == 3 and result.status == "complete" and [r.seed for r in result.runs] == [5, 6]
    assert [repeat for repeat, _ in seen] == [0, 1] and seen[0][1].epoch == 1
    assert result.metrics["psnr"] == pytest.approx(10 + math.log1p(8 + 16 + 2 + 0.001))
    again = tune_overhead.stand_in_run_guarded(spec)
    assert again.metrics == result.metrics  # a function of the configuration


def test_bad_arguments_exit_2():
    done = run_benchmark("speed.tune_overhead", "--trials", "1", timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_quick_mode_runs_the_three_executors_and_writes_its_json(tmp_path):
    out = tmp_path / "overhead.json"
    done = run_benchmark("speed.tune_overhead", "--quick", "--out", out, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["settings"]["quick"] and data["settings"]["trials"] == 3
    assert [r["executor"] for r in data["summary"]] == ["local", "ray", "tune"]
    assert data["same_proposals_at_one_in_flight"] is True
    sleep = data["settings"]["sleep_s"]
    for row in data["rows"]:
        assert row["trials"] == 3 and row["concurrency"] == 1
        assert row["per_trial_s"] >= sleep * 0.99 and row["wall_s"] >= 3 * sleep * 0.99
        assert all(math.isfinite(row[k]) for k in ("startup_s", "overhead_ms", "teardown_s", "over_ideal_pct"))
    tune = [r for r in data["rows"] if r["executor"] == "tune"]
    # each trial went through the product's trainable on Tune: its folder, its epoch and its final report
    assert tune and all(r["tune_trial_folders"] == 3 and r["tune_reports"] == 6 for r in tune)
    for key in (
        "import_ray_s",
        "ray_init_s",
        "import_tune_s",
        "first_study_local_s",
        "first_study_ray_s",
        "first_study_tune_s",
    ):
        assert data["startup"][key] >= 0
    assert "| tune | 1 |" in done.stdout and "overhead per trial ms" in done.stdout
