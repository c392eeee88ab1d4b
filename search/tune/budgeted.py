"""The budgeted searcher a user's Tune script gets from `budgeted_searcher`
(search/tune/api.py, issue 29 item 2): the study as a Tune `Searcher` that reads a user's
trainable's reports as well as the product's trainable's, keeps its own heartbeats and
raises the study's errors through Tune's `fit()` (see api.py's docstring for what a
trainable reports and how each trial is stored)."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any

from core.errors import UserError
from core.trials import EpochRecord, RunResult, TrialResult
from search.engine.ownership import Heartbeat
from search.engine.study import StudyLoop
from search.tune.searcher import StudySearcher
from search.tune.trainable import is_epoch_report, is_final, record_of


class QuietProgress:
    """The study's `Progress` when the script gives none: Tune shows the trials."""

    def start(self, study, total, done, retries): ...
    def trial_started(self, spec, params, note): ...
    def epoch(self, spec, repeat, record): ...
    def trial_finished(self, spec, params, result, finished): ...
    def rejected(self, rejection): ...
    def close(self): ...


class BudgetedSearcher(StudySearcher):
    """The study as a Tune `Searcher` in a user's script (see the module docstring).

    Tune calls `suggest` (the study's next configuration, recorded `running`),
    `on_trial_result` (each report: the epochs are kept) and `on_trial_complete` (the
    trial stored, the proposer told). Unlike `search run --executor tune`, no driver
    wraps `Tuner.fit()`: this searcher refreshes its trials' heartbeats itself (a daemon
    thread, stopped when the study is done), and an error of the study (a database that
    refuses a write, a proposer that gives up) is raised from `suggest`, so that `fit()`
    raises it, after the trials in flight are marked `interrupted` (run again on resume).
    """

    def __init__(self, loop: StudyLoop, epochs: int | None = None) -> None:
        super().__init__(loop)
        task = loop.prep.task
        self.metric_name: str = task.metric  # what a trainable reports: tune.report({"psnr": ...})
        self.direction: str = task.direction
        self.epochs = epochs  # a trial that reported this many epochs is complete even if Tune stopped it
        self.reports: dict[str, list[dict[str, Any]]] = defaultdict(list)  # a user's trainable's reports
        self.seen: dict[str, Any] = {}  # the training_iteration of the last result Tune passed on
        self._beat: Heartbeat | None = None  # while trials of ours run

    @property
    def study(self) -> str:
        """The study's name in the database (`search trials STUDY`)."""
        return self.loop.name

    # -- what Tune asks ---------------------------------------------------------------
    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        if self.loop is None:
            raise UserError("this searcher was unpickled without its study: build it again with budgeted_searcher")
        out = super().suggest(trial_id)
        if self.error is not None:
            self._give_up()
        if isinstance(out, dict) and self._beat is None:
            loop = self.loop
            self._beat = Heartbeat(
                lambda numbers: loop.store.heartbeat(loop.name, numbers, loop.owner), lambda: list(loop.pending)
            )
        return out

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        tspec = self.specs.get(trial_id)
        if tspec is None or is_final(result):
            return
        self.seen[trial_id] = result.get("training_iteration")
        if is_epoch_report(result):  # the product's trainable
            self._epoch(trial_id, tspec, result)
        else:
            self.reports[trial_id].append(dict(result))

    def on_trial_complete(self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False) -> None:
        tspec = self.specs.get(trial_id)
        if tspec is None:
            return
        if error:
            self.errors.setdefault(
                trial_id,
                "the trainable raised, or its Ray worker died (Tune's error.txt in the trial's folder says which)",
            )
            super().on_trial_complete(trial_id, result, error)
        elif result is None:  # removed before it ran: interrupted, run again when the study resumes
            self._forget(trial_id)
            if self.loop.pending.pop(tspec.number, None) is not None:
                self.loop.store.interrupt_trials(self.loop.name, [tspec.number])
        elif is_final(result):
            super().on_trial_complete(trial_id, result, error)
        elif is_epoch_report(result):  # the product's trainable, stopped by Tune (a scheduler, a stopper)
            if result.get("training_iteration") != self.seen.get(trial_id):
                self._epoch(trial_id, tspec, result)
            self.stops[trial_id] = self._stop_reason(tspec, result)
            super().on_trial_complete(trial_id, result, error)
        else:  # a user's trainable
            outcome = self._user_result(trial_id, tspec.number, tspec.seeds[0], result)
            self._forget(trial_id)
            if self.error is None:
                self._blocked = False
                try:
                    self.loop.on_result(tspec, outcome)
                except BaseException as e:
                    self.error = e
        self.reports.pop(trial_id, None)
        self.seen.pop(trial_id, None)
        if not self.loop.pending:  # nothing of ours runs: no heartbeat to refresh until the next trial
            self.close()

    def _epoch(self, trial_id: str, tspec, result: dict[str, Any]) -> None:
        repeat, record = record_of(result)
        self.device[trial_id] = str(result.get("device", "unknown"))
        if isinstance(result.get("time_total_s"), (int, float)):
            self.worker_s[trial_id] = float(result["time_total_s"])
        if repeat == 0:
            self.first_seed[trial_id].append(record)
        self.loop.progress.epoch(tspec, repeat, record)

    def _stop_reason(self, tspec, result: dict[str, Any]) -> str:
        """Why the product's trainable ended `pruned` when Tune stopped it at `result`."""
        epoch, repeat = int(result["epoch"]), int(result["repeat"])
        epochs = tspec.train.epochs or self.loop.prep.task.defaults.epochs
        if epoch >= epochs and repeat >= len(tspec.seeds) - 1:
            return (
                f"stopped by Tune at its last epoch ({epoch}), before the trainable reported its test metrics: "
                f"a scheduler's max_t must exceed the epochs"
            )
        return f"stopped by Tune at epoch {epoch} of {epochs} (its scheduler or stopper)"

    def _forget(self, trial_id: str) -> None:
        for held in (
            self.specs,
            self.started,
            self.first_seed,
            self.device,
            self.worker_s,
            self.stops,
            self.errors,
            self.reports,
            self.seen,
        ):
            held.pop(trial_id, None)

    def _user_result(self, trial_id: str, number: int, seed: int, result: dict[str, Any]) -> TrialResult:
        """The `TrialResult` of a user's trainable from what it reported (see the module
        docstring: the metric by its name, once per epoch; `val_<metric>` optional)."""
        reports = list(self.reports.get(trial_id, []))
        stopped = result.get("training_iteration") != self.seen.get(trial_id)
        if stopped:  # the result Tune stopped the trial at never reached on_trial_result
            reports.append(dict(result))
        metric, val = self.metric_name, f"val_{self.metric_name}"
        names = [m for m in self.loop.prep.task.metrics]
        duration = _number(result.get("time_total_s"))
        if duration is None:
            duration = time.monotonic() - self.started.get(trial_id, time.monotonic())
        device = str(result.get("device", "unknown"))
        epochs = [
            EpochRecord(
                _epoch_of(r, i),
                _number(r.get("train_loss"), math.nan),
                {m: v for m in names if (v := _number(r.get(f"val_{m}", r.get(m)))) is not None},
                _number(r.get("time_total_s"), 0.0),
            )
            for i, r in enumerate(reports, 1)
        ]
        if not any(metric in r for r in reports):
            why = (
                f"the trainable reported no {metric!r}, the study's metric on {self.loop.spec.task}: "
                f"tune.report({{{metric!r}: value}}) after each epoch"
            )
            return TrialResult(number, "failed", [], duration, device, error=why)
        complete = not stopped or (self.epochs is not None and len(reports) >= self.epochs)
        if not complete:
            reason = (
                f"stopped by Tune at epoch {len(reports)}"
                + (f" of {self.epochs}" if self.epochs else "")
                + " (its scheduler or stopper)"
            )
            run = RunResult(seed, "pruned", {}, None, epochs, duration, error=reason)
            return TrialResult(number, "pruned", [run], duration, device, error=reason)
        scored = [(i, r) for i, r in enumerate(reports) if metric in r]
        ranked = [(i, r) for i, r in scored if _number(r.get(val)) is not None]
        if ranked:  # the best validation epoch, the earliest of equals
            sign = 1.0 if self.direction == "maximize" else -1.0
            best, chosen = max(ranked, key=lambda ir: (sign * float(ir[1][val]), -ir[0]))
        else:
            best, chosen = scored[-1]
        metrics = {k: v for m in names for k in (m, f"val_{m}") if (v := _number(chosen.get(k))) is not None}
        value = _number(chosen.get(metric), math.nan)
        status = "complete" if math.isfinite(value) else "diverged"
        error = None if status == "complete" else f"{metric} was {chosen.get(metric)!r} at epoch {best + 1}"
        run = RunResult(seed, status, metrics if status == "complete" else {}, best + 1, epochs, duration, error=error)
        return TrialResult(number, status, [run], duration, device, error=error)

    # -- the end -------------------------------------------------------------------------
    def _give_up(self) -> None:
        """The study failed on the driver's side: its trials in flight are interrupted (run
        again on resume) and the error goes up through Tune's `fit()`."""
        error = self.error
        assert error is not None
        try:
            left = list(self.loop.pending)
            if left:
                self.loop.store.interrupt_trials(self.loop.name, left)
                self.loop.pending.clear()
        finally:
            self.close()
        raise error

    def close(self) -> None:
        """Stop refreshing the heartbeats (the study is done, or given up)."""
        if self._beat is not None:
            self._beat.stop()
            self._beat = None

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), "_beat": None}


def _number(value: Any, default: float | None = None) -> float | None:
    """A reported scalar as a float (a finite or non-finite number), else `default`."""
    value = value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return float(value)


def _epoch_of(report: dict[str, Any], index: int) -> int:
    n = _number(report.get("training_iteration"))
    return int(n) if n is not None and n >= 1 else index
