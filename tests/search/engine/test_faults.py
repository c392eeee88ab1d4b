"""Faults inside trials: NaN, out of memory, exceptions, crashed processes. The study
records each with its reason and goes on; retries follow --retries / --oom-retry."""

import json

import pytest
import torch

from models.residual_mlp import ResidualMLP
from storage import Store, load_trials
from tests.search.conftest import run_subprocess

GRID = "[hourglass]\nd_z = [100]\nd_h = [7, 8]\nL = [1]\nlr = [0.005]\n"


def run_grid(cli, tmp_path, *extra):
    (tmp_path / "grid.toml").write_text(GRID)
    return cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100K",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "2",
        "--epochs",
        "2",
        "--no-report",
        "--study",
        "f",
        *extra,
    )


def trials(tmp_path):
    return load_trials("f", f"sqlite:///{tmp_path / 'search.db'}")


def test_nan_loss_is_diverged_with_epoch_and_reason(cli, tmp_path, monkeypatch):
    forward = ResidualMLP.forward

    def nan_for_d_h_7(self, x):
        y = forward(self, x)
        return y * float("nan") if self.blocks[0].up.out_features == 7 else y

    monkeypatch.setattr(ResidualMLP, "forward", nan_for_d_h_7)
    code, _, err = run_grid(cli, tmp_path)
    assert code == 0, err
    df = trials(tmp_path)
    bad = df[df.d_h == 7].iloc[0]
    assert len(df) == 2  # diverged is not retried: it would diverge again
    assert bad.status == "diverged" and "non-finite loss at epoch 1" in bad.error
    assert df[df.d_h == 8].iloc[0].status == "complete"
    code, out, _ = cli("trials", "f")
    assert "diverged" in out and "non-finite loss" in out


def _oom_when_batch_over_32(monkeypatch):
    forward = ResidualMLP.forward

    def oom(self, x):
        if self.training and x.shape[0] > 32:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return forward(self, x)

    monkeypatch.setattr(ResidualMLP, "forward", oom)


def test_out_of_memory_retried_once_with_half_batch(cli, tmp_path, monkeypatch):
    _oom_when_batch_over_32(monkeypatch)  # digits trains with batch 64 by default
    code, out, err = run_grid(cli, tmp_path, "--retries", "0", "--oom-retry")
    assert code == 0, err
    df = trials(tmp_path).set_index("number")
    failed = df[df.status == "failed"]
    assert len(failed) == 2 and failed.error.str.contains("out of memory").all()
    retries = df[df.note.fillna("").str.contains("out of memory; batch size 32")]
    assert len(retries) == 2 and (retries.status == "complete").all()
    records = {r.number: r for r in Store("sqlite:///search.db").trials("f")}
    assert {records[n].retry_of for n in retries.index} == set(failed.index)
    assert "2 retries" in out


def test_out_of_memory_without_oom_retry_is_failed_not_a_crash(cli, tmp_path, monkeypatch):
    _oom_when_batch_over_32(monkeypatch)
    code, out, err = run_grid(cli, tmp_path, "--retries", "0")
    assert code == 0, err
    df = trials(tmp_path)
    assert (df.status == "failed").all() and len(df) == 2


def test_exception_stored_with_traceback_and_retried(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCH_FAULT", "raise:d_h=7")
    code, _, err = run_grid(cli, tmp_path, "--retries", "1")
    assert code == 0, err
    recs = Store("sqlite:///search.db").trials("f")
    bad = [r for r in recs if r.config["d_h"] == 7]
    assert [r.status for r in bad] == ["failed", "failed"] and [r.attempt for r in bad] == [0, 1]
    assert bad[1].retry_of == bad[0].number and "injected fault" in bad[0].error
    assert "Traceback" in bad[0].traceback and "RuntimeError" in bad[0].traceback
    assert [r.status for r in recs if r.config["d_h"] == 8] == ["complete"]
    rows = json.loads(cli("trials", "f", "--format", "json")[1])
    assert {r["status"] for r in rows} == {"failed", "complete"} and all(
        r["error"] for r in rows if r["status"] == "failed"
    )


@pytest.mark.slow
def test_crashing_trial_process_then_resume(tmp_path):
    """The driver itself dies in a trial (local executor): the next run marks the trial
    interrupted, retries it once (it crashes again), then gives up on it and finishes."""
    (tmp_path / "grid.toml").write_text(GRID)
    args = [
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100K",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "2",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "f",
    ]
    codes = []
    for _ in range(4):
        p = run_subprocess(args, cwd=tmp_path, env_extra={"SEARCH_FAULT": "crash:d_h=7"})
        p.communicate(timeout=120)
        codes.append(p.returncode)
    recs = Store(f"sqlite:///{tmp_path / 'search.db'}").trials("f")
    bad = [r for r in recs if r.config["d_h"] == 7]
    assert codes[0] == 137 and codes[-1] == 0
    assert [r.status for r in bad] == ["interrupted", "interrupted"] and [r.attempt for r in bad] == [0, 1]
    assert [r.status for r in recs if r.config["d_h"] == 8] == ["complete"]


def test_a_seed_check_of_an_out_of_memory_retry_trains_at_its_half_batch(cli, tmp_path, monkeypatch):
    """The checks (a share of 1: every front configuration fits) train each checked trial's
    configuration at the batch it trained with: the half batch of its out-of-memory retry,
    which does not run out of memory again."""
    _oom_when_batch_over_32(monkeypatch)
    code, out, err = run_grid(cli, tmp_path, "--retries", "0", "--oom-retry", "--seed-checks", "1")
    assert code == 0, err
    df = trials(tmp_path)
    checks = df[df.note.fillna("").str.startswith("seed check of trial")]
    assert len(checks) >= 1 and (checks.status == "complete").all()
    assert (df.status == "failed").sum() == 2  # the two first tries, nothing more


def test_trained_batch_reads_an_out_of_memory_retrys_note():
    from search.engine.retries import OOM_NOTE, trained_batch

    assert trained_batch(OOM_NOTE.format(batch=32)) == 32
    assert trained_batch(None) is None and trained_batch("seed check of trial 3") is None
