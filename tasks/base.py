"""The Task interface: data, io shapes, loss, metrics and default training settings.

A task is registered in `tasks.TASKS` under its CLI name. `io()` must be answerable
without loading any data (parameter counts and search spaces need it before training).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from core.directions import Direction
from core.errors import UserError
from core.io import IOSpec


@dataclass(frozen=True)
class TrainDefaults:
    """The task's default training hyper-parameters (the paper's where it gives them)."""

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float = 0.01
    warmup: float = 0.0  # fraction of the steps with a linear warm-up (supervised trainer; 0: none)
    optimizer: str = "adamw"  # tasks.optimizers.OPTIMIZERS (supervised trainer)


class Task(ABC):
    """One learning problem. Subclasses set the class attributes and implement io/load."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line, shown by `search tasks`
    metric: ClassVar[str]  # primary metric, e.g. "psnr" (test value at best validation)
    direction: ClassVar[Direction]  # of the primary metric
    metrics: ClassVar[tuple[str, ...]]  # every test metric reported, primary first
    defaults: ClassVar[TrainDefaults]
    trainer: ClassVar[str] = "supervised"  # key in tasks.by_name.TRAINERS
    # whether runs of any models pack without padding (tasks/fused_train.py, `--pack`): a
    # training batch's inputs are one tensor, so member k's model sees x[k]
    ragged_packs: ClassVar[bool] = True
    # The learning rates the spaces search on this task (their `lr` choice) where its paper
    # fixes another set than Chen et al.'s MNIST set (search.spaces.PAPER_LRS); a space
    # file's `lr` still wins. None: the spaces' own.
    search_lrs: ClassVar[tuple[float, ...] | None] = None
    # Options this class adds (name -> default); a task takes those of all its bases.
    own_options: ClassVar[dict[str, Any]] = {}
    # The data sets it reads: names in tasks/datasets/sources.py (`search data` lists them).
    # Empty: it reads no data files, and `data_note` says what it trains on instead.
    needs: ClassVar[tuple[str, ...]] = ()
    data_note: ClassVar[str] = "none: generated"

    def __init__(self, **options: Any) -> None:
        """Options (`--task-option k=v`) over the defaults; UserError for an unknown name
        or, from `_check_options`, a bad value."""
        defaults = self.option_defaults()
        unknown = sorted(set(options) - set(defaults))
        if unknown:
            known = ", ".join(sorted(defaults)) or "none"
            raise UserError(f"unknown option {unknown[0]!r} for task {self.name}; known: {known}")
        self.options: dict[str, Any] = {**defaults, **options}
        self._check_options()

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """Every option of the task with its default (merged over the class hierarchy)."""
        out: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            out.update(klass.__dict__.get("own_options", {}))
        return out

    def _check_options(self) -> None:
        """Raise UserError (one line) for a bad option value; subclasses extend it."""

    def data_sets(self) -> tuple[str, ...]:
        """The data sets this task (with its options) reads, preferred first: the first one
        found is read; when none is, the downloadable one is fetched. Default: `needs`."""
        return self.needs

    @abstractmethod
    def io(self) -> IOSpec:
        """The model's input/output shapes, known without loading data."""

    @abstractmethod
    def load(self, data_dir: str | None, device: Any) -> Any:
        """Load the data onto `device` (a TaskData); raise DataError with one line."""

    def loss(self, pred: Any, target: Any) -> Any:
        """The training loss of a batch (a scalar tensor). Default: mean squared error;
        classification tasks use cross-entropy on integer class labels."""
        import torch.nn.functional as F

        return F.mse_loss(pred, target)

    def member_losses(self, pred: Any, target: Any) -> Any:
        """Each member's training loss in a pack (tasks/fused_train.py): `pred` and `target`
        with a leading member axis (K, B, ...) -> (K,), member k's `loss(pred[k],
        target[k])`. The default mean squared error in one pass; another loss member by
        member, unless the task gives its own batched form."""
        import torch

        if type(self).loss is Task.loss:
            return (pred - target).square().flatten(1).mean(1)
        return torch.stack([self.loss(p, t) for p, t in zip(pred, target)])

    def after_run(self, model: Any, data: Any, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
        """Extra measurements of a finished run's kept (best-validation) model, in eval
        mode: (test metrics by name, artifacts by name -> {"media_type", "data" (base64)}).
        Default: none. The diffusion tasks generate samples here and score them."""
        return {}, {}
