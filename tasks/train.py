"""Run one trial: train a model on a task with each of the trial's seeds.

Per run (seed): seed torch and a generator on the device; build the family's model;
the optimiser and schedule of `--optimizer` (tasks/optimizers.py; default AdamW with a
linear learning-rate decay to 0 over all steps, per step, after a linear warm-up over
the task's `defaults.warmup` fraction of the steps, 0 for the paper tasks); the task's loss
(`Task.loss`: MSE by default, cross-entropy for classification) plus the model's own
regularisation term where it has one (`regularization()`, see `model_regularizer`; e.g.
the orthogonal regulariser of fcnet's `orth_reg`);
shuffle with torch.randperm on the device generator every epoch; batches built by index
from data held on the device (no DataLoader). After every epoch: validation metrics. The
state with the best validation primary metric is kept, and the TEST metrics are those of
that state (test at best validation). RunResult.metrics = test metrics by name plus
`val_<name>` at the best epoch. With `--ema DECAY` (`TrainSettings.ema`, off by default)
an exponential moving average of the weights follows the training (`WeightAverage`, as
U-ViT's, whose settings Hu & Rostami's Table 5 uses) and is what is validated, kept and
tested (sample quality included); the training loss stays the trained model's.

Hyper-parameters, first given wins: config["lr"] / config["weight_decay"] (searched),
spec.train.*, task.defaults.

No host sync per step: the loss of every step is written into a device tensor and the
epoch's mean is read once. Non-finite losses are detected from that tensor every
`check_every` steps (every step on the CPU, where reading is free; every 25 steps on a
GPU, so a diverged run stops within 25 steps) and the run stops with status "diverged"
and "non-finite loss at epoch E step S" (S is the first bad step of the epoch, 1-based).

Failures: any exception inside a run makes that run "failed" (one-line error; the
trial's traceback field gets the traceback); nothing but DataError/UserError from
loading the data, and exceptions raised by the caller's own `on_epoch`, leaves run_trial.
"""

from __future__ import annotations

import copy
import functools
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

import models
from core.directions import better
from core.errors import UserError, one_line
from core.trials import EpochRecord, RunResult, TrialSpec, TrialStopped, check_ema
from tasks.base import Task
from tasks.by_name import TRAINERS
from tasks.optimizers import OPTIMIZERS, linear_decay  # noqa: F401  (linear_decay: re-exported)
from tasks.optimizers import make_adamw as make_optimizer  # noqa: F401  (re-exported)

OnEpoch = Callable[[int, EpochRecord], None]
# Where a complete run's kept state goes (`run_trial(keep=...)`): (spec, run, state) -> the
# artifact record of the written file (search/artifacts/weights.py: `weights_sink`).
Keep = Callable[[TrialSpec, RunResult, dict[str, torch.Tensor]], dict[str, Any]]
GPU_CHECK_EVERY = 25


@dataclass(frozen=True)
class Hyper:
    """Resolved training hyper-parameters of a trial."""

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    max_train_samples: int | None
    optimizer: str = "adamw"  # a name in tasks.optimizers.OPTIMIZERS
    ema: float = 0.0  # decay of the weights' moving average per step (0: off)
    ema_warmup: bool = False  # the decay of update n is min(ema, (1 + n) / (10 + n))

    @classmethod
    def resolve(cls, spec: TrialSpec, task: Task) -> Hyper:
        d, t, c = task.defaults, spec.train, spec.config

        def pick(*values: Any) -> Any:
            return next(v for v in values if v is not None)

        h = cls(
            epochs=int(pick(t.epochs, d.epochs)),
            batch_size=int(pick(t.batch_size, d.batch_size)),
            lr=float(pick(c.get("lr"), t.lr, d.lr)),
            weight_decay=float(pick(c.get("weight_decay"), t.weight_decay, d.weight_decay)),
            max_train_samples=t.max_train_samples,
            optimizer=str(pick(t.optimizer, d.optimizer)),
            ema=check_ema(t.ema, t.ema_warmup),
            ema_warmup=bool(t.ema_warmup),
        )
        if h.epochs < 1 or h.batch_size < 2:
            raise UserError(f"need epochs >= 1 and batch_size >= 2, got {h.epochs} and {h.batch_size}")
        if not h.lr > 0 or not h.weight_decay >= 0:
            raise UserError(f"need lr > 0 and weight_decay >= 0, got {h.lr} and {h.weight_decay}")
        return h


def model_regularizer(model: nn.Module) -> Callable[[], torch.Tensor] | None:
    """The model's regularisation term, added to the task's loss at every training step:
    a module may define `regularization() -> scalar tensor` (e.g. models/fcnet.py's
    orthogonal regulariser, Yu & Zhang Sec. 4.2); None when it has none. The one place
    the trainer looks for it (no per-family cases); evaluation metrics never include it."""
    term = getattr(model, "regularization", None)
    return term if callable(term) else None


class WeightAverage:
    """An exponential moving average of a model's weights (`--ema DECAY`), as U-ViT's,
    whose training settings Hu & Rostami use (Table 5; their Table 4 times "an EMA
    training step"): baofff/U-ViT utils.py `ema` and `TrainState.ema_update`, the same in
    zizhao-hu/L-MLP. The average starts as a copy of the model at its initialisation
    (U-ViT: `ema_update(0)`), and after every optimiser step each parameter moves to
    p_avg = d * p_avg + (1 - d) * p (U-ViT: `config.get('ema_rate', 0.9999)` every step,
    no config sets another rate, and no warm-up). U-ViT samples and measures FID with the
    average (`nnet_ema`), so the trainer validates, keeps and tests it.

    Only parameters are averaged, as U-ViT's; buffers (BatchNorm statistics, fixed
    masks) are the trained model's, copied into the average when it is read (`current`).
    With `warmup`, the decay of update n (1-based) is min(d, (1 + n) / (10 + n)), as
    CompVis latent-diffusion's `LitEma` (ldm/modules/ema.py; TensorFlow's
    ExponentialMovingAverage with num_updates): not U-ViT's, but on a run much shorter
    than 1 / (1 - d) steps the plain average would still be mostly the random
    initialisation, while the warmed-up one spans about the last tenth of the steps."""

    def __init__(self, model: nn.Module, decay: float, warmup: bool = False) -> None:
        self.decay, self.warmup, self.updates = check_ema(decay, warmup), bool(warmup), 0
        self.source = model
        self.model = copy.deepcopy(model)
        self.model.requires_grad_(False)
        self._averaged = list(self.model.parameters())
        self._trained = list(model.parameters())

    def rate(self, n: int) -> float:
        """The decay of update n (1-based)."""
        return min(self.decay, (1 + n) / (10 + n)) if self.warmup else self.decay

    @torch.no_grad()
    def update(self) -> None:
        """After an optimiser step: move every averaged parameter towards the model's."""
        self.updates += 1
        weight = 1.0 - self.rate(self.updates)  # avg + (1 - d) (p - avg) = d avg + (1 - d) p
        if hasattr(torch, "_foreach_lerp_"):  # one kernel per device and dtype (torch.optim.swa_utils' way)
            torch._foreach_lerp_(self._averaged, self._trained, weight)
        else:
            for avg, p in zip(self._averaged, self._trained):
                avg.lerp_(p, weight)

    @torch.no_grad()
    def current(self) -> nn.Module:
        """The averaged model, with the trained model's buffers."""
        for avg, b in zip(self.model.buffers(), self.source.buffers()):
            avg.copy_(b)
        return self.model


@dataclass
class EpochOutcome:
    mean_loss: float
    steps: int
    bad_step: int | None  # 1-based step of the first non-finite loss, None if all finite


def batch_bounds(n: int, batch_size: int) -> list[tuple[int, int]]:
    """[start, stop) of each batch of an epoch over n samples. A last batch of a single
    sample is dropped (BatchNorm cannot train on one sample); other partial batches stay."""
    if n < 2:
        raise UserError(f"need at least 2 training samples, got {n}")
    bounds = [(s, min(s + batch_size, n)) for s in range(0, n, batch_size)]
    return bounds if bounds[-1][1] - bounds[-1][0] > 1 else bounds[:-1]


def train_epoch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    data: Any,
    generator: torch.Generator,
    *,
    n_train: int,
    batch_size: int,
    max_steps: int | None = None,
    check_every: int | None = None,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.mse_loss,
    average: WeightAverage | None = None,
) -> EpochOutcome:
    """One pass over the first n_train training samples in a fresh random order;
    `loss_fn(prediction, target)` is the task's loss (`Task.loss`, MSE by default), to
    which the model's `regularization()` is added when it has one (`model_regularizer`);
    the recorded losses are those totals. `average` (`--ema`) is updated after every
    optimiser step."""
    device = data.device
    if check_every is None:
        check_every = 1 if device.type == "cpu" else GPU_CHECK_EVERY
    bounds = batch_bounds(n_train, batch_size)[:max_steps]
    perm = torch.randperm(n_train, generator=generator, device=device)
    losses = torch.empty(len(bounds), device=device)
    checked = 0
    regularizer = model_regularizer(model)
    model.train()
    for step, (start, stop) in enumerate(bounds):
        inputs, targets = data.train_batch(perm[start:stop], generator)
        pred = model(*inputs) if isinstance(inputs, tuple) else model(inputs)  # tuple: model(x_t, t, y)
        loss = loss_fn(pred, targets)
        if regularizer is not None:
            loss = loss + regularizer()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if average is not None:
            average.update()
        losses[step] = loss.detach()
        if (step + 1) % check_every == 0 or step + 1 == len(bounds):
            finite = torch.isfinite(losses[checked : step + 1])
            if not bool(finite.all()):
                bad = checked + int((~finite).nonzero()[0, 0]) + 1
                return EpochOutcome(float("nan"), step + 1, bad)
            checked = step + 1
    sizes = torch.tensor([b - a for a, b in bounds], device=device, dtype=losses.dtype)
    mean = float((losses * sizes).sum() / sizes.sum())  # the epoch's one sync
    return EpochOutcome(mean, len(bounds), None)


def evaluate(model: nn.Module, data: Any, split: str, predict: Callable[[Any], Any] | None = None) -> dict[str, float]:
    """The data's metrics of the model on a split, in eval mode, under inference_mode;
    `predict` (default: the model) gives the outputs, e.g. a pack's for one member."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            return data.evaluate(predict or model, split)
    finally:
        model.train(was_training)


class _CallbackError(Exception):
    """Carries an exception raised by the caller's on_epoch out of the run's try."""

    def __init__(self, original: BaseException) -> None:
        self.original = original


def after_run(task: Task, model: nn.Module, data: Any, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The task's extra test-time measurements of the kept state, in eval mode."""
    was_training = model.training
    model.eval()
    try:
        return task.after_run(model, data, seed)
    finally:
        model.train(was_training)


class BestValidation:
    """The test-at-best-validation rule, shared by the trainers: keep a copy of the state
    at the best validation value of the task's primary metric; at the end, the test
    metrics of that state plus `val_<name>` of the best evaluation."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.record: EpochRecord | None = None
        self.state: dict[str, torch.Tensor] | None = None

    def observe(self, model: nn.Module, record: EpochRecord, index: int, on_epoch: OnEpoch | None) -> None:
        """After an evaluation: remember the state if it is the best, then tell the caller."""
        best = self.record.metrics[self.task.metric] if self.record else None
        if better(record.metrics[self.task.metric], best, self.task.direction):
            self.record = record
            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if on_epoch is not None:
            try:
                on_epoch(index, record)
            except Exception as e:
                raise _CallbackError(e) from e

    def finish(self, model: nn.Module, data: Any, result: Callable[..., RunResult], when: str, seed: int) -> RunResult:
        """The run's result: complete with test-at-best metrics (plus what the task's
        `after_run` measures on that state, e.g. sample quality), or diverged when no
        evaluation gave a finite primary metric (`when`: "epoch" or "evaluation")."""
        if self.record is None or self.state is None:
            return result("diverged", f"validation {self.task.metric} was not finite at any {when}")
        model.load_state_dict(self.state)
        test = evaluate(model, data, "test")
        metrics = {**test, **{f"val_{k}": v for k, v in self.record.metrics.items()}}
        extra, artifacts = after_run(self.task, model, data, seed)
        return result(
            "complete",
            metrics={**metrics, **extra},
            best_epoch=self.record.epoch,
            artifacts=artifacts,
            best_state=self.state,
        )


class RunLog:
    """One run's record as it grows: its evaluations, its clock, and the RunResult it ends
    with (shared by the trainers)."""

    def __init__(self, seed: int) -> None:
        self.seed, self.t0 = seed, time.perf_counter()
        self.epochs: list[EpochRecord] = []

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def result(self, status: str, error: str | None = None, **kw: Any) -> RunResult:
        kw.setdefault("metrics", {})
        kw.setdefault("best_epoch", None)
        return RunResult(self.seed, status, epochs=self.epochs, duration_s=self.elapsed(), error=error, **kw)


Trainer = Callable[[TrialSpec, Task, Any, int, int, "OnEpoch | None"], tuple[RunResult, "str | None"]]


def guarded_trainer(train: Callable[..., RunResult]) -> Trainer:
    """A trainer (see tasks.by_name.TRAINERS) from train(spec, task, data, seed, index,
    on_epoch, run: RunLog) -> RunResult: any exception becomes a failed run with its
    one-line message and traceback, except those raised by the caller's own on_epoch."""

    @functools.wraps(train)
    def trainer(
        spec: TrialSpec, task: Task, data: Any, seed: int, index: int, on_epoch: OnEpoch | None
    ) -> tuple[RunResult, str | None]:
        run = RunLog(seed)
        try:
            return train(spec, task, data, seed, index, on_epoch, run), None
        except _CallbackError as e:
            if isinstance(e.original, TrialStopped):  # the caller stopped it: pruned, epochs kept
                return run.result("pruned", str(e.original)), None
            raise
        except Exception as e:
            return run.result("failed", one_line(e, with_type=True)), traceback.format_exc()

    return trainer


@TRAINERS.register("supervised")
@guarded_trainer
def _run(
    spec: TrialSpec, task: Task, data: Any, seed: int, index: int, on_epoch: OnEpoch | None, run: RunLog
) -> RunResult:
    """One seed of a supervised run."""
    hyper = Hyper.resolve(spec, task)
    device = data.device
    torch.manual_seed(seed)
    generator = torch.Generator(device=device).manual_seed(seed)
    model = models.get_family(spec.family).build(spec.config, task.io(), seed=seed).to(device)
    n_train = min(data.n_train, hyper.max_train_samples or data.n_train)
    total = len(batch_bounds(n_train, hyper.batch_size)) * hyper.epochs
    optimizer, scheduler = OPTIMIZERS.get(hyper.optimizer)(
        [p for p in model.parameters() if p.requires_grad],
        hyper.lr,
        hyper.weight_decay,
        total,
        round(task.defaults.warmup * total),
    )

    # `--ema`: the average is what is validated, kept and tested (U-ViT evaluates its EMA)
    average = WeightAverage(model, hyper.ema, hyper.ema_warmup) if hyper.ema > 0 else None
    judged = model if average is None else average.model

    # `--compile MODE`: the steps run the compiled module (same parameters); validation,
    # the kept state and the test run `model` itself
    forward = torch.compile(model, mode=spec.train.compile) if spec.train.compile else model

    best = BestValidation(task)
    for epoch in range(1, hyper.epochs + 1):
        out = train_epoch(
            forward,
            optimizer,
            scheduler,
            data,
            generator,
            n_train=n_train,
            batch_size=hyper.batch_size,
            loss_fn=task.loss,
            average=average,
        )
        if out.bad_step is not None:
            return run.result("diverged", f"non-finite loss at epoch {epoch} step {out.bad_step}")
        if average is not None:
            average.current()
        record = EpochRecord(epoch, out.mean_loss, evaluate(judged, data, "val"), run.elapsed())
        run.epochs.append(record)
        best.observe(judged, record, index, on_epoch)
    return best.finish(judged, data, run.result, "epoch", seed)
