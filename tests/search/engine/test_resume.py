"""kill -9 in the middle of a study, then the same command again: the study completes
with every finished trial kept exactly once and the interrupted one run again."""
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from storage import load_trials
from tests.search.conftest import run_subprocess

ARGS = ["run", "--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "60K",
        "--trials", "5", "--epochs", "25", "--no-report", "--study", "k",
        "--pruner", "none"]  # counts complete trials (test_pruners.py resumes a pruned study)


def complete_rows(db):
    try:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT number, family, config, objective FROM trials WHERE status='complete'").fetchall()
        con.close()
        return rows
    except sqlite3.Error:
        return []


@pytest.mark.slow
def test_kill_9_mid_run_then_resume(tmp_path):
    db = tmp_path / "search.db"
    proc = run_subprocess(ARGS, cwd=tmp_path)
    deadline = time.time() + 120
    while len(complete_rows(db)) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = sorted(complete_rows(db))
    assert len(before) >= 2

    again = run_subprocess(ARGS, cwd=tmp_path)
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
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from fault_campaign import campaign

    r = campaign(tmp_path, kills=4, trials=6, seed=1, max_wait=3.0, epochs=6)
    assert r["final_rc"] == 0 and r["complete"] == 6
    assert r["lost"] == 0 and r["duplicated"] == 0
