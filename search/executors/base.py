"""The executor interface: where trials run.

The study driver submits `TrialSpec`s up to `capacity` at a time and collects
`TrialResult`s as they finish. The local executor runs one trial at a time in this
process; a Ray executor (a later issue) runs many on GPU workers behind the same calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from core.errors import MAX_ERROR_CHARS, one_line
from core.trials import EpochRecord, TrialResult, TrialSpec

EpochCallback = Callable[[TrialSpec, int, EpochRecord], None]


class Executor(ABC):
    """Where trials run: `submit` starts one, `poll` returns those finished; `capacity` says
    how many may be in flight at once. A name of `EXECUTORS` (`--executor`)."""

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

    def warm(self, spec: TrialSpec) -> None:
        """Prepare for trials like `spec` (its task's data, its plugins) where that saves
        the first trial's time: worker processes load them while the driver goes on. A
        no-op by default; never raises."""

    def close(self) -> None:
        """Release workers."""


def run_guarded(spec: TrialSpec, on_epoch=None) -> TrialResult:
    """Run one trial in this process; any exception becomes a `failed` result with its
    message and traceback (the study goes on). KeyboardInterrupt still stops the run.
    With `spec.weights`, this process writes each complete run's weights to that store
    (search/artifacts/weights.py) and only their records travel back in the result."""
    import time

    from search.executors.faults import inject

    t0 = time.monotonic()
    try:
        inject(spec)
        _load_plugins([spec])
        from tasks import run_trial  # imported lazily: torch start-up stays off the CLI's fast paths

        return run_trial(spec, on_epoch=on_epoch, keep=_weights_keep(spec))
    except Exception as e:
        return _failed(spec, t0, e)


def run_guarded_pack(specs: list[TrialSpec], on_epoch: EpochCallback | None = None) -> list[TrialResult]:
    """Several trials in this process, as `run_guarded` runs one: where they fuse they train
    as one pack (`tasks.run_trials`, `--pack K`). A trial that fails before training (a
    fault injected into it, say) fails alone; an exception outside the runs fails every
    trial still in the call with its message, as `run_guarded` fails its one."""
    if len(specs) == 1:
        return [run_guarded(specs[0], None if on_epoch is None else lambda i, r: on_epoch(specs[0], i, r))]
    import time

    from search.executors.faults import inject

    t0 = time.monotonic()
    results: dict[int, TrialResult] = {}
    for i, spec in enumerate(specs):
        try:
            inject(spec)
        except Exception as e:
            results[i] = _failed(spec, t0, e)
    rest = [i for i in range(len(specs)) if i not in results]
    try:
        _load_plugins([specs[i] for i in rest])
        from tasks import run_trials

        trained = run_trials([specs[i] for i in rest], on_epoch=on_epoch, keep=_weights_keep)
        results |= dict(zip(rest, trained))
    except Exception as e:
        results |= {i: _failed(specs[i], t0, e) for i in rest}
    return [results[i] for i in range(len(specs))]


def lost(spec: TrialSpec, error: str, started: float, device: str) -> TrialResult:
    """The `failed` result of a trial its executor lost (a dead or timed-out worker), with
    `error` cut to MAX_ERROR_CHARS and its time since `started` (time.monotonic)."""
    import time

    return TrialResult(spec.number, "failed", [], time.monotonic() - started, device, error=error[:MAX_ERROR_CHARS])


def _load_plugins(specs: list[TrialSpec]) -> None:
    """A worker learns the user's families and tasks (a no-op where they are known)."""
    from search.plugins import load_plugins

    for spec in specs:
        load_plugins(spec.plugins)


def _weights_keep(spec: TrialSpec):
    """Where this process writes the trial's weights (`spec.weights`), None for nowhere."""
    if spec.weights is None:
        return None
    from search.artifacts.weights import weights_sink

    return weights_sink(spec.weights)


def _failed(spec: TrialSpec, t0: float, e: Exception) -> TrialResult:
    """The `failed` result of a trial that raised `e` (call within its `except`: the
    traceback is the one being handled)."""
    import time
    import traceback

    return TrialResult(
        spec.number,
        "failed",
        [],
        time.monotonic() - t0,
        "unknown",
        error=one_line(e, with_type=True),
        traceback=traceback.format_exc(),
    )
