"""The executor interface: where trials run.

The study driver submits `TrialSpec`s up to `capacity` at a time and collects
`TrialResult`s as they finish. The local executor runs one trial at a time in this
process; a Ray executor (a later issue) runs many on GPU workers behind the same calls.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable

from core.errors import one_line
from core.trials import EpochRecord, TrialResult, TrialSpec

EpochCallback = Callable[[TrialSpec, int, EpochRecord], None]


class Executor(ABC):
    capacity: int = 1  # trials that may be in flight at once

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """Raise UserError for options this executor cannot take, without starting
        anything: `prepare` calls it before the database is touched."""

    @abstractmethod
    def submit(self, spec: TrialSpec) -> None:
        """Start (or queue) a trial."""

    @abstractmethod
    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """Block until at least one submitted trial finished; return the finished ones."""

    @property
    @abstractmethod
    def in_flight(self) -> int:
        """Submitted trials whose results were not yet returned by `wait`."""

    def close(self) -> None:
        """Release workers."""


def run_guarded(spec: TrialSpec, on_epoch=None) -> TrialResult:
    """Run one trial in this process; any exception becomes a `failed` result with its
    message and traceback (the study goes on). KeyboardInterrupt still stops the run.
    With `spec.weights`, this process writes each complete run's weights to that store
    (search/artifacts/weights.py) and only their records travel back in the result."""
    import time
    import traceback

    from search.executors.faults import inject

    t0 = time.monotonic()
    try:
        inject(spec)
        from search.plugins import load_plugins

        load_plugins(spec.plugins)  # a worker learns the user's families and tasks (no-op where known)
        from tasks import (
            run_trial,  # imported lazily: torch start-up stays off the CLI's fast paths
        )

        keep = None
        if spec.weights is not None:
            from search.artifacts.weights import weights_sink

            keep = weights_sink(spec.weights)
        return run_trial(spec, on_epoch=on_epoch, keep=keep)
    except Exception as e:
        return TrialResult(spec.number, "failed", [], time.monotonic() - t0, "unknown", error=one_line(e, with_type=True),
                           traceback=traceback.format_exc())
