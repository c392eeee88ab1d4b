"""run_trial on digits with tiny models, and constructed cases for its rules."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import tasks
from core.errors import UserError
from core.io import IOSpec
from core.trials import EpochRecord, TrainSettings, TrialResult, TrialSpec
from tasks.base import Task, TrainDefaults
from tasks.images import ImageData
from tasks.train import Hyper, batch_bounds, linear_decay
from tests.tasks.conftest import SHARED_DATA, needs_mnist

TINY = {"d_z": 96, "d_h": 16, "L": 2}


def spec(task="digits-denoise", config=TINY, seeds=(0,), **train) -> TrialSpec:
    return TrialSpec("test", 7, "hourglass", dict(config), task, tuple(seeds), TrainSettings(**train))


def test_training_beats_the_noisy_input():
    records: list[tuple[int, EpochRecord]] = []
    config = {"d_z": 128, "d_h": 32, "L": 2, "lr": 1e-2}
    result = tasks.run_trial(spec(config=config, epochs=8), on_epoch=lambda i, r: records.append((i, r)))
    assert isinstance(result, TrialResult)
    assert result.status == "complete" and result.error is None and result.device == "cpu"
    run = result.runs[0]
    losses = [r.train_loss for r in run.epochs]
    assert losses[-1] < 0.6 * losses[0]
    identity = tasks.load_data(tasks.get_task("digits-denoise"), None, "cpu").evaluate(lambda x: x, "test")
    assert run.metrics["psnr"] > identity["psnr"] + 2.0
    assert run.metrics["ssim"] > identity["ssim"] + 0.02
    assert set(run.metrics) == {"psnr", "ssim", "val_psnr", "val_ssim"}
    assert [i for i, _ in records] == [0] * 8 and [r.epoch for _, r in records] == list(range(1, 9))
    assert run.epochs[run.best_epoch - 1].metrics["psnr"] == run.metrics["val_psnr"]
    assert run.metrics["val_psnr"] == max(r.metrics["psnr"] for r in run.epochs)
    assert all(a.elapsed_s < b.elapsed_s for a, b in zip(run.epochs, run.epochs[1:]))


def test_genclass_reports_accuracy_and_several_seeds():
    seen = []
    result = tasks.run_trial(spec("digits-genclass", seeds=(0, 1), epochs=3), on_epoch=lambda i, r: seen.append(i))
    assert result.status == "complete" and [r.seed for r in result.runs] == [0, 1]
    assert seen == [0, 1, 0, 1, 0, 1]  # the seeds train as one pack (tasks/fused_train.py)
    seen.clear()
    tasks.run_trial(spec("digits-genclass", seeds=(0, 1), epochs=3, fuse=False), on_epoch=lambda i, r: seen.append(i))
    assert seen == [0, 0, 0, 1, 1, 1]  # one seed after another
    assert result.runs[0].metrics["accuracy"] > 0.5 and "val_accuracy" in result.runs[0].metrics
    mean, std, n = result.aggregate()["psnr"]
    assert n == 2 and std is not None and result.runs[0].metrics != result.runs[1].metrics


def test_deterministic_on_cpu():
    a = tasks.run_trial(spec("digits-sr", epochs=2))
    b = tasks.run_trial(spec("digits-sr", epochs=2))
    assert a.runs[0].metrics == b.runs[0].metrics
    assert [e.train_loss for e in a.runs[0].epochs] == [e.train_loss for e in b.runs[0].epochs]


def test_hyper_parameters_precedence():
    task = tasks.get_task("digits-denoise")
    h = Hyper.resolve(spec(config={**TINY, "lr": 0.5}, lr=0.1, epochs=3), task)
    assert (h.lr, h.epochs, h.batch_size, h.weight_decay) == (0.5, 3, 64, 0.01)
    h = Hyper.resolve(spec(lr=0.1, weight_decay=0.0), task)
    assert (h.lr, h.weight_decay, h.epochs) == (0.1, 0.0, task.defaults.epochs)


def test_linear_decay_to_zero():
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_decay(opt, 4)
    lrs = []
    for _ in range(4):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == [1.0, 0.75, 0.5, 0.25] and opt.param_groups[0]["lr"] == 0.0


def test_linear_decay_with_warmup():
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_decay(opt, 8, warmup_steps=4)
    lrs = []
    for _ in range(8):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    expected = [0.25 * 1.0, 0.5 * 0.875, 0.75 * 0.75, 1.0 * 0.625, 0.5, 0.375, 0.25, 0.125]
    assert lrs == pytest.approx(expected) and opt.param_groups[0]["lr"] == 0.0


def test_batch_bounds():
    assert batch_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert batch_bounds(9, 4) == [(0, 4), (4, 8)]  # a lone last sample is dropped (BatchNorm)
    assert batch_bounds(3, 64) == [(0, 3)]


def test_max_train_samples(monkeypatch):
    seen = []
    original = ImageData.train_batch

    def spy(self, idx, generator):
        seen.append(idx.clone())
        return original(self, idx, generator)

    monkeypatch.setattr(ImageData, "train_batch", spy)
    result = tasks.run_trial(spec(epochs=2, batch_size=32, max_train_samples=100))
    assert result.status == "complete"
    assert [len(i) for i in seen] == [32, 32, 32, 4] * 2
    assert sorted(torch.cat(seen[:4]).tolist()) == list(range(100))


def test_non_finite_loss_diverges(monkeypatch):
    original = ImageData.train_batch
    calls = {"n": 0}

    def poisoned(self, idx, generator):
        calls["n"] += 1
        inputs, targets = original(self, idx, generator)
        if calls["n"] == 19 + 3:  # digits: 19 steps per epoch at batch 64 -> epoch 2 step 3
            targets = targets * float("nan")
        return inputs, targets

    monkeypatch.setattr(ImageData, "train_batch", poisoned)
    result = tasks.run_trial(spec(epochs=4))
    run = result.runs[0]
    assert result.status == "diverged" and run.status == "diverged"
    assert run.error == result.error == "non-finite loss at epoch 2 step 3"
    assert calls["n"] == 22 and len(run.epochs) == 1 and run.metrics == {}
    assert result.traceback is None


def test_exception_fails_the_run_with_traceback():
    result = tasks.run_trial(spec(config={"d_z": 96}, seeds=(0, 1)))
    assert result.status == "failed" and len(result.runs) == 2
    assert result.error == "UserError: config is missing d_h, L"
    assert "Traceback" in result.traceback and "missing d_h" in result.traceback
    assert result.metrics == {}


def test_runtime_error_inside_training(monkeypatch):
    def boom(self, idx, generator):
        raise RuntimeError("out of memory\nsecond line")

    monkeypatch.setattr(ImageData, "train_batch", boom)
    result = tasks.run_trial(spec())
    assert result.status == "failed" and result.error == "RuntimeError: out of memory second line"
    assert "boom" in result.traceback


def test_on_epoch_exceptions_propagate():
    class Stop(Exception):
        pass

    def stop(i, r):
        raise Stop()

    with pytest.raises(Stop):
        tasks.run_trial(spec(epochs=3), on_epoch=stop)


def test_devices():
    assert tasks.resolve_device("cpu") == torch.device("cpu")
    assert tasks.device_label(torch.device("cpu")) == "cpu"
    with pytest.raises(UserError, match="unknown device"):
        tasks.resolve_device("abacus")
    if not torch.cuda.is_available():
        assert tasks.resolve_device("auto") == torch.device("cpu")
        with pytest.raises(UserError, match="CUDA is not available"):
            tasks.resolve_device("cuda")


def test_unknown_task_propagates():
    with pytest.raises(UserError, match="unknown task"):
        tasks.run_trial(spec("nope"))


# -- the test-at-best-validation rule, on a constructed task ------------------------------
VAL_SCRIPT = [1.0, 5.0, 3.0, 2.0]  # validation psnr per epoch: best at epoch 2


class ScriptedData:
    """Validation metrics follow VAL_SCRIPT; test psnr is a fingerprint of the weights."""

    device = torch.device("cpu")
    n_train = 16

    def __init__(self):
        self.fingerprints: list[float] = []

    def train_batch(self, idx, generator):
        x = torch.rand(len(idx), 4, generator=generator)
        return x, x

    def evaluate(self, model, split):
        fp = float(sum(p.double().sum() for p in model.parameters()))
        if split == "test":
            return {"psnr": fp}
        self.fingerprints.append(fp)
        return {"psnr": VAL_SCRIPT[len(self.fingerprints) - 1], "ssim": 0.0}


class ScriptedTask(Task):
    name = "scripted"
    description = "test double"
    metric = "psnr"
    direction = "maximize"
    metrics = ("psnr",)
    defaults = TrainDefaults(epochs=4, batch_size=4, lr=1e-2)

    def io(self):
        return IOSpec(4, 4, "image", (1, 2, 2), (1, 2, 2))

    def load(self, data_dir, device):
        return ScriptedData()


@pytest.mark.parametrize("direction, best", [("maximize", 2), ("minimize", 1)])
def test_test_metrics_come_from_the_best_validation_epoch(monkeypatch, direction, best):
    cls = type("Scripted", (ScriptedTask,), {"direction": direction})
    monkeypatch.setitem(tasks.TASKS._items, "scripted", cls)
    tasks.clear_data_cache()
    result = tasks.run_trial(spec("scripted", config={"d_z": 8, "d_h": 2, "L": 1}))
    data = tasks.load_data(cls(), None, "cpu")
    tasks.clear_data_cache()
    run = result.runs[0]
    assert result.status == "complete" and run.best_epoch == best
    assert len(set(data.fingerprints)) == 4  # the weights changed every epoch
    assert run.metrics["psnr"] == data.fingerprints[best - 1] != data.fingerprints[-1]
    assert run.metrics["val_psnr"] == VAL_SCRIPT[best - 1]


@needs_mnist
@pytest.mark.mnist
@pytest.mark.slow
@pytest.mark.parametrize("name", ["mnist-denoise", "mnist-sr", "mnist-genclass"])
def test_mnist_smoke_trial(name):
    config = {"d_z": 800, "d_h": 32, "L": 1, "lr": 5e-3}
    result = dataclasses.replace(spec(name, config=config, epochs=1, max_train_samples=1024), data_dir=str(SHARED_DATA))
    out = tasks.run_trial(result)
    assert out.status == "complete", out.error
    assert out.runs[0].metrics["psnr"] > 10 and 0 < out.runs[0].metrics["ssim"] < 1


def one_full_batch_step(cfg, task, data):
    """train_epoch's recorded loss of one full-batch step at lr 0 (parameters unchanged),
    and the model it trained."""
    from models import get_family
    from tasks.train import train_epoch

    torch.manual_seed(0)
    model = get_family("fcnet").build(cfg, task.io())
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)
    out = train_epoch(
        model,
        opt,
        sched,
        data,
        torch.Generator().manual_seed(0),
        n_train=data.n_train,
        batch_size=data.n_train,
        loss_fn=task.loss,
    )
    return out.mean_loss, model


def test_the_models_regularization_is_added_to_the_training_loss():
    """A module's `regularization()` (fcnet's orth_reg: Yu & Zhang Sec. 4.2) is added to
    the task's loss at every step; it is zero for orthogonal hidden weights."""
    from models import get_family
    from tasks.train import model_regularizer

    task = tasks.get_task("sines")
    data = tasks.load_data(task, None, "cpu")
    x, y = data.x["train"], data.y["train"]
    base = {"width": 20, "depth": 4}
    plain, m0 = one_full_batch_step(base, task, data)
    with torch.no_grad():
        assert plain == pytest.approx(float(task.loss(m0(x), y)), rel=1e-5)
    reg, m1 = one_full_batch_step(dict(base, orth_reg=0.5), task, data)
    with torch.no_grad():
        penalty = sum(((m.weight.T @ m.weight - torch.eye(20)) ** 2).sum() for m in m1.hidden)
        assert float(penalty) > 1.0  # kaiming init: far from orthogonal
        assert reg == pytest.approx(float(task.loss(m1(x), y)) + 0.5 * float(penalty), rel=1e-5)
        assert reg == pytest.approx(plain + 0.5 * float(penalty), rel=1e-5)  # same seed, same weights
    orth = dict(base, init="orthogonal")
    assert one_full_batch_step(dict(orth, orth_reg=0.5), task, data)[0] == pytest.approx(
        one_full_batch_step(orth, task, data)[0], abs=1e-6
    )
    han = get_family("han").build({"width": 8, "depth": 2}, task.io())
    assert model_regularizer(han) is None and model_regularizer(m1) is not None


def test_keep_gets_each_complete_runs_best_state_and_a_failed_write_fails_the_run():
    """`run_trial(keep=)` sees the state the test metrics come from (reloaded, it gives
    them again), its record becomes the run's "weights" artifact, the state never leaves
    the result; a keep that raises makes the run failed (no record of a half file)."""
    from tasks.train import evaluate

    seen = []

    def keep(s, run, state):
        seen.append((run.seed, state))
        return {"media_type": "m", "store": "/w", "store_key": f"k{run.seed}", "size": 1, "sha256": "x"}

    r = tasks.run_trial(spec(seeds=(0, 1), epochs=2), keep=keep)
    assert r.status == "complete" and [s for s, _ in seen] == [0, 1]
    assert [run.artifacts["weights"]["store_key"] for run in r.runs] == ["k0", "k1"]
    assert all(run.best_state is None for run in r.runs) and "best_state" not in r.runs[0].to_dict()
    task = tasks.get_task("digits-denoise")
    model = tasks.train.models.get_family("hourglass").build(TINY, task.io())
    model.load_state_dict(seen[1][1])
    data = tasks.load_data(task, None, torch.device("cpu"))
    assert evaluate(model, data, "test")["psnr"] == pytest.approx(r.runs[1].metrics["psnr"], abs=1e-6)

    def broken(s, run, state):
        raise OSError("disk full")

    r = tasks.run_trial(spec(epochs=1), keep=broken)
    assert r.status == "failed" and r.error == "weights not written: OSError: disk full"
    assert r.runs[0].artifacts == {} and "OSError: disk full" in r.traceback


def test_compile_trains_through_the_compiled_module_and_judges_the_plain_one(monkeypatch):
    """`--compile MODE` reaches torch.compile with that mode; the steps call the compiled
    module, validation the model itself (a recording stand-in: compiling on a CPU takes long;
    tests/tasks/test_cuda.py compiles for real on a GPU)."""
    calls = {"modes": [], "forward": 0}

    class Compiled(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.inner = model

        def forward(self, x):
            calls["forward"] += 1
            return self.inner(x)

    def fake_compile(model, mode=None):
        calls["modes"].append(mode)
        return Compiled(model)

    monkeypatch.setattr(torch, "compile", fake_compile)
    result = tasks.run_trial(spec(epochs=2, compile="reduce-overhead"))
    assert result.status == "complete", result.error
    steps = 2 * len(tasks.train.batch_bounds(1197, 64))  # digits: 1197 training images, batch 64
    assert calls == {"modes": ["reduce-overhead"], "forward": steps}
    calls.update(modes=[], forward=0)
    assert tasks.run_trial(spec(epochs=1)).status == "complete" and calls == {"modes": [], "forward": 0}


def test_compile_modes_are_checked():
    from core.trials import COMPILE_MODES, check_compile

    assert check_compile(None) is None and check_compile("reduce-overhead") == "reduce-overhead"
    assert "default" in COMPILE_MODES
    with pytest.raises(UserError, match="--compile must be one of default, reduce-overhead"):
        check_compile("fast")
