"""Typed, serialisable descriptions of trials and their results (every layer shares them).

Data flows one way: CLI -> RunSpec -> study -> TrialSpec -> executor -> train ->
TrialResult -> storage -> reports. A `TrialSpec` describes a trial completely (family,
config, task, training hyper-parameters, seeds), so any worker anywhere can run it and
the database can replay it. Everything here round-trips through `to_dict`/`from_dict`
(plain JSON types only).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from core.errors import UserError
from core.statuses import FinishedStatus

# A config's searched training hyper-parameters (the trainers read config["lr"] and
# config["weight_decay"] first: tasks/train.py, tasks/lm_train.py). They never change the
# model, so a parameter count never depends on them (search/spaces/sizing.py relies on it).
TRAINING_KEYS = ("lr", "weight_decay")


@dataclass(frozen=True)
class TrainSettings:
    """Training hyper-parameters shared by every trial of a study.

    `None` means "the task's default". The learning rate is part of the searched
    config (key `lr`) when the space searches it; otherwise `lr` here is used.
    """

    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    weight_decay: float | None = None
    device: str = "auto"  # "auto" -> cuda when available, else cpu
    max_train_samples: int | None = None  # smoke runs: cap the training set
    tokens: int | None = None  # token budget per run (language-model tasks)
    batch_size_halved: bool = False  # set on the out-of-memory retry of a trial
    optimizer: str | None = None  # tasks.optimizers.OPTIMIZERS (supervised tasks); None: the task's
    # An exponential moving average of the weights (`--ema DECAY`, supervised tasks): its
    # decay per optimiser step, 0 = off; validation, the kept state and the test metrics
    # are the average's (tasks/train.py: WeightAverage). `ema_warmup`: the decay of update
    # n is min(ema, (1 + n) / (10 + n)) (`--ema-warmup`).
    ema: float = 0.0
    ema_warmup: bool = False
    # `--compile MODE`: train through torch.compile(model, mode=MODE) (COMPILE_MODES); None:
    # eager. Validation and test run the uncompiled model. On a GPU, reduce-overhead (CUDA
    # graphs) is what pays for small models, whose steps are kernel launches (docs/benchmarks.md,
    # GPU figures).
    compile: str | None = None
    # `--fuse on|off`: a trial's seeds (`--repeats`) train as one batched program where the
    # family fuses (tasks/fused_train.py); off: one seed after another.
    fuse: bool = True

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainSettings:
        return cls(**d)


def check_ema(decay: Any, warmup: Any = False) -> float:
    """The decay of `--ema` as a float, or UserError (one line): a number in [0, 1), 0
    meaning off; `--ema-warmup` only with a decay. The one home of the rule (`RunSpec`,
    the trainer)."""
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0 <= decay < 1:
        raise UserError(f"--ema must be a decay in [0, 1) (0: off, e.g. 0.9999), got {decay!r}")
    if warmup and decay == 0:
        raise UserError("--ema-warmup needs --ema DECAY above 0")
    return float(decay)


COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")  # torch.compile's


def check_compile(mode: Any) -> str | None:
    """`--compile`'s mode, or UserError (one line): one of torch.compile's COMPILE_MODES, or None."""
    if mode is not None and mode not in COMPILE_MODES:
        raise UserError(f"--compile must be one of {', '.join(COMPILE_MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class TrialSpec:
    """Everything needed to run one trial, anywhere."""

    study: str
    number: int
    family: str
    config: dict[str, Any]  # the family's config keys (e.g. d_z, d_h, L, fixed_w_in, lr)
    task: str
    seeds: tuple[int, ...]  # one run per seed (repeats)
    train: TrainSettings = field(default_factory=TrainSettings)
    data_dir: str | None = None
    task_options: dict[str, Any] = field(default_factory=dict)
    # The artifact store (a folder, s3://bucket/prefix or gs://bucket/prefix) the process that trains writes
    # each complete run's weights to (search/artifacts/); None: no weights are kept.
    weights: str | None = None
    # The plugins (module names, absolute .py paths) a worker loads before it builds the
    # family and the task (search/plugins/discovery.py: `worker_sources`); () for built-ins.
    plugins: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["seeds"] = list(self.seeds)
        d["plugins"] = list(self.plugins)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialSpec:
        d = dict(d)
        d["seeds"] = tuple(d["seeds"])
        d["plugins"] = tuple(d.get("plugins") or ())
        d["train"] = TrainSettings.from_dict(d.get("train") or {})
        return cls(**d)


class TrialStopped(Exception):
    """Raised by an on_epoch callback to stop the trial after that epoch: the run ends as
    `pruned` with the epochs it trained (the message is the reason), and no more seeds
    of the trial run."""


@dataclass
class EpochRecord:
    """Metrics after one epoch of one run. `metrics` holds validation metrics by name."""

    epoch: int  # 1-based
    train_loss: float
    metrics: dict[str, float]
    elapsed_s: float  # since the run started


@dataclass
class RunResult:
    """One seed of one trial."""

    seed: int
    status: FinishedStatus
    metrics: dict[str, float]  # test metrics at the best-validation epoch + val_* at that epoch
    best_epoch: int | None
    epochs: list[EpochRecord]
    duration_s: float
    error: str | None = None
    # Files a run produced, by name -> {"media_type": ..., "data": base64 text}, e.g. the
    # grid of generated samples of a diffusion run ("samples": an image/png).
    # A file kept in an artifact store instead (the model's weights, "weights"):
    # {"media_type", "store_key", "size", "sha256"} and no "data" (search/artifacts/).
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The state the metrics come from (name -> tensor, on the training device), set by the
    # trainer (`BestValidation.finish`) for `tasks.run_trial` to hand to its `keep` sink;
    # it never leaves run_trial and is not serialised.
    best_state: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(dataclasses.replace(self, best_state=None))
        del d["best_state"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        d = dict(d)
        d.pop("best_state", None)
        d["epochs"] = [EpochRecord(**e) for e in d["epochs"]]
        return cls(**d)


@dataclass
class TrialResult:
    """The outcome of one trial: its runs, aggregated."""

    number: int
    status: FinishedStatus
    runs: list[RunResult]
    duration_s: float
    device: str
    error: str | None = None
    traceback: str | None = None
    # The most GPU memory the trial's tensors took at once (torch.cuda.max_memory_allocated,
    # MiB) when it trained on a GPU; None on the CPU. Shown in the progress line, not stored.
    peak_gpu_mib: float | None = None

    @property
    def metrics(self) -> dict[str, float]:
        """Mean of each metric over the complete runs."""
        return {k: v[0] for k, v in self.aggregate().items()}

    def aggregate(self) -> dict[str, tuple[float, float | None, int]]:
        """metric -> (mean, sample std or None for one run, number of runs)."""
        done = [r for r in self.runs if r.status == "complete"]
        names: list[str] = []
        for r in done:
            names += [k for k in r.metrics if k not in names]
        out: dict[str, tuple[float, float | None, int]] = {}
        for k in names:
            vals = [float(r.metrics[k]) for r in done if k in r.metrics]
            n = len(vals)
            mean = sum(vals) / n
            std = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else None
            out[k] = (mean, std, n)
        return out

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(dataclasses.replace(self, runs=[]))
        return {**d, "runs": [r.to_dict() for r in self.runs]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialResult:
        d = dict(d)
        d["runs"] = [RunResult.from_dict(r) for r in d["runs"]]
        return cls(**d)
