"""A user's own tasks (issue 60, item 3): a task from arrays that the product's trainer
trains, and a task with its own training function.

    ArrayTask      train/validation/test splits of (x, y) arrays or tensors (or a function
                   returning them), a loss, metrics with their directions. The supervised
                   trainer of tasks/train.py trains it: batches, optimiser, epochs, the
                   best-validation state, pruning, kept weights.
    FunctionTask   the user's `train(model, settings, report)` trains the built model,
                   calls `report(epoch, metrics)` after every epoch (validation metrics:
                   curves, the pruner and the pages read them) and returns the trial's test
                   metrics. The "function" trainer below runs it.

Both are Task subclasses made per registration by search/plugins/tasks.py (`own_task_class`),
with the user's objects as class attributes; `get_task(name)` instantiates them as any task.

Metrics: `Metric(fn, direction)` per name, fn(pred, y) -> a scalar over a whole split. The
names "accuracy", "error", "mse", "rmse" and "loss" (the task's loss) need no function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from core.directions import check_direction
from core.errors import UserError
from core.io import IOSpec
from tasks.base import Task, TrainDefaults
from tasks.by_name import TRAINERS
from tasks.train import BestValidation, Hyper, RunLog, guarded_trainer

Splits = dict[str, tuple[Any, Any]]  # "train" / "val" / "test" -> (x, y)
SPLITS = ("train", "val", "test")
EVAL_BATCH = 4096  # samples per forward pass when a split is evaluated


class PluginError(UserError):
    """A plugin broke its contract (a report of an undeclared metric, a training function
    that never reports): one line naming the plugin."""


@dataclass(frozen=True)
class Metric:
    """A metric of a user's task: fn(pred, y) -> scalar (a whole split's value) and which
    way is better. fn None: one of the built-in names (`BUILT_IN_METRICS`)."""

    direction: str
    fn: Callable[[torch.Tensor, torch.Tensor], Any] | None = None

    def __post_init__(self) -> None:
        check_direction(self.direction)


def _accuracy(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (pred.argmax(1) == y).float().mean()


BUILT_IN_METRICS: dict[str, tuple[str, Callable[[torch.Tensor, torch.Tensor], Any] | None]] = {
    "accuracy": ("maximize", _accuracy),
    "error": ("minimize", lambda p, y: 1.0 - _accuracy(p, y)),
    "mse": ("minimize", lambda p, y: (p - y).pow(2).mean()),
    "rmse": ("minimize", lambda p, y: (p - y).pow(2).mean().sqrt()),
    "loss": ("minimize", None),  # the task's own loss over the split
}
LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mse": torch.nn.functional.mse_loss,
    "cross_entropy": torch.nn.functional.cross_entropy,
}


def as_tensor(a: Any, what: str) -> torch.Tensor:
    """A NumPy array, a list or a tensor as a CPU tensor (floats as float32)."""
    try:
        t = a if isinstance(a, torch.Tensor) else torch.as_tensor(a)
    except Exception as e:
        raise UserError(f"{what}: not an array or a tensor ({type(a).__name__}): {e}") from None
    return t.float() if t.is_floating_point() else t


def check_splits(splits: Any, owner: str) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The splits as CPU tensors, or UserError naming `owner`: a mapping with train, val and
    test, each (x, y) of one length, at least 2 training samples, x of one shape per sample."""
    if not isinstance(splits, dict) or set(splits) != set(SPLITS):
        got = sorted(splits) if isinstance(splits, dict) else type(splits).__name__
        raise UserError(f"{owner}: data must be a dict with keys train, val and test, each (x, y); got {got}")
    out = {}
    for name in SPLITS:
        pair = splits[name]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise UserError(f"{owner}: data[{name!r}] must be a pair (x, y)")
        x, y = as_tensor(pair[0], f"{owner}: {name} x"), as_tensor(pair[1], f"{owner}: {name} y")
        if x.ndim < 1 or y.ndim < 1 or len(x) != len(y) or len(x) == 0:
            raise UserError(
                f"{owner}: {name} x and y need one row per sample, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
            )
        if not x.is_floating_point():
            x = x.float()
        if y.is_floating_point() and y.ndim == 1:
            y = y.unsqueeze(1)  # one regression target per sample: (N, 1), what a model with d_out 1 gives
        out[name] = (x, y)
    shapes = {name: (tuple(x.shape[1:]), tuple(y.shape[1:]), y.is_floating_point()) for name, (x, y) in out.items()}
    if len(set(shapes.values())) != 1:
        raise UserError(
            f"{owner}: the splits' sample shapes differ: "
            + "; ".join(f"{k} x {v[0]} y {v[1]}" for k, v in shapes.items())
        )
    if len(out["train"][0]) < 2:
        raise UserError(f"{owner}: need at least 2 training samples")
    return out


def io_of(splits: dict[str, tuple[torch.Tensor, torch.Tensor]], num_classes: int | None) -> IOSpec:
    """The IOSpec of splits: integer labels (N,) are classes ("logits", d_out = classes),
    float targets a regression ("regression", d_out = values per sample)."""
    x, y = splits["train"]
    shape = tuple(int(s) for s in x.shape[1:])
    d_in = math.prod(shape)
    if not y.is_floating_point():
        if y.ndim != 1:
            raise UserError(f"integer targets must be class labels of shape (N,), got {tuple(y.shape)}")
        seen = 1 + int(max(int(t[1].max()) for t in splits.values()))
        classes = num_classes or seen
        if classes < seen or int(min(int(t[1].min()) for t in splits.values())) < 0:
            raise UserError(f"class labels must lie in 0..{classes - 1}")
        return IOSpec(d_in, classes, "logits", None, shape, classes)
    return IOSpec(d_in, math.prod(int(s) for s in y.shape[1:]), "regression", None, shape)


class ArrayData:
    """A user task's splits on a device: the TaskData the supervised trainer reads."""

    def __init__(
        self, task: OwnTask, splits: dict[str, tuple[torch.Tensor, torch.Tensor]], device: torch.device
    ) -> None:
        self.task, self.device = task, torch.device(device)
        self.x = {k: v[0].to(self.device) for k, v in splits.items()}
        self.y = {k: v[1].to(self.device) for k, v in splits.items()}

    @property
    def n_train(self) -> int:
        return len(self.x["train"])

    def size(self, split: str) -> int:
        return len(self.x[split])

    def split(self, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, y) of a split on the device."""
        return self.x[name], self.y[name]

    def train_batch(self, idx: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x["train"][idx], self.y["train"][idx]

    def evaluate(self, model: Callable[[torch.Tensor], torch.Tensor], split: str) -> dict[str, float]:
        """Every declared metric over the whole split (forward passes of EVAL_BATCH samples)."""
        x, y = self.x[split], self.y[split]
        pred = torch.cat([model(x[i : i + EVAL_BATCH]) for i in range(0, len(x), EVAL_BATCH)])
        return self.task.split_metrics(pred, y)


class OwnTask(Task):
    """What both kinds of a user's task share: declared metrics with their directions,
    where the task comes from (`origin`), its data (splits or a function returning them)."""

    origin: ClassVar[str] = "module __main__"
    declared: ClassVar[dict[str, Metric]] = {}
    source: ClassVar[Any] = None  # splits, a function returning them, or None (FunctionTask)
    num_classes: ClassVar[int | None] = None
    loss_fn: ClassVar[Callable[..., Any] | str | None] = None
    data_note = "the user's own (a plugin's arrays)"

    @property
    def owner(self) -> str:
        return f"task {self.name!r} ({self.origin})"

    def splits(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """The checked splits (a function is called once per process and cached)."""
        cls = type(self)
        cached = cls.__dict__.get("_splits")
        if cached is None:
            raw = self.source() if callable(self.source) else self.source
            cached = check_splits(raw, self.owner)
            cls._splits = cached  # type: ignore[attr-defined]
        return cached

    def split_metrics(self, pred: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
        values = {}
        for name, m in self.declared.items():
            fn = m.fn or BUILT_IN_METRICS[name][1]
            v = self.loss(pred, y) if fn is None else fn(pred, y)
            values[name] = float(v.detach().double()) if isinstance(v, torch.Tensor) else float(v)
        return values

    def loss(self, pred: Any, target: Any) -> Any:
        fn = self.loss_fn
        if fn is None:
            fn = "cross_entropy" if self.io().output == "logits" else "mse"
        return (LOSSES[fn] if isinstance(fn, str) else fn)(pred, target)


class ArrayTask(OwnTask):
    """A user's task from arrays: the product's supervised trainer trains it."""

    def io(self) -> IOSpec:
        return io_of(self.splits(), self.num_classes)

    def load(self, data_dir: str | None, device: Any) -> ArrayData:
        return ArrayData(self, self.splits(), torch.device(device))


@dataclass
class TrainingSettings:
    """What a user's training function gets beside the model: the trial's configuration
    and seed, the resolved training settings, the device, and the task's data (the splits
    on the device, or None when the task has none)."""

    config: dict[str, Any]
    seed: int
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    device: torch.device
    max_train_samples: int | None = None
    data: ArrayData | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class FunctionTask(OwnTask):
    """A user's task with its own training function `train(model, settings, report)`."""

    trainer = "function"
    train_fn: ClassVar[Callable[..., Any]]
    io_spec: ClassVar[IOSpec | None] = None

    def io(self) -> IOSpec:
        if self.io_spec is not None:
            return self.io_spec
        return io_of(self.splits(), self.num_classes)

    def load(self, data_dir: str | None, device: Any) -> ArrayData | None:
        if self.source is None:
            return None
        return ArrayData(self, self.splits(), torch.device(device))


def _reported(task: FunctionTask, epoch: Any, metrics: Any) -> tuple[int, dict[str, float]]:
    """A report's epoch and metrics, checked against the task's declared metrics."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise PluginError(f"{task.owner}: report(epoch, metrics) needs an epoch >= 1, got {epoch!r}")
    if not isinstance(metrics, dict) or not metrics:
        raise PluginError(f"{task.owner}: report(epoch, metrics) needs a dict of metrics, got {metrics!r}")
    undeclared = sorted(set(metrics) - set(task.declared))
    if undeclared:
        raise PluginError(
            f"{task.owner}: reported metric {', '.join(map(repr, undeclared))} that the task did not "
            f"declare (declared: {', '.join(task.declared)})"
        )
    if task.metric not in metrics:
        raise PluginError(f"{task.owner}: every report needs the task's metric {task.metric!r}")
    return epoch, {k: float(v) for k, v in metrics.items()}


def run_function(
    spec: Any,
    task: FunctionTask,
    data: Any,
    seed: int,
    index: int,
    on_epoch: Any,
    run: RunLog,
    model: torch.nn.Module,
    hyper: Hyper,
    device: torch.device,
) -> Any:
    """One seed of a FunctionTask: the user's function trains `model`; each report is an
    epoch record (told to `on_epoch`: progress, the pruner); its return, the test metrics."""
    from core.trials import EpochRecord

    best = BestValidation(task)

    def report(epoch: int, metrics: dict[str, float]) -> None:
        epoch, values = _reported(task, epoch, metrics)
        record = EpochRecord(epoch, float("nan"), values, run.elapsed())
        run.epochs.append(record)
        best.observe(model, record, index, on_epoch)

    settings = TrainingSettings(
        dict(spec.config),
        seed,
        hyper.epochs,
        hyper.batch_size,
        hyper.lr,
        hyper.weight_decay,
        device,
        hyper.max_train_samples,
        data,
    )
    out = task.train_fn(model, settings, report)
    if not run.epochs:
        raise PluginError(f"{task.owner}: the training function returned without calling report(epoch, metrics)")
    if not isinstance(out, dict) or task.metric not in out:
        raise PluginError(
            f"{task.owner}: the training function must return its test metrics as a dict with "
            f"{task.metric!r}, got {out!r}"[:300]
        )
    undeclared = sorted(set(out) - set(task.declared))
    if undeclared:
        raise PluginError(
            f"{task.owner}: the training function returned metric {', '.join(map(repr, undeclared))} "
            f"that the task did not declare"
        )
    test = {k: float(v) for k, v in out.items()}
    chosen = best.record or run.epochs[-1]
    metrics = {**test, **{f"val_{k}": v for k, v in chosen.metrics.items()}}
    if not math.isfinite(test[task.metric]):
        return run.result("diverged", f"test {task.metric} is not finite")
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return run.result("complete", metrics=metrics, best_epoch=chosen.epoch, best_state=state)


@TRAINERS.register("function")
@guarded_trainer
def _train_function(spec: Any, task: FunctionTask, data: Any, seed: int, index: int, on_epoch: Any, run: RunLog) -> Any:
    """One seed of a task with its own training function (`FunctionTask`)."""
    import models

    hyper = Hyper.resolve(spec, task)
    torch.manual_seed(seed)
    device = data.device if data is not None else _device(spec)
    model = models.get_family(spec.family).build(spec.config, task.io(), seed=seed).to(device)
    return run_function(spec, task, data, seed, index, on_epoch, run, model, hyper, device)


def _device(spec: Any) -> torch.device:
    from tasks.loading import resolve_device

    return resolve_device(spec.train.device)


def own_defaults(epochs: int, batch_size: int, lr: float, weight_decay: float) -> TrainDefaults:
    """A user's task's default training settings, checked."""
    for name, v, ok in (
        ("epochs", epochs, isinstance(epochs, int) and epochs >= 1),
        ("batch_size", batch_size, isinstance(batch_size, int) and batch_size >= 2),
        ("lr", lr, isinstance(lr, (int, float)) and lr > 0),
        ("weight_decay", weight_decay, isinstance(weight_decay, (int, float)) and weight_decay >= 0),
    ):
        if isinstance(v, bool) or not ok:
            raise UserError(f"{name} {v!r} is not valid")
    return TrainDefaults(epochs=epochs, batch_size=batch_size, lr=float(lr), weight_decay=float(weight_decay))
