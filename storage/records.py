"""Plain records returned by the storage layer (no SQLAlchemy objects leak out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple


@dataclass
class StudyRecord:
    name: str
    task: str
    families: list[str]
    metric: str  # primary metric name, e.g. "psnr"
    direction: str  # "maximize" | "minimize"
    budget: int  # hard upper bound on the budgeted parameter count
    settings: dict[str, Any] = field(default_factory=dict)  # sampler, seed, epochs, repeats, ...
    created_at: datetime | None = None


@dataclass
class StudySummary:
    name: str
    task: str
    families: list[str]
    metric: str
    direction: str
    budget: int
    n_complete: int
    n_failed: int  # failed + diverged
    n_running: int
    n_rejected: int
    best: float | None  # best mean primary metric over complete trials
    n_pruned: int = 0  # stopped early by the pruner (finished, never complete)


@dataclass(frozen=True)
class StudyVersion:
    """What changes whenever anything a study's pages show changes (`Store.study_versions`)."""

    version: str  # equal strings: nothing shown has changed
    changed_at: datetime | None  # the latest time stored for the study (creation, a trial's start or end)


class ObjectiveRow(NamedTuple):
    """What `Store.objectives` gives of a trial: enough to draw its family's front
    (`search run --keep pareto`) without reading every metric."""

    number: int
    params: int
    objective: float  # the study metric's mean over the trial's runs; NaN when missing


class ConfigurationRow(NamedTuple):
    """What `Store.configurations` gives of a trial: what groups it with the trials of
    the same configuration (its seed checks), and how much its objective weighs there."""

    number: int
    runs: int  # how many seeds the trial trained
    config: dict[str, Any]


@dataclass
class TrialRecord:
    number: int
    family: str
    config: dict[str, Any]
    params: int
    status: str
    seeds: list[int]
    metrics: dict[str, tuple[float, float | None, int]]  # name -> (mean, std|None, n_runs)
    optuna: dict[str, Any] | None = None  # {"params": {...}, "distributions": {name: json}}
    note: str | None = None  # e.g. why rejected
    error: str | None = None
    traceback: str | None = None
    device: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_s: float | None = None
    owner: str | None = None  # "host:pid:token" of the process running it
    heartbeat_at: datetime | None = None
    attempt: int = 0  # 0 for a first run, k for its k-th retry
    retry_of: int | None = None  # the trial number this one retries


@dataclass
class RetrainingRecord:
    """One retraining of a trial (`search train`): its settings (epochs, seeds, recipe,
    training settings), status, aggregated test metrics (name -> (mean, std|None, n)) and
    runs: dicts with repeat, seed, status, best_epoch, epochs (how many were trained),
    metrics, duration_s, error and artifacts (as `Store.artifacts` gives them)."""

    trial: int  # the trial's number
    number: int  # 1, 2, ... per trial
    status: str
    settings: dict[str, Any]
    metrics: dict[str, tuple[float | None, float | None, int]]
    runs: list[dict[str, Any]] = field(default_factory=list)
    device: str | None = None
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_s: float | None = None

    @property
    def epochs(self) -> int | None:
        """The epochs it was asked to train."""
        return self.settings.get("epochs")
