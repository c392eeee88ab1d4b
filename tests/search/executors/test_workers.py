"""`--workers N` / `--threads T` / `--trial-timeout` on the local executor: how many trials
run at once, the same results trial for trial as one at a time in this process, a hung
trial stopped and recorded, a dead worker's trial failed and retried, and values that
cannot work refused before any write."""

import json
import sqlite3

import pytest

from core.cpus import cgroup_cores, quota_cores, usable_cpus
from core.errors import UserError
from search.executors.local import Placement, placement

TWO_CORES = pytest.mark.skipif(usable_cpus() < 2, reason="needs 2 usable cores (core/cpus.py)")


@pytest.mark.parametrize(
    "cpu_max,quota,period,want",
    [
        ("max 100000", None, None, None),
        ("200000 100000", None, None, 2),
        ("150000 100000", None, None, 1),  # 1.5 cores: a second process would get half a core
        ("50000 100000", None, None, 1),  # at least one
        ("garbage", None, None, None),
        (None, "-1", "100000", None),
        (None, "400000", "100000", 4),
        (None, None, None, None),
    ],
)
def test_quota_cores(cpu_max, quota, period, want):
    assert quota_cores(cpu_max, quota, period) == want


def test_cgroup_files_are_read_v2_then_v1(tmp_path):
    assert cgroup_cores(tmp_path) is None  # nothing there: no quota
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cores(tmp_path) == 3
    (tmp_path / "cpu.max").write_text("100000 100000\n")
    assert cgroup_cores(tmp_path) == 1
    assert usable_cpus(tmp_path) == 1


@pytest.mark.parametrize(
    "kwargs,want",
    [
        (dict(cores=2), Placement(2, 1, False)),  # auto on a 2-core CPU: a trial per core
        (dict(cores=8), Placement(8, 1, False)),
        (dict(cores=1), Placement(1, None, True)),  # one core: in this process
        (dict(cores=8, device="cuda"), Placement(1, None, True)),  # a GPU: one trial at a time
        (dict(cores=8, threads=2), Placement(4, 2, False)),  # auto fits the threads asked for
        (dict(cores=2, workers=1), Placement(1, None, True)),
        (dict(cores=2, workers=1, threads=1), Placement(1, 1, True)),
        (dict(cores=2, workers=1, trial_timeout=5), Placement(1, 2, False)),  # a timeout needs a process
        (dict(cores=4, workers="2"), Placement(2, 2, False)),
    ],
)
def test_placement(kwargs, want):
    kwargs = {"device": "cpu", **kwargs}
    assert placement(**kwargs) == want


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(workers=0), "--workers must be a whole number of at least 1, or auto, got 0"),
        (dict(workers=-2), "--workers must be a whole number of at least 1"),
        (dict(workers="two"), "--workers must be a whole number"),
        (dict(workers=1.5), "--workers must be a whole number"),
        (dict(threads=0), "--threads must be a whole number of at least 1, got 0"),
        (dict(workers=3), "--workers 3 is more than the 2 core(s) this process may use"),
        (dict(workers=2, threads=2), "--workers 2 x --threads 2 = 4 torch threads would oversubscribe the 2 core"),
        (dict(workers=1, threads=3), "--workers 1 x --threads 3 = 3 torch threads would oversubscribe"),
        (dict(trial_timeout=0), "--trial-timeout must be a positive number of seconds"),
    ],
)
def test_placement_refuses_what_cannot_work(kwargs, match):
    with pytest.raises(UserError, match=match.replace("(", r"\(").replace(")", r"\)")):
        placement(cores=2, device="cpu", **kwargs)


def rows(db):
    """trial number -> (family, config, status, objective)"""
    con = sqlite3.connect(db)
    query = "SELECT number, family, config, status, objective FROM trials"
    out = {n: (fam, json.loads(cfg), status, objective) for n, fam, cfg, status, objective in con.execute(query)}
    con.close()
    return out


SEARCH = (
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "30K",
    "--trials",
    "6",
    "--epochs",
    "2",
    "--max-train-samples",
    "256",
    "--sampler",
    "random",
    "--pruner",
    "none",
    "--seed-checks",
    "0",
    "--no-report",
)


@TWO_CORES
def test_two_workers_give_the_same_trials_as_one_at_a_time(cli, tmp_path):
    """The random sampler's proposals do not depend on the results, so trial n is the same
    configuration either way; trained with one torch thread in a worker or in this
    process, its metrics are equal."""
    code, _, err = cli(*SEARCH, "--workers", "1", "--threads", "1", "--storage", "sqlite:///one.db")
    assert code == 0, err
    assert "1 trial at a time in this process, 1 torch thread(s)" in err
    code, _, err = cli(*SEARCH, "--workers", "2", "--threads", "1", "--storage", "sqlite:///two.db")
    assert code == 0, err
    assert "2 trial(s) at once in worker processes, 1 torch thread(s) each" in err
    one, two = rows(tmp_path / "one.db"), rows(tmp_path / "two.db")
    assert len(one) == 6 and one.keys() == two.keys()
    for n in one:
        assert one[n][:3] == two[n][:3]
        assert one[n][3] is not None and one[n][3] == pytest.approx(two[n][3], rel=1e-6), n


def two_depths(cli, tmp_path, *flags):
    """A grid search of two hourglass trials, L=1 and L=3 (the deeper one where a fault is
    injected), one short epoch each, with `flags`."""
    (tmp_path / "grid.toml").write_text("[hourglass]\nd_z = [72]\nd_h = [7]\nL = [1, 3]\nlr = [0.005]\n")
    grid = ["--sampler", "grid", "--space-file", "grid.toml", "--trials", "2"]
    short = ["--epochs", "1", "--max-train-samples", "256", "--no-report"]
    return cli("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "100K", *grid, *short, *flags)


@TWO_CORES
def test_a_hung_trial_is_stopped_at_its_timeout_and_the_search_goes_on(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCH_FAULT", "hang:L=3")  # the deepest hourglass trials hang
    code, _, err = two_depths(cli, tmp_path, "--retries", "0", "--trial-timeout", "3", "--workers", "1")
    assert code == 0, err
    assert "1 trial(s) at once in worker processes, 2 torch thread(s) each" in err
    got = {c["L"]: (status, m) for _, c, status, m in rows(tmp_path / "search.db").values()}
    assert got[1][0] == "complete"
    con = sqlite3.connect(tmp_path / "search.db")
    (error,) = con.execute("SELECT error FROM trials WHERE status = 'failed'").fetchone()
    assert got[3][0] == "failed" and "timed out after 3 s" in error


@TWO_CORES
def test_a_dead_workers_trial_fails_and_is_retried(cli, tmp_path, monkeypatch):
    """A worker killed in a trial (kill -9 of the process) fails that trial with the exit
    code; a new worker takes its place and the retry (--retries 1) dies likewise."""
    monkeypatch.setenv("SEARCH_FAULT", "crash:L=3")
    code, _, err = two_depths(cli, tmp_path, "--workers", "2", "--seed-checks", "0")
    assert code == 0, err
    con = sqlite3.connect(tmp_path / "search.db")
    errors = [e for (e,) in con.execute("SELECT error FROM trials WHERE status = 'failed'")]
    assert errors and all("worker died (exit code 137)" in e for e in errors)
    assert con.execute("SELECT count(*) FROM trials WHERE status = 'complete'").fetchone()[0] == 1


def run_script(tmp_path, text: str):
    """`python script.py` in tmp_path with the default --workers (auto), as a user runs it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    (tmp_path / "script.py").write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "SEARCH_WORKERS"}
    env["PYTHONPATH"] = str(repo)
    return subprocess.run(
        [sys.executable, "script.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


RUN = 'search.run("tiny-mlp", 3000, trials=4, report=False, pruner="none", seed_checks=0)\n'


@TWO_CORES
def test_a_family_registered_in_a_script_trains_in_this_process(tmp_path):
    """A family registered in the script's __main__ cannot reach worker processes: the
    trials run in the driver, said once, and the search completes."""
    from tests.search.plugins.sources import GOOD

    done = run_script(tmp_path, GOOD + RUN)
    assert done.returncode == 0, done.stderr
    assert "note: trials run in this process, one at a time: a family or task registered in a script" in done.stderr
    assert "1 trial at a time in this process" in done.stderr
    assert [status for _, _, status, _ in rows(tmp_path / "search.db").values()] == ["complete"] * 4


@TWO_CORES
def test_a_family_registered_by_a_call_into_a_module_trains_in_this_process(tmp_path):
    """A module that registers its family and task in a function, called by the script
    after the import: a worker importing the module would not register them (its trials
    failed "unknown task" before the registry told the two apart), so the trials run in
    the driver, said once, and the search completes."""
    import textwrap

    from tests.search.plugins.sources import GOOD, write

    write(tmp_path, "tiny_lib", "import search\n\n\ndef register():\n" + textwrap.indent(GOOD, "    "))
    done = run_script(tmp_path, "import search\nimport tiny_lib\n\ntiny_lib.register()\n" + RUN)
    assert done.returncode == 0, done.stderr
    assert "note: trials run in this process, one at a time" in done.stderr
    assert "1 trial at a time in this process" in done.stderr
    assert [status for _, _, status, _ in rows(tmp_path / "search.db").values()] == ["complete"] * 4


@TWO_CORES
def test_a_script_calling_search_run_at_its_top_level_is_not_run_again_by_the_workers(tmp_path):
    """The family in a plugin file, `search.run()` unguarded at the script's top level: two
    workers train, and neither runs the script again (spawn would re-import __main__)."""
    from tests.search.plugins.sources import GOOD, write

    write(tmp_path, "tiny_plugin", GOOD)
    script = f"import search\nprint('script ran', flush=True)\nsearch.load_plugins(['tiny_plugin.py'])\n{RUN}"
    done = run_script(tmp_path, script)
    assert done.returncode == 0, done.stderr
    assert "2 trial(s) at once in worker processes" in done.stderr
    assert done.stdout.count("script ran") == 1
    assert [status for _, _, status, _ in rows(tmp_path / "search.db").values()] == ["complete"] * 4


@TWO_CORES
def test_packs_train_in_workers(cli, tmp_path):
    """`--pack 2 --workers 2`: each worker trains packs of two trials of one family; every
    trial is recorded as its own row, as in this process."""
    (tmp_path / "grid.toml").write_text("[hourglass]\nd_z = [72, 100]\nd_h = [7, 8]\nL = [1]\nlr = [0.005]\n")
    args = ["--sampler", "grid", "--space-file", "grid.toml", "--pack", "2", "--seed-checks", "0", "--pruner", "none"]
    base = ["run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "100K", "--trials", "4"]
    base += ["--epochs", "1", "--max-train-samples", "256", "--no-report", *args]
    code, _, err = cli(*base, "--workers", "2", "--storage", "sqlite:///two.db")
    assert code == 0, err
    code, _, err = cli(*base, "--workers", "1", "--threads", "1", "--storage", "sqlite:///one.db")
    assert code == 0, err
    one, two = rows(tmp_path / "one.db"), rows(tmp_path / "two.db")
    assert sorted(str(c) for _, c, s, _ in two.values() if s == "complete") == sorted(
        str(c) for _, c, s, _ in one.values() if s == "complete"
    )
    assert len(two) == 4
