"""In-memory stand-ins for the study loop's unit tests: a `StudyStore`, an executor that
returns canned results, and a progress sink that records what it was told."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from core.errors import StorageError
from core.statuses import FINISHED_STATUSES
from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.executors.base import Executor
from storage.records import ConfigurationRow, ObjectiveRow, StudyRecord, TrialRecord
from storage.trial_writes import INTERRUPTED_NOTE


class MemoryStore:
    """The `StudyStore` protocol over dicts, with the same numbering, status and
    supersession rules as `storage.Store` (checked against it by the loop's tests)."""

    def __init__(self) -> None:
        self.studies: dict[str, StudyRecord] = {}
        self.rows: dict[str, list[TrialRecord]] = {}
        self.beats: list[tuple[str, list[int], str]] = []
        self._epochs: dict[tuple[str, int], list[dict]] = {}

    def _trials(self, study: str) -> list[TrialRecord]:
        if study not in self.studies:
            raise StorageError(f"no study named {study!r}")
        return self.rows[study]

    def create_or_load_study(self, name, *, task, families, metric, direction, budget, settings=None):
        if name not in self.studies:
            self.studies[name] = StudyRecord(name, task, list(families), metric, direction, budget, settings or {})
            self.rows[name] = []
        return self.studies[name]

    def interrupt_running(self, study, orphan=None):
        hit = [t for t in self._trials(study) if t.status == "running" and (orphan is None or orphan(t))]
        for t in hit:
            t.status, t.note = "interrupted", INTERRUPTED_NOTE
        return [dataclasses.replace(t) for t in hit]

    def trials(self, study, statuses=None):
        return [dataclasses.replace(t) for t in self._trials(study) if statuses is None or t.status in statuses]

    def _retried(self, study: str) -> set[int]:
        return {t.retry_of for t in self._trials(study) if t.retry_of is not None}

    def retry_candidates(self, study, statuses, max_attempt):
        statuses, retried = set(statuses), self._retried(study)
        return [
            dataclasses.replace(t)
            for t in self._trials(study)
            if t.status in statuses and t.attempt < max_attempt and t.number not in retried
        ]

    def progress(self, study, without_note=None):
        retried = self._retried(study)
        rows = [t for t in self._trials(study) if without_note is None or without_note not in (t.note or "")]
        final = sum(t.status in FINISHED_STATUSES and t.number not in retried for t in rows)
        return final, sum(t.status == "running" for t in rows)

    def add_trial(
        self,
        study,
        *,
        family,
        config,
        params,
        seeds,
        status="running",
        optuna=None,
        note=None,
        owner=None,
        attempt=0,
        retry_of=None,
    ):
        rows = self._trials(study)
        now = datetime.now(UTC)
        rows.append(
            TrialRecord(
                len(rows),
                family,
                dict(config),
                int(params),
                status,
                list(seeds),
                {},
                optuna,
                note,
                owner=owner,
                heartbeat_at=now if owner else None,
                attempt=attempt,
                retry_of=retry_of,
            )
        )
        return len(rows) - 1

    def add_rejected(self, study, *, family, config, params, reason):
        return self.add_trial(
            study, family=family, config=config, params=params, seeds=[], status="rejected", note=reason
        )

    def finish_trial(self, study, number, result: TrialResult):
        t = self._trials(study)[number]
        t.status, t.error, t.duration_s = result.status, result.error, result.duration_s
        t.metrics = result.aggregate()
        self._epochs[(study, number)] = [
            {
                "repeat": i,
                "seed": r.seed,
                "epoch": e.epoch,
                "train_loss": e.train_loss,
                **e.metrics,
                "elapsed_s": e.elapsed_s,
            }
            for i, r in enumerate(result.runs)
            for e in r.epochs
        ]

    def epochs_of(self, study, statuses, repeat=None):
        out = {}
        for t in self._trials(study):
            rows = [r for r in self._epochs.get((study, t.number), []) if repeat is None or r["repeat"] == repeat]
            if t.status in statuses and rows:
                out[t.number] = rows
        return out

    def objectives(self, study, family, statuses):
        metric = self.studies[study].metric
        return [
            ObjectiveRow(
                t.number,
                t.params,
                math.nan if t.metrics.get(metric, (None,))[0] is None else float(t.metrics[metric][0]),
            )
            for t in self._trials(study)
            if t.family == family and t.status in statuses
        ]

    def configurations(self, study, family, statuses, sizes):
        sizes = set(sizes)
        return [
            ConfigurationRow(t.number, len(t.seeds) or 1, t.config)
            for t in self._trials(study)
            if t.family == family and t.status in statuses and t.params in sizes
        ]

    def remove_artifacts(self, study, numbers, name):
        return []  # no artifacts are kept here (no url: the loop keeps no weights)

    def interrupt_trials(self, study, numbers: Iterable[int]):
        for n in numbers:
            t = self._trials(study)[n]
            if t.status == "running":
                t.status = "interrupted"

    def heartbeat(self, study, numbers, owner):
        self.beats.append((study, list(numbers), owner))

    def statuses(self, study: str) -> list[str]:
        return [t.status for t in self._trials(study)]


def complete(spec: TrialSpec, value: float, metric: str = "psnr") -> TrialResult:
    """A complete one-run result with validation and test values `value`."""
    run = RunResult(
        spec.seeds[0],
        "complete",
        {metric: value, f"val_{metric}": value},
        1,
        [EpochRecord(1, 0.1, {metric: value}, 0.01)],
        0.01,
    )
    return TrialResult(spec.number, "complete", [run], 0.01, "cpu")


def failed(spec: TrialSpec, error: str = "RuntimeError: boom") -> TrialResult:
    return TrialResult(spec.number, "failed", [], 0.01, "cpu", error=error)


class ScriptedExecutor(Executor):
    """Runs nothing: `outcome(spec)` gives each submitted trial's result (or raises, as a
    Ctrl-C inside `wait` would). `capacity` trials may be in flight."""

    def __init__(self, outcome: Callable[[TrialSpec], TrialResult], capacity: int = 1) -> None:
        self.outcome, self.capacity = outcome, capacity
        self.submitted: list[TrialSpec] = []
        self._queue: list[TrialSpec] = []
        self.closed = False

    def submit(self, spec: TrialSpec) -> None:
        self.submitted.append(spec)
        self._queue.append(spec)

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        spec = self._queue[0]
        result = self.outcome(spec)  # may raise: then the trial stays in flight
        self._queue.pop(0)
        return [(spec, result)]

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def close(self) -> None:
        self.closed = True


class CurveExecutor(ScriptedExecutor):
    """Trains nothing but walks each trial through the epochs of `curve(spec)` (its
    validation values), calling `on_epoch` after each as the trainers do; a TrialStopped
    there ends the trial `pruned` with the epochs so far and the reason, else it is
    complete with the last value. Set `on_epoch` to the loop's (`StudyLoop.on_epoch`)."""

    def __init__(self, curve: Callable[[TrialSpec], list[float]], metric: str = "psnr") -> None:
        super().__init__(self._walk)
        self.curve, self.metric = curve, metric
        self.on_epoch: Callable[[TrialSpec, int, EpochRecord], None] | None = None

    def _walk(self, spec: TrialSpec) -> TrialResult:
        from core.trials import TrialStopped

        epochs: list[EpochRecord] = []
        for e, v in enumerate(self.curve(spec), start=1):
            epochs.append(EpochRecord(e, 0.1, {self.metric: v}, 0.01 * e))
            try:
                if self.on_epoch is not None:
                    self.on_epoch(spec, 0, epochs[-1])
            except TrialStopped as stop:
                run = RunResult(spec.seeds[0], "pruned", {}, None, epochs, 0.01 * e, error=str(stop))
                return TrialResult(spec.number, "pruned", [run], 0.01 * e, "cpu", error=str(stop))
        v = epochs[-1].metrics[self.metric]
        run = RunResult(
            spec.seeds[0],
            "complete",
            {self.metric: v, f"val_{self.metric}": v},
            len(epochs),
            epochs,
            0.01 * len(epochs),
        )
        return TrialResult(spec.number, "complete", [run], run.duration_s, "cpu")


class RecordingProgress:
    """The `Progress` protocol, recording the calls by name."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def start(self, study, total, done, retries):
        self.calls.append(("start", (total, done, retries)))

    def trial_started(self, spec, params, note):
        self.calls.append(("trial_started", spec.number))

    def epoch(self, spec, repeat, record):
        self.calls.append(("epoch", spec.number))

    def trial_finished(self, spec, params, result, finished):
        self.calls.append(("trial_finished", (spec.number, finished)))

    def rejected(self, rejection):
        self.calls.append(("rejected", rejection.reason))

    def close(self):
        self.calls.append(("close", None))

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]
