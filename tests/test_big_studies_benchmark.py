"""benchmarks/speed/big_studies.py (issue 33): its bulk-written studies are the studies the
store's own writes make, and the script runs end to end."""

from __future__ import annotations

import pandas as pd
import pytest

import benchmarks.speed.big_studies as big_studies
from storage import Store
from tests.bench_scripts import run_benchmark


def _rows(store: Store, sql: str) -> list[tuple]:
    return [tuple(r) for r in store.query_readonly(sql)[1]]


@pytest.mark.parametrize("seeds", [1, 3])
def test_bulk_writes_are_the_stores_own_rows(tmp_path, seeds):
    trials = big_studies.planned_trials(80, seed=3, seeds=seeds)
    assert {r is None for *_, r in trials} == {True, False}  # some rejected
    assert any(r is not None and r.status == "failed" for *_, r in trials)
    one, bulk = Store(f"sqlite:///{tmp_path}/one.db"), Store(f"sqlite:///{tmp_path}/bulk.db")
    big_studies.write_one_by_one(one, trials)
    big_studies.write_in_bulk(bulk, trials)
    times = ["started_at", "finished_at"]
    a, b = one.trials_frame(big_studies.STUDY), bulk.trials_frame(big_studies.STUDY)
    pd.testing.assert_frame_equal(a.drop(columns=times), b.drop(columns=times))
    assert (a[times].isna() == b[times].isna()).all().all()
    if seeds > 1:  # the runs differ: the verdicts' intervals have seed noise to draw
        done = a[a["status"] == "complete"]
        assert (done["n_runs"] == seeds).all() and (done["psnr_std"] > 0).all()
    for sql in (
        "SELECT trial_id, repeat, seed, status, best_epoch, metrics, duration_s, error FROM runs ORDER BY id",
        "SELECT run_id, epoch, train_loss, metrics, elapsed_s FROM epochs ORDER BY id",
        "SELECT trial_id, name, mean, std, n FROM trial_metrics ORDER BY id",
        "SELECT number, optuna, owner, attempt, retry_of, traceback, objective FROM trials ORDER BY id",
    ):
        assert _rows(one, sql) == _rows(bulk, sql), sql


@pytest.mark.slow
def test_the_script_prints_its_tables(tmp_path):
    done = run_benchmark(
        "speed.big_studies",
        "--sizes",
        "40,120",
        "--repeats",
        "1",
        "--clients",
        "2,3",
        "--requests",
        "2",
        "--writer",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "| 40 |" in out and "| 120 |" in out
    assert "| 3 clients, If-None-Match |" in out and "| 3 clients, plain GET |" in out
    bad = run_benchmark("speed.big_studies", "--sizes", "0", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
