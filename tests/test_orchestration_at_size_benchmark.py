"""benchmarks/speed/orchestration_at_size.py (issue 33 item 4): our resumed study and the bare
Optuna study start from the same past, and the script prints its table."""

from __future__ import annotations

import pytest

import benchmarks.speed.orchestration_at_size as bench
from search.executors import EXECUTORS
from storage import Store
from tests.bench_scripts import run_benchmark


def test_both_sides_continue_the_same_past(tmp_path):
    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", bench.InstantExecutor)
    trials, records = bench.past_trials(40)
    assert len(trials) == len(records) == 40
    # the product's own proposals: the families take turns, every trained one has its sampler record
    assert {t[0] for t in trials} == set(bench.FAMILIES)
    assert all((rec is None) == (t[3] is None) for t, rec in zip(trials, records))
    store = Store(f"sqlite:///{tmp_path}/past.db")
    bench.write_in_bulk(store, trials, records)
    store.close()
    start, per_trial = bench.ours(str(tmp_path / "past.db"), 40, 3)
    assert start > 0 and per_trial > 0
    store = Store(f"sqlite:///{tmp_path}/past.db")
    after = store.trials(bench.STUDY)
    assert len(after) == 43 and [t.number for t in after] == list(range(43))  # the past kept, 3 added
    assert all(t.optuna for t in after[40:])  # the window's trials came from the resumed Optuna study
    store.close()
    start, per_trial = bench.bare(trials, records, 3)
    assert start > 0 and per_trial > 0


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_the_script_prints_its_table_and_refuses_bad_sizes(tmp_path):
    script = "speed.orchestration_at_size"
    done = run_benchmark(script, "--sizes", "30", "--window", "2", "--rounds", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| 30 |" in done.stdout and "ours / bare" in done.stdout
    bad = run_benchmark(script, "--sizes", "x", cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_keeper_is_timed_on_the_same_past_and_finds_the_trials_off_the_fronts():
    import benchmarks.speed.keeper_at_size as keeper_at_size
    from core.pareto import pareto_mask

    if "instant" not in EXECUTORS:
        EXECUTORS.add("instant", bench.InstantExecutor)
    r = keeper_at_size.time_keeper(60, 2)
    assert r["trials"] == 60 and r["median_ms"] >= r["min_ms"] > 0
    # the past's hourglass trials off their front, by brute force (no configuration repeats
    # a size here unless pareto says so: at most the by-trial count)
    trials, _ = bench.past_trials(60)
    done = [(float(t[2]), t[3].aggregate()["psnr"][0]) for t in trials if t[0] == "hourglass" and t[3] is not None]
    off_by_trial = sum(not keep for keep in pareto_mask(done, ["minimize", "maximize"]))
    assert 0 < r["off_front"] <= off_by_trial
