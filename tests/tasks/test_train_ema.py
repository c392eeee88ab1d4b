"""`--ema DECAY`: the moving average of the weights (tasks/train.py: WeightAverage) and how
the supervised trainer validates, keeps and tests it."""

from __future__ import annotations

import pickle
import re

import pytest
import torch
from torch import nn

import tasks
from core.errors import UserError
from core.trials import TrainSettings, TrialSpec, check_ema
from tasks import train
from tasks.train import WeightAverage, train_epoch

TINY = {"d_z": 96, "d_h": 16, "L": 2}


def spec(task="digits-denoise", config=TINY, **settings) -> TrialSpec:
    return TrialSpec("test", 3, "hourglass", dict(config), task, (0,), TrainSettings(**settings))


class TinyData:
    """Eight samples of y = 2x - 1 + noise, on the CPU: the trainer's data interface."""

    device = torch.device("cpu")
    n_train = 8

    def __init__(self) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(8, 2, generator=g)
        self.y = self.x.sum(1, keepdim=True) * 2 - 1 + 0.1 * torch.randn(8, 1, generator=g)

    def train_batch(self, idx, generator):
        return self.x[idx], self.y[idx]


class Snapshots:
    """A scheduler that records the model's parameters after each optimiser step (the
    trainer steps it right after the optimiser, before the average's update)."""

    def __init__(self, model: nn.Module) -> None:
        self.model, self.taken = model, []

    def step(self) -> None:
        self.taken.append([p.detach().clone() for p in self.model.parameters()])


@pytest.mark.parametrize("warmup", [False, True])
def test_the_average_is_the_hand_computed_one_after_a_few_steps(warmup):
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    init = [p.detach().clone() for p in model.parameters()]
    decay = 0.6
    average = WeightAverage(model, decay, warmup=warmup)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    snaps = Snapshots(model)
    out = train_epoch(
        model, optimizer, snaps, TinyData(), torch.Generator().manual_seed(1), n_train=8, batch_size=2, average=average
    )
    assert out.steps == 4 and len(snaps.taken) == 4 and average.updates == 4
    expected = init
    for n, params in enumerate(snaps.taken, 1):
        d = min(decay, (1 + n) / (10 + n)) if warmup else decay  # warm-up: 2/11, 3/12, 4/13, 5/14
        expected = [d * e + (1 - d) * p for e, p in zip(expected, params)]
    got = [p.detach() for p in average.current().parameters()]
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e, rtol=0, atol=1e-6)
    # the trained model moved on and is not the average; the average is no leaf of the optimiser
    assert not torch.equal(got[0], next(model.parameters()).detach())
    assert not any(p.requires_grad for p in average.model.parameters())
    assert [average.rate(n) for n in (1, 2, 100)] == ([2 / 11, 3 / 12, 0.6] if warmup else [0.6] * 3)


def test_the_average_reads_the_trained_models_buffers():
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    average = WeightAverage(model, 0.9)
    model.train()
    model(torch.randn(16, 3) * 5 + 2)  # moves the running statistics
    read = average.current()
    assert torch.equal(read[1].running_mean, model[1].running_mean)
    assert torch.equal(read[1].running_var, model[1].running_var)


def test_off_by_default_the_trainer_never_builds_an_average(monkeypatch):
    assert TrainSettings().ema == 0.0 and TrainSettings().ema_warmup is False
    plain = tasks.run_trial(spec(epochs=2))

    def refuse(*a, **k):
        raise AssertionError("an average was built with --ema off")

    monkeypatch.setattr(train, "WeightAverage", refuse)
    again = tasks.run_trial(spec(epochs=2, ema=0.0))
    assert plain.status == again.status == "complete"
    assert plain.runs[0].metrics == again.runs[0].metrics
    assert [e.train_loss for e in plain.runs[0].epochs] == [e.train_loss for e in again.runs[0].epochs]


def test_with_ema_on_validation_the_kept_state_and_the_test_metrics_are_the_averages(monkeypatch):
    built, judged = [], []

    class Recorded(WeightAverage):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            built.append(self)

    real_evaluate, real_after_run = train.evaluate, train.after_run

    def evaluate(model, data, split):
        judged.append((split, model))
        return real_evaluate(model, data, split)

    def after_run(task, model, data, seed):
        judged.append(("after_run", model))
        return real_after_run(task, model, data, seed)

    monkeypatch.setattr(train, "WeightAverage", Recorded)
    monkeypatch.setattr(train, "evaluate", evaluate)
    monkeypatch.setattr(train, "after_run", after_run)
    result = tasks.run_trial(spec(epochs=2, ema=0.5))
    assert result.status == "complete" and len(built) == 1
    (average,) = built
    assert [s for s, _ in judged] == ["val", "val", "test", "after_run"]
    assert all(m is average.model for _, m in judged)
    task = tasks.get_task("digits-denoise")
    n_train = tasks.load_data(task, None, "cpu").n_train
    assert average.updates == 2 * len(train.batch_bounds(n_train, task.defaults.batch_size))  # every step


def test_a_decay_near_1_keeps_the_initial_weights_in_every_metric():
    """0.999999 over a few dozen steps is (almost) the initialisation: validation and test
    metrics are the untrained model's, which they would not be if the trained one were read."""
    import models

    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")
    torch.manual_seed(0)  # as the trainer, before it builds the model of seed 0
    fresh = models.get_family("hourglass").build(TINY, task.io(), seed=0)
    untrained = train.evaluate(fresh, data, "test")
    trained = tasks.run_trial(spec(epochs=2)).runs[0].metrics
    held = tasks.run_trial(spec(epochs=2, ema=0.999999)).runs[0].metrics
    # within the BatchNorm statistics, which are the trained model's (WeightAverage.current)
    assert held["psnr"] == pytest.approx(untrained["psnr"], abs=0.2)
    assert held["val_psnr"] == pytest.approx(held["psnr"], abs=0.2)
    assert trained["psnr"] > untrained["psnr"] + 3


@pytest.mark.parametrize(
    "decay,warmup,match",
    [
        (-0.1, False, "--ema must be a decay in [0, 1)"),
        (1.0, False, "--ema must be a decay in [0, 1)"),
        (float("nan"), False, "got nan"),
        ("0.9", False, "got '0.9'"),
        (True, False, "got True"),
        (0.0, True, "--ema-warmup needs --ema DECAY above 0"),
    ],
)
def test_bad_decays_are_one_line_errors(decay, warmup, match):
    with pytest.raises(UserError, match=re.escape(match)):
        check_ema(decay, warmup)
    result = tasks.run_trial(spec(epochs=1, ema=decay, ema_warmup=warmup))  # a spec built around RunSpec
    assert result.status == "failed" and "--ema" in result.error


def test_the_settings_travel_with_the_trial_and_old_ones_read_as_off():
    s = spec(epochs=1, ema=0.9999, ema_warmup=True)
    assert TrialSpec.from_dict(s.to_dict()) == s  # the Ray executor's path
    assert pickle.loads(pickle.dumps(s)) == s
    old = {k: v for k, v in s.train.to_dict().items() if k not in ("ema", "ema_warmup")}
    assert TrainSettings.from_dict(old).ema == 0.0 and not TrainSettings.from_dict(old).ema_warmup
