"""kill -9 in the middle of a study, then the same command again: the study completes
with every finished trial kept exactly once and the interrupted one run again."""

import signal
import sqlite3
import time
from pathlib import Path

import pytest

from storage import load_trials
from tests.search.conftest import run_subprocess

ARGS = [
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "60K",
    "--trials",
    "5",
    "--epochs",
    "25",
    "--no-report",
    "--study",
    "k",
    "--pruner",
    "none",
    "--seed-checks",
    "0",
]  # counts complete trials (test_pruners.py resumes a pruned study; test_seed_checks.py the checks)


def complete_rows(db):
    try:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT number, family, config, objective FROM trials WHERE status='complete'").fetchall()
        con.close()
        return rows
    except sqlite3.Error:
        return []


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_kill_9_mid_run_then_resume(tmp_path, workers):
    """In this process (--workers 1) or with worker processes, which die with the driver."""
    db = tmp_path / "search.db"
    env = {"SEARCH_WORKERS": workers}
    proc = run_subprocess(ARGS, cwd=tmp_path, env_extra=env)
    deadline = time.time() + 120
    while len(complete_rows(db)) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before it could be killed"
    spawned = children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if workers != "1":
        assert len(spawned) >= 2
        deadline = time.time() + 10
        while any(alive(p) for p in spawned) and time.time() < deadline:
            time.sleep(0.1)
        assert not any(alive(p) for p in spawned), "a worker outlived its killed driver"
    before = sorted(complete_rows(db))
    assert len(before) >= 2

    again = run_subprocess(ARGS, cwd=tmp_path, env_extra=env)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    df = load_trials("k", f"sqlite:///{db}")
    done = df[df.status == "complete"]
    assert len(done) == 5  # none lost, none extra
    assert df.number.is_unique
    after = sorted(complete_rows(db))
    assert [r for r in after if r[0] in {b[0] for b in before}] == before  # kept exactly as they were
    interrupted = df[df.status == "interrupted"]
    for _, row in interrupted.iterrows():  # each interrupted config ran again, once
        reruns = df[df.note.fillna("").str.startswith(f"retry 1 of trial {row.number}: interrupted")]
        assert len(reruns) == 1 and reruns.iloc[0].config == row.config


@pytest.mark.slow
def test_random_kill_points_lose_and_duplicate_nothing(tmp_path):
    from benchmarks.reliability.fault_campaign import campaign

    r = campaign(tmp_path, kills=4, trials=6, seed=1, max_wait=3.0, epochs=6)
    assert r["final_rc"] == 0 and r["complete"] == 6
    assert r["lost"] == 0 and r["duplicated"] == 0


@pytest.mark.slow
def test_kill_during_a_weights_write_then_resume(tmp_path):
    """The process dies halfway through writing a trial's weights (SEARCH_FAULT_WEIGHTS=crash
    writes half the file, then exits as kill -9 would): no record points at the half file,
    and the same command again completes the study with every record's file whole."""
    import hashlib

    from search import load_model
    from storage import Store

    args = ARGS[: ARGS.index("--trials")] + [
        "--trials",
        "3",
        "--epochs",
        "2",
        "--no-report",
        "--study",
        "k",
        "--pruner",
        "none",
        "--keep",
        "all",
        "--seed-checks",
        "0",
    ]
    proc = run_subprocess(args, cwd=tmp_path, env_extra={"SEARCH_FAULT_WEIGHTS": "crash"})
    proc.communicate(timeout=300)
    assert proc.returncode == 137
    folder = tmp_path / "search-artifacts"
    half = {p.name for p in folder.iterdir()}
    assert len(half) == 1  # the half-written file of the first trial
    con = sqlite3.connect(tmp_path / "search.db")
    assert con.execute("SELECT status FROM trials").fetchall() == [("running",)]
    assert con.execute("SELECT count(*) FROM run_artifacts").fetchone() == (0,)
    con.close()

    again = run_subprocess(args, cwd=tmp_path)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    df = load_trials("k", f"sqlite:///{tmp_path / 'search.db'}")
    assert (df.status == "complete").sum() == 3 and list(df.status[df.number == 0]) == ["interrupted"]
    with Store(f"sqlite:///{tmp_path / 'search.db'}") as store:
        kept = store.artifacts_of("k", df.number, "weights")
    assert set(kept) == set(df.number[df.status == "complete"])  # the interrupted trial has no record
    for rows in kept.values():
        (a,) = rows
        assert a["store_key"] not in half
        assert hashlib.sha256((folder / a["store_key"]).read_bytes()).hexdigest() == a["sha256"]
    for n in kept:
        load_model("k", int(n), storage=str(tmp_path / "search.db"))
