"""The "lm" trainer: token budget, evaluations, schedule, determinism, divergence."""

from __future__ import annotations

import math

import pytest
import torch

import tasks
from core.errors import UserError
from core.trials import EpochRecord, TrainSettings, TrialSpec
from tasks.lm_train import LMHyper, make_lm_optimizer, warmup_cosine
from tests.tasks.conftest import SHARED_DATA
from tests.tasks.test_lm import needs_shakespeare, text_file

TINY = {"d_model": 32, "n_heads": 2, "L": 1, "K": 2, "d_h": 12, "lr": 3e-3}


def spec(task_options, config=TINY, family="transformer-hourglass", task="lm-text", seeds=(0,), data_dir=None, **train):
    return TrialSpec("t", 3, family, dict(config), task, tuple(seeds), TrainSettings(**train), data_dir, task_options)


@pytest.fixture
def text(tmp_path):
    return {"data": str(text_file(tmp_path)[0]), "context": 32, "eval_tokens": 512}


@needs_shakespeare
@pytest.mark.slow
def test_a_tiny_model_learns_shakespeare():
    records: list[tuple[int, EpochRecord]] = []
    s = spec(
        {"eval_tokens": 4096},
        {"d_model": 64, "n_heads": 1, "L": 1, "K": 2, "d_h": 24, "lr": 4e-3},
        task="lm-shakespeare",
        data_dir=str(SHARED_DATA),
        tokens=65_536,
        batch_size=16,
        epochs=3,
    )
    result = tasks.run_trial(s, on_epoch=lambda i, r: records.append((i, r)))
    assert result.status == "complete", result.error
    run = result.runs[0]
    losses = [r.metrics["loss"] for r in run.epochs]
    assert losses[0] < math.log(256) - 1.0  # far below uniform bytes already
    assert losses[-1] < losses[0] - 0.15 and losses == sorted(losses, reverse=True)
    train = tasks.load_data(tasks.get_task("lm-shakespeare", {"eval_tokens": 4096}), str(SHARED_DATA), "cpu")
    p = torch.bincount(train.tokens["train"].long(), minlength=256).double()
    p = p[p > 0] / p.sum()
    unigram = float(-(p * p.log()).sum())  # 3.33 nats: the best any context-free predictor does
    assert run.metrics["val_loss"] == min(losses) and run.metrics["loss"] < unigram - 0.1
    assert run.metrics["bpb"] == pytest.approx(run.metrics["loss"] / math.log(2))
    assert [r.epoch for _, r in records] == [1, 2, 3] and all(i == 0 for i, _ in records)


def test_deterministic_on_cpu_and_seeds_differ(text):
    a = tasks.run_trial(spec(text, tokens=4096, batch_size=8, epochs=2))
    b = tasks.run_trial(spec(text, tokens=4096, batch_size=8, epochs=2))
    assert a.status == "complete" and a.runs[0].metrics == b.runs[0].metrics
    assert [e.train_loss for e in a.runs[0].epochs] == [e.train_loss for e in b.runs[0].epochs]
    c = tasks.run_trial(spec(text, seeds=(1,), tokens=4096, batch_size=8, epochs=2))
    assert c.runs[0].metrics != a.runs[0].metrics


def test_both_families_train_and_test_at_the_best_validation_point(text):
    conv = {"d_model": 32, "n_heads": 2, "L": 1, "K": 1, "d_h": 80, "lr": 3e-3, "tied": True, "qk_norm": True}
    r = tasks.run_trial(spec(text, conv, family="transformer", tokens=8192, batch_size=8, epochs=4))
    assert r.status == "complete" and r.device == "cpu"
    run = r.runs[0]
    assert set(run.metrics) == {"loss", "perplexity", "bpb", "val_loss", "val_perplexity", "val_bpb"}
    best = run.epochs[run.best_epoch - 1]
    assert run.metrics["val_loss"] == best.metrics["loss"] == min(e.metrics["loss"] for e in run.epochs)
    assert len(run.epochs) == 4 and all(a.elapsed_s < b.elapsed_s for a, b in zip(run.epochs, run.epochs[1:]))


def test_token_budget_steps_and_evaluation_points(text):
    task = tasks.get_task("lm-text", text)
    h = LMHyper.resolve(spec(text, tokens=10_000, batch_size=8, epochs=3), task)
    assert (h.tokens, h.batch_size, h.steps, h.evals) == (10_000, 8, 40, 3)  # ceil(10000 / (8 * 32))
    assert h.eval_steps() == [13, 27, 40] and h.warmup_steps == 2 and h.lr == 3e-3 and h.weight_decay == 0.1
    d = LMHyper.resolve(spec(text), task)  # task defaults: 2^19 tokens, batch 32, 4 evaluations
    assert (d.tokens, d.batch_size, d.evals) == (524_288, 32, 4) and d.steps == 512
    capped = LMHyper.resolve(spec(text, tokens=10_000, max_train_samples=10), task)
    assert capped.tokens == 320  # --max-train-samples caps the windows: 10 x 32 tokens
    assert LMHyper.resolve(spec(text, tokens=100, batch_size=8, epochs=9), task).evals == 1  # one step, one eval
    with pytest.raises(UserError, match="need lr > 0"):
        LMHyper.resolve(spec(text, {**TINY, "lr": 0.0}), task)


def test_warmup_then_cosine_to_a_tenth():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = warmup_cosine(opt, warmup=4, total=20)
    lrs = []
    for _ in range(20):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert lrs[-1] == pytest.approx(0.1) and all(a >= b for a, b in zip(lrs[3:], lrs[4:]))
    assert lrs[4 + (20 - 1 - 4) // 2] == pytest.approx(0.55, abs=0.05)  # half-way: the mean of 1 and 0.1


def test_adamw_settings_and_no_decay_on_norm_scales():
    from core.io import IOSpec
    from models import get_family

    model = get_family("transformer-hourglass").build(TINY, IOSpec(256, 256, "lm", None, (16,)))
    opt = make_lm_optimizer(model, 1e-3, 0.1)
    decay, no_decay = opt.param_groups
    assert decay["betas"] == (0.9, 0.95) and decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() == 1 for p in no_decay["params"]) and len(no_decay["params"]) == 1 * (1 + 2) + 1
    assert sum(p.numel() for g in opt.param_groups for p in g["params"]) == sum(p.numel() for p in model.parameters())


def test_non_finite_loss_is_diverged_with_the_step(text):
    r = tasks.run_trial(spec(text, {**TINY, "lr": 1e30}, tokens=4096, batch_size=8, epochs=1))
    assert r.status == "diverged" and r.runs[0].status == "diverged"
    assert r.error.startswith("non-finite loss at step ") and int(r.error.split()[-1]) >= 2


def test_errors_become_failed_runs_and_callback_errors_propagate(text):
    r = tasks.run_trial(spec(text, {"d_model": 32, "n_heads": 3, "L": 1, "d_h": 8}, tokens=512, batch_size=8))
    assert r.status == "failed" and "n_heads=3 must divide d_model=32" in r.error and r.traceback

    def boom(i, record):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        tasks.run_trial(spec(text, tokens=512, batch_size=8, epochs=1), on_epoch=boom)


def test_z_loss_adds_the_squared_log_normaliser():
    """lm_loss with z_loss = c is the cross-entropy plus c * mean(logsumexp(logits)^2)
    (PaLM's auxiliary softmax loss), by hand on random logits; 0 leaves the cross-entropy."""
    from tasks.lm_train import lm_loss

    g = torch.Generator().manual_seed(0)
    logits, targets = torch.randn(2, 3, 5, generator=g) * 3, torch.randint(0, 5, (2, 3), generator=g)
    ce = -torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).mean()
    log_z = torch.log(torch.exp(logits).sum(-1))
    assert float(lm_loss(logits, targets)) == pytest.approx(float(ce), rel=1e-6)
    assert float(lm_loss(logits, targets, 1e-2)) == pytest.approx(float(ce + 1e-2 * (log_z**2).mean()), rel=1e-6)


def test_z_loss_option_trains_and_changes_the_training_loss(text):
    plain = tasks.run_trial(spec(text, tokens=4096, batch_size=8, epochs=2))
    z = tasks.run_trial(spec(dict(text, z_loss=1e-2), tokens=4096, batch_size=8, epochs=2))
    assert z.status == "complete" and plain.status == "complete"
    assert z.runs[0].epochs[0].train_loss > plain.runs[0].epochs[0].train_loss  # the term is positive
    with pytest.raises(UserError, match="z_loss must be a number >= 0"):
        tasks.get_task("lm-text", dict(text, z_loss=-1))
