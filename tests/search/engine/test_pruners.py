"""Pareto-aware early stopping (`--pruner pareto`, issue 11): the rule against a brute-force
oracle, and pruned trials through a real study, a resume and a kill -9."""
import json
import random
import signal
import sqlite3
import time

import pytest

from core.errors import UserError
from core.stops import stopped_at
from search.engine.pruners import (
    PRUNERS,
    ParetoPruner,
    dominated_at,
    grace_epochs,
    make_pruner,
)
from search.engine.specs import RunSpec
from storage import Store
from tests.search.conftest import run_subprocess


def test_dominated_at_hand_cases():
    curves = [(100, [10.0, 12.0, 13.0]), (300, [11.0, 15.0]), (50, [float("nan"), 9.0])]
    # params 200 at epoch 2: only the 100- and 50-parameter trials may dominate; best 12.0
    assert dominated_at(200, 2, 11.0, curves, "maximize") == (100, 12.0)
    assert dominated_at(200, 2, 11.9, curves, "maximize") is None  # within 1% of 12.0
    assert dominated_at(200, 2, 11.9, curves, "maximize", margin=0.0) == (100, 12.0)
    assert dominated_at(300, 2, 14.0, curves, "maximize") == (300, 15.0)  # as many parameters counts
    assert dominated_at(99, 2, 1.0, curves, "maximize") == (50, 9.0)
    assert dominated_at(99, 1, 1.0, curves, "maximize") is None  # NaN never dominates
    assert dominated_at(200, 3, 1.0, curves, "maximize") == (100, 13.0)  # the 300 curve is too short anyway
    assert dominated_at(200, 4, 1.0, curves, "maximize") is None  # nobody reached epoch 4
    assert dominated_at(200, 2, float("nan"), curves, "maximize") is None  # never judged on NaN
    losses = [(10, [2.0, 1.0])]
    assert dominated_at(20, 2, 1.5, losses, "minimize") == (10, 1.0)
    assert dominated_at(20, 2, 1.005, losses, "minimize") is None
    with pytest.raises(ValueError):
        dominated_at(1, 1, 1.0, losses, "up")


def test_dominated_at_matches_brute_force():
    rng = random.Random(0)
    for _ in range(300):
        direction = rng.choice(["maximize", "minimize"])
        curves = [(rng.randint(1, 50), [rng.uniform(0, 10) for _ in range(rng.randint(1, 5))])
                  for _ in range(rng.randint(0, 6))]
        params, epoch, value = rng.randint(1, 50), rng.randint(1, 5), rng.uniform(0, 10)
        sign = 1 if direction == "maximize" else -1
        ok = [(n, c[epoch - 1]) for n, c in curves if n <= params and len(c) >= epoch
              and sign * (c[epoch - 1] - value) > 0.01 * abs(c[epoch - 1])]
        got = dominated_at(params, epoch, value, curves, direction)
        if not ok:
            assert got is None
        else:
            assert got is not None and got[1] == max((v for _, v in ok), key=lambda v: sign * v)


def test_only_a_trial_of_the_same_family_judges():
    """The pages draw one front per family: a better family never stops another's trials."""
    p = ParetoPruner("maximize", epochs=30)
    p.observe(10, [5.0] * 30, "hourglass")
    assert p.check(20, 10, 1.0, "conventional") is None
    assert "of hourglass" in p.check(20, 10, 1.0, "hourglass")
    p.observe(15, [3.0] * 30, "conventional")
    assert "with 15 parameters" in p.check(20, 10, 1.0, "conventional")


def test_grace_period_and_registry():
    p = ParetoPruner("maximize", epochs=30)
    assert p.grace == 10
    p.observe(10, [5.0] * 30)
    assert p.check(20, 9, 1.0) is None  # inside the grace period
    assert "stopped at epoch 10" in p.check(20, 10, 1.0)
    assert p.check(5, 10, 1.0) is None  # a smaller trial is never judged by a larger one
    assert p.check(20, 30, 1.0) is None  # never after the last epoch
    assert make_pruner("none", "maximize", 30).check(20, 10, 1.0) is None
    # --prune-grace: the grace period is a fraction of the epochs, rounded up, at least 1
    assert grace_epochs(30) == 10 and grace_epochs(30, 0.1) == 3 and grace_epochs(30, 0.01) == 1
    assert grace_epochs(20) == 7 and grace_epochs(9, 1 / 3) == 3
    early = make_pruner("pareto", "maximize", 30, grace=0.1)
    early.observe(10, [5.0] * 30)
    assert early.check(20, 2, 1.0) is None and "stopped at epoch 3" in early.check(20, 3, 1.0)
    # the reason speaks the study's budget measure (--budget-of omega: connections per layer)
    omega = make_pruner("pareto", "maximize", 30, "connections per layer (omega)")
    omega.observe(10, [5.0] * 30)
    assert "with 10 connections per layer (omega) (no more than its 20)" in omega.check(20, 10, 1.0)
    assert set(PRUNERS.names()) == {"none", "pareto"}
    with pytest.raises(UserError, match="unknown pruner 'asha'"):
        RunSpec(spaces=("hourglass",), task="digits-denoise", budget=100_000, pruner="asha")


ARGS = ["run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "100K", "--epochs", "6",
        "--max-train-samples", "400",
        "--pruner", "pareto", "--no-report", "--study", "p", "--seed", "2"]


def rows(db):
    try:
        con = sqlite3.connect(db)
        out = con.execute("SELECT number, status, note, params FROM trials ORDER BY number").fetchall()
        con.close()
        return out
    except sqlite3.Error:
        return []


@pytest.mark.slow
def test_pruned_trials_are_stored_apart_and_survive_kill_9_and_resume(cli, tmp_path):
    """A study with the pruner: some trials stop early and are stored as `pruned` with the
    epochs they trained (fewer than the others); they count towards --trials, never join a
    front, are told to the sampler as pruned, and survive kill -9 and a resume unchanged."""
    db = tmp_path / "search.db"
    proc = run_subprocess([*ARGS, "--trials", "40"], cwd=tmp_path)
    deadline = time.time() + 240
    while not any(r[1] == "pruned" for r in rows(db)) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before a trial was pruned"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [r for r in rows(db) if r[1] in ("complete", "pruned")]
    assert any(r[1] == "pruned" for r in before)

    code, out, err = cli(*ARGS, "--trials", "24")
    assert code == 0, err
    assert "early stopping: " in out and "% saved)" in out  # the summary says what the pruner saved
    store = Store(f"sqlite:///{db}")
    trials = store.trials("p")
    after = {(t.number, t.status, t.note, t.params) for t in trials}
    assert set(before) <= after  # every finished trial kept exactly as it was
    finished = [t for t in trials if t.status in ("complete", "pruned", "failed", "diverged")]
    assert len(finished) == 24  # pruned trials count towards --trials
    pruned = [t for t in trials if t.status == "pruned"]
    assert len(pruned) >= 2 and not any(t.number in {p.number for p in pruned} for t in store.trials(
        "p", statuses=["complete"]))
    for t in pruned:
        epochs = store.epochs("p", t.number)
        assert 2 <= len(epochs) < 6 and t.metrics == {}  # stopped after the grace period, no test metrics
        assert stopped_at(t.error) == (len(epochs), 6)  # the reason says where it stopped, of how many
    df = store.trials_frame("p")
    assert set(df.loc[df.status == "pruned", "number"]) == {t.number for t in pruned}
    store.close()
    # the status summary shows them apart
    code, out, _ = cli("studies", "--storage", f"sqlite:///{db}", "--format", "json")
    assert code == 0 and json.loads(out)[0]["pruned"] == len(pruned)
