"""The study as a Ray Tune `Searcher`: Tune asks, the study loop answers, the database
records.

`StudySearcher(loop)` wraps a started `StudyLoop` (search/engine/study.py). Tune calls
`suggest(trial_id)` whenever it has room for a trial; the searcher asks the loop for the
next job (a queued retry, else the proposer's next proposal: drawn within the budget,
aimed at a size, the families' turns, rejections stored on the way), records it
`running` in the database through `StudyLoop.submit` (owner, seeds, attempt) and returns
it as the trial's Tune config: `trial` (its number in the study), `family`, the
configuration's keys and `search_spec` (the whole `TrialSpec`, which the trainable
trains). It answers None while the study has as many trials finished and running as it
needs (a failure among those running may still earn a retry) and `Searcher.FINISHED`
once none is running either.

`on_trial_complete` stores the trial through `StudyLoop.on_result` (one transaction;
the proposer told; a retry queued when earned): the `TrialResult` the trainable sent in
its last report; a `pruned` one built from the epochs Tune saw when the study's
scheduler stopped it (search/tune/scheduler.py); a `failed` one when the trial errored
outside the trainer (its worker died). A trial Tune stopped for another reason (Ctrl-C,
an error in the driver) stays pending, and the driver marks it `interrupted`: the same
command resumes the study and runs it again.

With `--pack K` (K > 1) each `suggest` asks the loop for up to K jobs and returns them as
one Tune trial (`pack_config`), trained as one pack (search/tune/trainable.py). Every
epoch a pack reports names its trial and goes to the study as a lone trial's does; a
trial the pruner stops is posted to the epoch board, which the pack's worker reads after
that trial's next epoch (the pack, and Tune's trial, train on). The pack's last report
holds every trial's result, each stored as its own; a pack whose worker died fails its
trials (those the pruner had stopped are stored `pruned`).

The SQL database stays the truth: this searcher keeps no state of its own that a resumed
study would need (`save` writes a note saying so; `restore` refuses).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from dataclasses import replace
from typing import Any

from ray.tune.search import Searcher
from ray.tune.stopper import Stopper

from core.errors import MAX_ERROR_CHARS, UserError
from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec, TrialStopped
from search.engine.study import StudyLoop
from search.tune.trainable import MEMBER_KEY, PACK_KEY, PACK_RESULTS_KEY, RESULT_KEY, SPEC_KEY, is_final, record_of


class StudySearcher(Searcher):
    def __init__(self, loop: StudyLoop, pack: int = 1, board: Any = None) -> None:
        super().__init__(metric=None, mode=None)
        assert loop.out is not None and loop.executor is not None, "StudyLoop.start() first"
        assert pack == 1 or board is not None, "a pack's stops go through an epoch board"
        self.loop = loop
        self.pack = pack  # the study's trials per Tune trial (--pack K)
        self.board = board  # an EpochBoard actor (search/executors/ray.py) with packs
        self.packs: dict[str, list[TrialSpec]] = {}  # Tune trial id -> its pack's trials
        self.member_epochs: dict[int, list[EpochRecord]] = defaultdict(list)  # a pack's trial -> seed 0's epochs
        self.member_stops: dict[int, str] = {}  # a pack's trial -> why the pruner stopped it
        self.specs: dict[str, TrialSpec] = {}  # Tune trial id -> the study's trial
        self.started: dict[str, float] = {}
        self.first_seed: dict[str, list[EpochRecord]] = defaultdict(list)  # epochs of seed 0 seen
        self.device: dict[str, str] = {}
        self.worker_s: dict[str, float] = {}  # Tune's time_total_s of a trial's last epoch
        self.stops: dict[str, str] = {}  # trial id -> why the pruner stopped it
        self.errors: dict[str, str] = {}  # trial id -> the error Tune recorded
        self.error: BaseException | None = None  # an error in the driver: no new trial; re-raised after fit
        self._blocked = False  # next_job said "none now" and no trial has finished since

    # -- what Tune asks ---------------------------------------------------------------
    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        loop = self.loop
        assert loop.out is not None
        if self.error is not None:
            return Searcher.FINISHED
        if self._blocked and loop.pending:
            return None  # nothing changed since the study said "none now"
        tspecs: list[TrialSpec] = []
        try:
            while len(tspecs) < self.pack:
                job = None if loop.out.exhausted else loop.next_job()
                if job is None:
                    break
                tspecs.append(loop.submit(job))
                loop.executor.take()  # the hand-off StudyLoop.submit made (search/tune/executor.py)
        except BaseException as e:  # kept for the driver to raise once Tune has stopped
            self.error = e  # trials submitted on the way are pending: the driver interrupts them
            return Searcher.FINISHED
        if not tspecs:
            self._blocked = True
            return None if loop.pending else Searcher.FINISHED
        self.started[trial_id] = time.monotonic()
        if self.pack > 1:
            self.packs[trial_id] = tspecs
            return pack_config(tspecs)
        self.specs[trial_id] = tspecs[0]
        return tune_config(tspecs[0])

    def on_epoch(self, trial_id: str, report: dict[str, Any]) -> str | None:
        """An epoch a trial reported (the scheduler passes it): shown, kept, and judged by
        the study's pruner on the first seed; the reason when the trial is to stop (a
        pack's trial: None, its stop is posted on the board for the pack's worker)."""
        if trial_id in self.packs:
            return self._member_epoch(trial_id, report)
        tspec = self.specs.get(trial_id)
        if tspec is None or self.error is not None:
            return None
        repeat, record = record_of(report)
        self.device[trial_id] = str(report.get("device", "unknown"))
        if isinstance(report.get("time_total_s"), (int, float)):  # the trial's time in its worker so far
            self.worker_s[trial_id] = float(report["time_total_s"])
        if repeat == 0:
            self.first_seed[trial_id].append(record)
        try:
            self.loop.on_epoch(tspec, repeat, record)
        except TrialStopped as stop:
            self.stops[trial_id] = str(stop)
            return str(stop)
        except BaseException as e:
            self.error = e
        return None

    def _member_epoch(self, trial_id: str, report: dict[str, Any]) -> None:
        """An epoch of a pack's trial: as a lone trial's, but a stop goes on the board (the
        pack trains on); epochs it reports after its stop are not judged again."""
        tspec = next((t for t in self.packs[trial_id] if t.number == report.get(MEMBER_KEY)), None)
        if tspec is None or self.error is not None or tspec.number in self.member_stops:
            return None
        repeat, record = record_of(report)
        self.device[trial_id] = str(report.get("device", "unknown"))
        if isinstance(report.get("time_total_s"), (int, float)):
            self.worker_s[trial_id] = float(report["time_total_s"])
        if repeat == 0:
            self.member_epochs[tspec.number].append(record)
        try:
            self.loop.on_epoch(tspec, repeat, record)
        except TrialStopped as stop:
            self.member_stops[tspec.number] = str(stop)
            self.board.stop.remote(tspec.number, str(stop))
        except BaseException as e:
            self.error = e
        return None

    def note_error(self, trial_id: str, message: str) -> None:
        """The error Tune recorded for a trial (the scheduler hears of it first)."""
        self.errors[trial_id] = message

    def on_trial_complete(self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False) -> None:
        if trial_id in self.packs:
            return self._pack_complete(trial_id, result, error)
        tspec = self.specs.pop(trial_id, None)
        if tspec is None:
            return
        started = self.started.pop(trial_id, time.monotonic())
        epochs = self.first_seed.pop(trial_id, [])
        device = self.device.pop(trial_id, "unknown")
        worker_s = self.worker_s.pop(trial_id, None)
        stopped = self.stops.pop(trial_id, None)
        message = self.errors.pop(trial_id, None)
        if result is not None and is_final(result):
            outcome = TrialResult.from_dict(json.loads(result[RESULT_KEY]))
        elif stopped is not None:
            # its time as the trainer counts it (in the worker), not the driver's, which adds the worker's start
            duration = worker_s if worker_s is not None else time.monotonic() - started
            outcome = pruned_result(tspec, epochs, stopped, duration, device)
        elif error:
            why = message or "its Ray worker died or raised outside the trainer"
            outcome = TrialResult(
                tspec.number,
                "failed",
                [],
                time.monotonic() - started,
                device,
                error=f"Tune trial failed: {why}"[:MAX_ERROR_CHARS],
            )
        else:
            return  # stopped by Tune before it finished (Ctrl-C, a driver error): interrupted, run again
        if self.error is not None:
            return  # the study is stopping; the driver marks the trial interrupted
        self._blocked = False
        try:
            self.loop.on_result(tspec, outcome)
        except BaseException as e:
            self.error = e

    def _pack_complete(self, trial_id: str, result: dict[str, Any] | None, error: bool) -> None:
        """A pack's Tune trial ended: each of its trials stored as its own, from the pack's
        last report; a dead worker's trials failed (pruned where the pruner had stopped
        them); a pack Tune stopped (Ctrl-C) leaves them pending, to be interrupted."""
        members = self.packs.pop(trial_id)
        started = self.started.pop(trial_id, time.monotonic())
        device = self.device.pop(trial_id, "unknown")
        worker_s = self.worker_s.pop(trial_id, None)
        message = self.errors.pop(trial_id, None)
        epochs = {t.number: self.member_epochs.pop(t.number, []) for t in members}
        stops = {t.number: self.member_stops.pop(t.number, None) for t in members}
        if result is not None and PACK_RESULTS_KEY in result:
            outcomes = [TrialResult.from_dict(d) for d in json.loads(result[PACK_RESULTS_KEY])]
        elif error:
            duration = worker_s if worker_s is not None else time.monotonic() - started
            why = f"Tune trial failed: {message or 'its Ray worker died or raised outside the trainer'}"
            outcomes = [
                pruned_result(t, epochs[t.number], stop, duration, device)
                if (stop := stops[t.number]) is not None
                else TrialResult(t.number, "failed", [], duration, device, error=why[:MAX_ERROR_CHARS])
                for t in members
            ]
        else:
            return  # stopped by Tune before it finished (Ctrl-C, a driver error): interrupted, run again
        if self.error is not None:
            return
        self._blocked = False
        for tspec, outcome in zip(members, outcomes, strict=True):
            try:
                self.loop.on_result(tspec, outcome)
            except BaseException as e:
                self.error = e
                return

    # -- Tune's checkpoints: the database is the state ----------------------------------
    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "w") as f:
            json.dump(
                {
                    "study": self.loop.name,
                    "note": "the study's state is its database; run the same search run command again to resume",
                },
                f,
            )

    def restore(self, checkpoint_path: str) -> None:
        raise UserError("a study on Tune resumes from its database: run the same search run command again")

    def __getstate__(self) -> dict[str, Any]:
        """Tune pickles its config (tuner.pkl); the study loop (a database connection)
        stays out of it."""
        return {"_metric": None, "_mode": None, "loop": None}

    def stopper(self) -> StopOnError:
        return StopOnError(self)


class StopOnError(Stopper):
    """Stops every trial once the driver's side of the study failed (the database, a
    proposer giving up): Tune ends, the driver marks them interrupted and raises."""

    def __init__(self, searcher: StudySearcher) -> None:
        self.searcher = searcher

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return False

    def stop_all(self) -> bool:
        return getattr(self.searcher, "error", None) is not None


def tune_config(tspec: TrialSpec) -> dict[str, Any]:
    """A trial's Tune config: its number, family and configuration (Tune's tables,
    TensorBoard's hyper-parameters) and the spec the trainable trains. Paths are made
    absolute: Tune runs each trial in its own folder."""
    data_dir = os.path.abspath(tspec.data_dir) if tspec.data_dir else tspec.data_dir
    sent = replace(tspec, data_dir=data_dir)
    return {"trial": tspec.number, "family": tspec.family, **tspec.config, SPEC_KEY: json.dumps(sent.to_dict())}


def pack_config(tspecs: list[TrialSpec]) -> dict[str, Any]:
    """A pack's Tune config: its trials' numbers and families, and their specs (paths
    absolute, as `tune_config` makes them) for the trainable to train as one pack."""
    sent = [json.loads(tune_config(t)[SPEC_KEY]) for t in tspecs]
    return {
        "trial": tspecs[0].number,
        "trials": [t.number for t in tspecs],
        "families": sorted({t.family for t in tspecs}),
        PACK_KEY: json.dumps(sent),
    }


def pruned_result(
    tspec: TrialSpec, epochs: list[EpochRecord], reason: str, duration_s: float, device: str
) -> TrialResult:
    """What the trainer returns for a trial stopped after its last reported epoch
    (tasks/train.py: the first seed's run `pruned` with its epochs, no more seeds), built
    from the epochs Tune saw: the worker was stopped by Tune, not by its own on_epoch."""
    elapsed = epochs[-1].elapsed_s if epochs else duration_s
    run = RunResult(int(tspec.seeds[0]), "pruned", {}, None, list(epochs), elapsed, error=reason)
    return TrialResult(tspec.number, "pruned", [run], duration_s, device, error=reason)


def error_message(trial: Any) -> str | None:
    """The last line of the error Tune wrote for a trial (its error.txt), one line."""
    path = getattr(trial, "error_file", None)
    try:
        if path and os.path.exists(path):
            lines = [ln.strip() for ln in open(path).read().splitlines() if ln.strip()]
            if lines:
                text = " ".join(lines[-1].split())
                return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."
    except OSError:
        pass
    return None
