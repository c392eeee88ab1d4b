"""The Task interface: data, io shapes, loss, metrics and default training settings.

A task is registered in `tasks.TASKS` under its CLI name. `io()` must be answerable
without loading any data (parameter counts and search spaces need it before training).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from search.errors import UserError

Direction = Literal["maximize", "minimize"]


@dataclass(frozen=True)
class IOSpec:
    """Shapes a model must map between.

    d_in/d_out: flattened input and output sizes. `output` tells the model's head:
    "image" -> sigmoid outputs in [0, 1] (the MLP paper's image tasks), "logits" ->
    raw class scores, "regression" -> raw values, "lm" -> next-token logits of a language
    model (input: token ids of shape (B, T); d_in = d_out = vocabulary size;
    input_shape = (context length,)). `image_shape` is (C, H, W) of the target image when
    the output is an image, `input_shape` the shape of one input, e.g. (C, H, W) for
    images a model patchifies.

    "noise" -> a class-conditional diffusion denoiser (epsilon prediction), called as
    `model(x_t, t, y)`: noisy images x_t (B, C, H, W) in the [-1, 1] data scale,
    timesteps t (B,) float in [0, T), class labels y (B,) int64 in [0, num_classes]
    where the value `num_classes` means "no class" (classifier-free guidance); it
    returns the predicted noise (B, C, H, W). image_shape = input_shape = (C, H, W),
    d_in = d_out = C*H*W.
    """

    d_in: int
    d_out: int
    output: Literal["image", "logits", "regression", "lm", "noise"] = "image"
    image_shape: tuple[int, int, int] | None = None
    input_shape: tuple[int, ...] | None = None
    num_classes: int | None = None  # class-conditional models ("noise"): labels 0..num_classes-1


@dataclass(frozen=True)
class TrainDefaults:
    """The task's default training hyper-parameters (the paper's where it gives them)."""

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float = 0.01
    warmup: float = 0.0  # fraction of the steps with a linear warm-up (supervised trainer; 0: none)


class Task(ABC):
    """One learning problem. Subclasses set the class attributes and implement io/load."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line, shown by `search tasks`
    metric: ClassVar[str]  # primary metric, e.g. "psnr" (test value at best validation)
    direction: ClassVar[Direction]  # of the primary metric
    metrics: ClassVar[tuple[str, ...]]  # every test metric reported, primary first
    defaults: ClassVar[TrainDefaults]
    trainer: ClassVar[str] = "supervised"  # key in tasks.registry.TRAINERS
    # Options this class adds (name -> default); a task takes those of all its bases.
    own_options: ClassVar[dict[str, Any]] = {}

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

    def after_run(self, model: Any, data: Any, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
        """Extra measurements of a finished run's kept (best-validation) model, in eval
        mode: (test metrics by name, artifacts by name -> {"media_type", "data" (base64)}).
        Default: none. The diffusion tasks generate samples here and score them."""
        return {}, {}
