"""benchmarks/reliability/tune_node_loss.py (issue 29 item 3): its verdict counts what a lost node may
cost a study (lost, duplicated, retried), and the quick mode kills the worker node of a
two-node Ray cluster under a study on Tune: the trial on it is failed, retried, and the
study ends complete with nothing lost or run twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import benchmarks.reliability.tune_node_loss as tune_node_loss
from tests.bench_scripts import run_benchmark


def row(number, status, config, attempt=0, retry_of=None, error=None):
    return (number, status, f'{{"d_h": {config}}}', attempt, retry_of, error)


def test_the_verdict_counts_retried_lost_and_duplicated():
    before = [row(0, "complete", 1), row(1, "running", 2), row(2, "running", 3)]
    good = [
        row(0, "complete", 1),
        row(1, "failed", 2, error="Tune trial failed: actor died"),
        row(2, "complete", 3),
        row(3, "complete", 2, 1, 1),
    ]
    v = tune_node_loss.verdict(before, good, 3)
    assert (v["complete"], v["failed"], v["retried"], v["retried_complete"], v["lost"], v["duplicated"]) == (
        3,
        1,
        1,
        1,
        0,
        0,
    )
    assert v["running_at_kill"] == [1, 2]
    # a trial complete before the kill changed after it; a failed trial that nothing ran again
    bad = [row(0, "failed", 1), row(1, "failed", 2), row(2, "complete", 3)]
    assert tune_node_loss.verdict(before, bad, 3)["lost_numbers"] == [0, 1]  # 0 changed, 1 not retried
    # a configuration trained to completion twice; a retry of a complete trial
    twice = [row(0, "complete", 1), row(1, "complete", 2), row(2, "complete", 2, 1, 1)]
    assert tune_node_loss.verdict(before, twice, 3)["duplicated"] == 2


def test_bad_arguments_exit_2():
    done = run_benchmark("reliability.tune_node_loss", "--trials", "4", "--kill-after", "3", timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_quick_campaign_loses_the_worker_node_and_no_trial(tmp_path):
    out = tmp_path / "node-loss.json"
    done = run_benchmark("reliability.tune_node_loss", "--quick", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    d = json.loads(out.read_text())
    assert d["quick"] and len(d["campaigns"]) == 1
    c = d["campaigns"][0]
    assert c["executor"] == "tune" and c["returncode"] == 0, c["stderr_tail"]
    assert "--executor tune" in c["command"] and "--ray-address" in c["command"]
    assert len(c["running_at_kill"]) == 2  # one of them on the worker node
    assert c["complete"] == c["trials"] == 4 and c["lost"] == 0 and c["duplicated"] == 0
    assert c["failed"] >= 1 and c["retried"] >= c["failed"] and c["retried_complete"] == c["retried"]
    assert all(e.startswith("Tune trial failed: ") for e in c["failed_errors"])
    assert c["still_running"] == 0
    assert d["totals"]["lost"] == 0 and d["totals"]["complete"] == 4
    address = c["command"].split("--ray-address ")[1].split()[0]
    current = Path("/tmp/ray/ray_current_cluster")  # the cluster did not announce itself to the machine
    assert not current.exists() or address not in current.read_text()
