"""`search run --executor tune` on a local CPU-only Ray (num_cpus=2, no GPU): a study run
by Tune's Tuner ends with its trials in the database and Tune's folder beside it, resumes,
prunes, retries a dead worker's trial, and refuses what it cannot run."""

import csv
import json
import re
import signal
import sqlite3
import time

import pytest

from core.trials import TrainSettings
from search.api.progress import ConsoleProgress
from search.engine.specs import RunSpec
from search.engine.study import run_study
from search.tune import run_tune_study
from storage import Store
from tests.search.conftest import run_subprocess

pytestmark = pytest.mark.slow
RUN = (
    "run",
    "--space",
    "hourglass",
    "--task",
    "digits-denoise",
    "--budget",
    "100K",
    "--epochs",
    "1",
    "--max-train-samples",
    "256",
    "--executor",
    "tune",
    "--no-report",
    "--seed-checks",
    "0",  # the trials counted below; tests/search/tune/test_seed_checks_tune.py runs the checks
)
GRID = "[hourglass]\nd_z = [100]\nd_h = {d_h}\nL = [1]\nlr = {lr}\n"


@pytest.fixture(scope="module")
def ray_cpus():
    """One local Ray for the module (2 CPUs, no GPU); its workers crash on d_h=6."""
    import ray

    ray.init(
        num_cpus=2,
        num_gpus=0,
        include_dashboard=False,
        configure_logging=False,
        runtime_env={"env_vars": {"SEARCH_FAULT": "crash:d_h=6", "OMP_NUM_THREADS": "1"}},
    )
    yield ray
    ray.shutdown()


def db_rows(path):
    """(number, status, params, config, attempt, retry_of) of every trial; [] before the
    schema is there (a study starting in another process)."""
    if not path.exists():
        return []
    con = sqlite3.connect(path)
    try:
        return con.execute(
            "SELECT number, status, params, config, attempt, retry_of FROM trials ORDER BY number"
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def test_a_study_on_tune_records_its_trials_writes_tensorboard_files_and_resumes(cli, tmp_path, ray_cpus):
    code, out, err = cli(*RUN, "--trials", "3")
    assert code == 0, err
    study = "digits-denoise-hourglass"
    folder = tmp_path / "search-tune" / study
    assert f"Tune experiment: {folder} (tensorboard --logdir it)" in out
    assert "Configuration for experiment" not in out + err  # Tune's own console output stays off
    first = db_rows(tmp_path / "search.db")
    assert [r[0] for r in first] == [0, 1, 2] and all(r[1] == "complete" for r in first)
    assert all(r[2] <= 100_000 for r in first)  # the budget holds
    for n in range(3):  # one Tune folder per trial, named by its number, with TensorBoard's events
        trial = folder / f"trial-{n:04d}"
        assert list(trial.glob("events.out.tfevents.*")) and (trial / "progress.csv").is_file()
        assert json.loads((trial / "params.json").read_text())["trial"] == n
        assert (trial / "progress.csv").read_text().splitlines()[0].startswith("epoch,repeat,train_loss,val_psnr")
    code, out, _ = cli("trials", study)
    assert code == 0 and len([ln for ln in out.splitlines() if " complete " in ln]) == 3

    # the same command with more trials resumes the study: nothing lost, nothing run twice
    code, out, err = cli(*RUN, "--trials", "5")
    assert code == 0, err
    assert "resuming with 3/5 finished" in err and "5 finished trial(s), 2 run now (" in out
    after = db_rows(tmp_path / "search.db")
    assert after[:3] == first and [r[0] for r in after] == [0, 1, 2, 3, 4]
    assert all(r[1] == "complete" for r in after) and len({r[3] for r in after}) == 5


def pruned_grid(tmp_path, lrs, **options):
    """A study `p` on Tune with the Pareto pruner: a grid of one shape at learning rates
    `lrs`, 6 epochs, one trial (or pack) at a time."""
    (tmp_path / "grid.toml").write_text(GRID.format(d_h="[8]", lr=str(lrs)))
    return RunSpec(
        spaces=("hourglass",),
        task="digits-denoise",
        budget=100_000,
        trials=len(lrs),
        sampler="grid",
        space_file=str(tmp_path / "grid.toml"),
        executor="tune",
        study="p",
        pruner="pareto",
        train=TrainSettings(epochs=6, max_train_samples=256),
        executor_options={"max_concurrent": 1, **options},
        seed_checks=0,
    )


def test_the_pareto_pruner_stops_a_trial_on_tune(tmp_path, ray_cpus):
    """Two trials of equal size, one at a learning rate that learns nothing: it is stopped
    after the grace period (epoch 2 of 6) by the study's scheduler, stored `pruned` with
    the epochs it trained and the pruner's reason; the first trial's curve judged it."""
    spec = pruned_grid(tmp_path, [0.005, 0.00001])
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    out = run_tune_study(spec, store, ConsoleProgress(live=False))
    assert out.finished == 2
    done, stopped = store.trials("p")
    assert done.status == "complete" and len(store.epochs("p", 0)) == 6
    assert stopped.status == "pruned" and stopped.config["lr"] == 0.00001 and stopped.metrics == {}
    assert stopped.error.startswith("stopped at epoch 2 of 6: validation ")
    assert len(store.epochs("p", 1)) == 2  # Tune stopped it at that epoch: no epoch more
    assert 0 < stopped.duration_s < 60  # its time in the worker
    # Tune's own record of it ends at the stop too
    progress = (tmp_path / "db-tune" / "p" / "trial-0001" / "progress.csv").read_text().splitlines()
    assert len(progress) == 1 + 2


def test_a_dead_workers_trial_is_failed_and_retried(tmp_path, ray_cpus):
    """A worker that dies (os._exit, as kill -9) errors its Tune trial: the study stores it
    `failed` with Tune's reason and runs it again (--retries 1); the other trial completes."""
    (tmp_path / "grid.toml").write_text(GRID.format(d_h="[6, 8]", lr="[0.005]"))
    spec = RunSpec(
        spaces=("hourglass",),
        task="digits-denoise",
        budget=100_000,
        trials=2,
        sampler="grid",
        space_file=str(tmp_path / "grid.toml"),
        executor="tune",
        study="f",
        pruner="none",
        retries=1,
        train=TrainSettings(epochs=1, max_train_samples=256),
        executor_options={"max_concurrent": 2},
        seed_checks=0,
    )
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    out = run_tune_study(spec, store, ConsoleProgress(live=False))
    recs = store.trials("f")
    six = [r for r in recs if r.config["d_h"] == 6]
    eight = [r for r in recs if r.config["d_h"] == 8]
    assert [r.status for r in six] == ["failed", "failed"] and "Tune trial failed" in six[0].error
    assert six[1].retry_of == six[0].number and six[1].attempt == 1
    assert [r.status for r in eight] == ["complete"] and out.finished == 2 and out.retried == 1


def test_gpus_the_cluster_lacks_are_refused_before_any_write(cli, tmp_path, ray_cpus):
    code, out, err = cli(*RUN, "--trials", "1", "--gpus-per-trial", "1")
    assert code == 2 and err.strip() == "error: --gpus-per-trial 1 but the Ray cluster has 0 GPU(s)", err
    assert db_rows(tmp_path / "search.db") == []


def test_kill_9_of_the_driver_then_the_same_command_loses_and_duplicates_nothing(cli, tmp_path, ray_cpus):
    """The driver killed mid-study (its own Ray with it): the trial it was running is
    marked interrupted by the next run and run again; finished trials stay as they were."""
    args = [*RUN, "--trials", "4", "--study", "k", "--pruner", "none"]  # every trial runs out
    args[args.index("--epochs") + 1] = "3"
    db = tmp_path / "search.db"
    # Every trial of the killed run waits 3 s before it trains (the space fixes
    # fixed_w_in=False), so a trial is still running when another has finished: at 3
    # epochs alone a trial can take 0.1 s and the whole study end between two looks.
    proc = run_subprocess(args, cwd=tmp_path, env_extra={"SEARCH_FAULT": "sleep3:fixed_w_in=False"})
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        rows = db_rows(db)
        if sum(r[1] == "complete" for r in rows) >= 1 and any(r[1] == "running" for r in rows):
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = db_rows(db)
    assert any(r[1] == "running" for r in before)
    code, out, err = cli(*args)
    assert code == 0, err
    after = db_rows(db)
    finished = [r for r in after if r[1] == "complete"]
    assert len(finished) == 4, (before, after, err[-3000:])
    for r in before:
        if r[1] == "complete":
            assert r in after  # kept exactly
        else:  # the killed run's trial: interrupted, then run again as a retry of it
            assert dict((a[0], a[1]) for a in after)[r[0]] == "interrupted"
            assert any(a[5] == r[0] and a[1] == "complete" for a in after)
    assert len({a[3] for a in finished}) == 4  # no configuration trained twice to completion


def test_ctrl_c_interrupts_the_running_trials_and_the_same_command_reruns_them(cli, tmp_path, ray_cpus):
    """SIGINT: Tune stops its trials, the study marks ours `interrupted` and exits 130 with
    the product's line; the same command runs them again (as retries of them)."""
    args = [*RUN, "--trials", "3", "--study", "c", "--pruner", "none"]
    args[args.index("--epochs") + 1] = "300"  # trials long enough to be caught running
    db = tmp_path / "search.db"
    proc = run_subprocess(args, cwd=tmp_path)
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None and not any(r[1] == "running" for r in db_rows(db)):
        time.sleep(0.1)
    time.sleep(2)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted: finished trials are saved; run the same command again to resume" in err
    before = db_rows(db)
    stopped = [r[0] for r in before if r[1] == "interrupted"]
    assert stopped and not any(r[1] == "running" for r in before)
    code, out, err = cli(*args)
    assert code == 0, err
    after = db_rows(db)
    assert sum(r[1] == "complete" for r in after) == 3
    assert {r[5] for r in after if r[4] == 1} == set(stopped)  # each interrupted trial ran again, once


def test_one_trial_at_a_time_on_tune_gives_the_local_executors_study(tmp_path, ray_cpus):
    """Same seed, one trial in flight: Tune asks the study for each trial after the last
    one was told, as the local loop does, so the proposals, statuses (pruned ones too) and
    numbers are the local executor's (both train with one torch thread)."""
    import torch

    def spec(executor, **kw):
        return RunSpec(
            spaces=("hourglass",),
            task="digits-denoise",
            budget=100_000,
            trials=6,
            executor=executor,
            study=executor,
            train=TrainSettings(epochs=3, max_train_samples=256),
            seed_checks=0,  # a check plan reads the trials' durations, which differ between the executors
            **kw,
        )

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_study(spec("local"), store, ConsoleProgress(live=False))
    finally:
        torch.set_num_threads(before)
    run_tune_study(spec("tune", executor_options={"max_concurrent": 1}), store, ConsoleProgress(live=False))
    local, tune = store.trials("local"), store.trials("tune")
    assert [(r.config, r.params, r.status) for r in local] == [(r.config, r.params, r.status) for r in tune]
    for a, b in zip(local, tune):
        assert a.metrics.keys() == b.metrics.keys()
        assert all(abs(a.metrics[k][0] - b.metrics[k][0]) < 1e-4 for k in a.metrics)


def test_tune_packs_train_several_trials_each_recorded_as_alone(tmp_path, ray_cpus):
    """`--pack 2` on Tune: each Tune trial trains two of the study's trials as one pack
    (its folder `pack-FIRST-LAST`), each recorded as the local executor records it alone
    (same configurations and seeds: equal numbers)."""
    import torch

    (tmp_path / "grid.toml").write_text("[hourglass]\nd_z = [72, 100]\nd_h = [7, 8]\nL = [1, 3]\nlr = [0.005]\n")
    grid = dict(spaces=("hourglass",), sampler="grid", space_file=str(tmp_path / "grid.toml"), trials=4, pruner="none")

    def spec(executor, **kw):
        return RunSpec(
            task="digits-denoise", budget=100_000, executor=executor, study=executor, seed_checks=0, **grid, **kw
        )

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_study(
            spec("local", train=TrainSettings(epochs=2, max_train_samples=256, fuse=False)),
            store,
            ConsoleProgress(live=False),
        )
    finally:
        torch.set_num_threads(before)
    packed = spec(
        "tune", train=TrainSettings(epochs=2, max_train_samples=256), executor_options={"max_concurrent": 1, "pack": 2}
    )
    assert run_tune_study(packed, store, ConsoleProgress(live=False)).finished == 4
    a, b = store.trials_frame("local"), store.trials_frame("tune")
    assert (b.status == "complete").all() and len(b) == 4
    a["key"], b["key"] = a.config.astype(str), b.config.astype(str)
    same = a.merge(b, on="key", suffixes=("_l", "_r"))
    assert len(same) == 4 and ((same.psnr_l - same.psnr_r).abs() < 1e-4).all()
    folder = tmp_path / "db-tune" / "tune"
    assert sorted(p.name for p in folder.glob("pack-*")) == ["pack-0000-0001", "pack-0002-0003"]
    assert json.loads((folder / "pack-0002-0003" / "params.json").read_text())["trials"] == [2, 3]
    with open(folder / "pack-0000-0001" / "progress.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["epoch"]]  # the last row is the pack's results
    assert sorted((int(r["trial"]), int(r["epoch"])) for r in rows) == [(0, 1), (0, 2), (1, 1), (1, 2)]


def test_the_pareto_pruner_stops_one_trial_of_a_pack_on_tune(tmp_path, ray_cpus):
    """A pack of two on Tune, one at a learning rate that learns nothing: the study's
    pruner stops it (judged against the first pack's finished trials) and the pack's worker
    reads the stop on the epoch board: it is stored `pruned` with the pruner's reason and
    the epochs it trained (the stop is read after the next epoch at the latest), while the
    other trial of its pack trains all its epochs."""
    spec = pruned_grid(tmp_path, [0.003, 0.005, 0.004, 0.00001], pack=2)
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    assert run_tune_study(spec, store, ConsoleProgress(live=False)).finished == 4
    rows = store.trials("p")
    assert [r.config["lr"] for r in rows] == [0.004, 0.003, 0.005, 0.00001]  # the grid's order at seed 0
    assert [r.status for r in rows] == ["complete", "complete", "complete", "pruned"]
    stopped = rows[3]
    assert stopped.error.startswith("stopped at epoch 2 of 6: validation ") and stopped.metrics == {}
    assert 2 <= len(store.epochs("p", 3)) <= 3
    assert len(store.epochs("p", 2)) == 6  # its pack's other trial trained on


def test_decide_on_tune_searches_until_the_named_budget_is_decided(cli, tmp_path, ray_cpus):
    """`--decide` runs on Tune as on the local loop: the default start (40 trials for two
    families), the seed checks, then a reading that stops the search once the named budget
    is decided, before the 44 of `--trials`."""
    args = [*RUN[:-2], "--space", "hourglass,conventional", "--budget", "20K", "--trials", "44"]
    args += ["--decide", "20K", "--margin", "5", "--storage", f"sqlite:///{tmp_path / 'd.db'}"]
    code, out, err = cli(*args)
    assert code == 0, err
    done = re.search(r"--decide: every named budget decided after (\d+) trial\(s\)", out)
    assert done and 40 <= int(done.group(1)) < 44 and "at 20K: equivalent within ±5" in out
    db = sqlite3.connect(tmp_path / "d.db")
    rows = db.execute("SELECT status, note, retry_of, json_extract(config, '$.d_h') FROM trials").fetchall()
    # This module's workers crash on d_h=6 (a d_h the sampler may or may not propose, as
    # Tune's finishing order steers it): such a trial is failed and retried, failed again,
    # and counts as finished without a complete row. Every other trial completes.
    assert all(s == "complete" or (s == "failed" and d_h == 6) for s, _, _, d_h in rows), rows
    first = [s for s, note, retry_of, _ in rows if note is None and retry_of is None]
    assert 40 <= len(first) <= int(done.group(1)), (len(first), done.group(1))
    assert any(s == "complete" and (note or "").startswith("seed check of trial") for s, note, _, _ in rows)
