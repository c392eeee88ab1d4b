"""Trial writes: numbering new trials, storing results, interrupting, heartbeats, and
the counts the study loop steers by (progress, retry candidates)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, or_, select, update

from core.errors import StorageError
from core.statuses import FINISHED_STATUSES, TRIAL_STATUSES
from core.trials import RunResult, TrialResult
from storage.convert import dims, finite, jsonable, now_utc, trial_record
from storage.database import Database, _Conflict
from storage.records import TrialRecord
from storage.schema import Epoch, Run, RunArtifact, Study, Trial, TrialMetric
from storage.waiting import new_token, waits

INTERRUPTED_NOTE = "interrupted: the process running it stopped"
# Columns of a stored artifact besides its name (`RunResult.artifacts` values): inline
# `data`, or a file in an artifact store (store, store_key, size, sha256).
ARTIFACT_FIELDS = ("media_type", "data", "store", "store_key", "size", "sha256")
_NUMBER_ATTEMPTS = 20


class TrialWrites(Database):
    @waits(once={"token": new_token})
    def add_trial(
        self,
        study: str,
        *,
        family: str,
        config: dict[str, Any],
        params: int,
        seeds: Iterable[int],
        status: str = "running",
        optuna: dict[str, Any] | None = None,
        note: str | None = None,
        owner: str | None = None,
        attempt: int = 0,
        retry_of: int | None = None,
        token: str | None = None,
    ) -> int:
        """Insert a trial with the study's next free number (0-based) and return it.

        `owner` names the process that runs it (its heartbeat starts now); `retry_of`
        and `attempt` link a retry to the trial it repeats.

        Safe across processes: the (study, number) unique constraint refuses a
        duplicate and the insert is retried with a fresh number. Safe to retry: the row
        keeps `token` (one per call, made when not given), and a call whose token is
        stored already returns that trial's number instead of adding another.
        """
        if status not in TRIAL_STATUSES:
            raise StorageError(f"unknown trial status {status!r}; known: {', '.join(TRIAL_STATUSES)}")
        now = now_utc()
        values: dict[str, Any] = dict(
            family=family,
            status=status,
            params=int(params),
            config=jsonable(config),
            seeds=[int(x) for x in seeds],
            optuna=jsonable(optuna) if optuna is not None else None,
            note=note,
            started_at=now if status == "running" else None,
            owner=owner,
            heartbeat_at=now if owner else None,
            attempt=int(attempt),
            retry_of=retry_of,
            finished_at=now if status == "rejected" else None,
            token=token,
            **dims(config),
        )
        last: _Conflict | None = None
        for attempt in range(_NUMBER_ATTEMPTS):
            try:
                with self._session() as s:
                    study_id = self._study_id(s, study)
                    if token is not None:  # this call's row, committed by a try whose answer was lost
                        done = s.scalar(select(Trial.number).where(Trial.study_id == study_id, Trial.token == token))
                        if done is not None:
                            return int(done)
                    top = s.scalar(select(func.max(Trial.number)).where(Trial.study_id == study_id))
                    number = 0 if top is None else top + 1
                    s.add(Trial(study_id=study_id, number=number, **values))
                    s.flush()
                    return number
            except _Conflict as exc:
                last = exc
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise StorageError(f"could not number a new trial of study {study!r} after {_NUMBER_ATTEMPTS} tries: {last}")

    @waits(once={"token": new_token})
    def add_rejected(
        self, study: str, *, family: str, config: dict[str, Any], params: int, reason: str, token: str | None = None
    ) -> int:
        """Record a proposal that was never trained (e.g. over budget); returns its number."""
        return self.add_trial(
            study, family=family, config=config, params=params, seeds=[], status="rejected", note=reason, token=token
        )

    @waits()
    def finish_trial(self, study: str, number: int, result: TrialResult) -> None:
        """Store a trial's result, its metrics, runs and epochs in one transaction.

        Calling it again for the same trial replaces what the first call stored.
        """
        if result.status not in TRIAL_STATUSES:
            raise StorageError(f"unknown trial status {result.status!r}")
        aggregate = result.aggregate()
        with self._session() as s:
            found = s.execute(
                select(Trial, Study.metric)
                .join(Study, Study.id == Trial.study_id)
                .where(Study.name == study, Trial.number == number)
            ).first()
            if found is None:  # say which is missing
                self._trial(s, self._study(s, study), number)
            trial, metric = found
            if trial.finished_at is not None:  # finished before: replace what that call stored
                searched = (Run.trial_id == trial.id, Run.retraining == 0)  # its retrainings stay
                run_ids = select(Run.id).where(*searched)
                s.execute(delete(Epoch).where(Epoch.run_id.in_(run_ids)))
                s.execute(delete(RunArtifact).where(RunArtifact.run_id.in_(run_ids)))
                s.execute(delete(Run).where(*searched))
                s.execute(delete(TrialMetric).where(TrialMetric.trial_id == trial.id))
            trial.status = result.status
            trial.error = result.error
            trial.traceback = result.traceback
            trial.device = result.device
            trial.duration_s = finite(result.duration_s)
            trial.finished_at = now_utc()
            primary = aggregate.get(metric)
            trial.objective = finite(primary[0]) if primary else None
            s.add_all(
                TrialMetric(trial_id=trial.id, name=name, mean=finite(mean), std=finite(std), n=n)
                for name, (mean, std, n) in aggregate.items()
            )
            add_runs(s, trial.id, result.runs)

    @waits(once={"at": now_utc})
    def remove_artifacts(
        self, study: str, numbers: Iterable[int], name: str, at: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Mark the stored artifacts `name` of these trials removed (those not marked yet)
        and return what was marked: dicts with number, repeat, store, store_key. The caller
        deletes the files afterwards: a record never points at a file already gone. Of
        processes marking the same rows at once, each row is returned to one only.

        The rows are marked removed `at` (one time per call, made when not given): a retry
        of a call whose first try committed returns the rows that try marked."""
        numbers = sorted({int(n) for n in numbers})
        if not numbers:
            return []
        now = at or now_utc()
        with self._session() as s:
            study_id = self._study_id(s, study)
            rows = s.execute(
                select(
                    RunArtifact.id,
                    Trial.number,
                    Run.repeat,
                    RunArtifact.store,
                    RunArtifact.store_key,
                    RunArtifact.removed_at,
                )
                .join(Run, Run.id == RunArtifact.run_id)
                .join(Trial, Trial.id == Run.trial_id)
                .where(
                    Trial.study_id == study_id,
                    Trial.number.in_(numbers),
                    RunArtifact.name == name,
                    RunArtifact.store_key.is_not(None),
                    Run.retraining == 0,  # a retraining's files stay
                    RunArtifact.removed_at.is_(None) | (RunArtifact.removed_at == now),
                )
            ).all()
            out = []
            for artifact_id, number, repeat, store, key, removed_at in rows:
                if removed_at is not None:  # marked by this call's first try
                    out.append({"number": number, "repeat": repeat, "store": store, "store_key": key})
                    continue
                changed = s.execute(
                    update(RunArtifact)
                    .where(RunArtifact.id == artifact_id, RunArtifact.removed_at.is_(None))
                    .values(removed_at=now)
                    .execution_options(synchronize_session=False)
                ).rowcount
                if changed:
                    out.append({"number": number, "repeat": repeat, "store": store, "store_key": key})
            return out

    @waits()
    def interrupt_running(self, study: str, orphan: Callable[[TrialRecord], bool] | None = None) -> list[TrialRecord]:
        """Mark `running` trials of `study` interrupted and return them.

        With `orphan`, only the trials it says no live process runs any more (its owner
        died, or its heartbeat is stale); without it, every running trial.
        """
        with self._session() as s:
            study_id = self._study_id(s, study)
            trials = s.scalars(
                select(Trial).where(Trial.study_id == study_id, Trial.status == "running").order_by(Trial.number)
            ).all()
            hit = []
            for t in trials:
                if orphan is not None and not orphan(trial_record(t, {})):
                    continue
                # only if still running: its owner may have finished it since we read it
                changed = s.execute(
                    update(Trial)
                    .where(Trial.id == t.id, Trial.status == "running")
                    .values(status="interrupted", note=INTERRUPTED_NOTE)
                    .execution_options(synchronize_session=False)
                ).rowcount
                if changed:
                    s.refresh(t)
                    hit.append(t)
            return [trial_record(t, {}) for t in hit]

    @waits()
    def interrupt_trials(self, study: str, numbers: Iterable[int], note: str = INTERRUPTED_NOTE) -> None:
        """Mark these trials interrupted if they are still running (e.g. on Ctrl-C)."""
        self._update_running(study, numbers, {"status": "interrupted", "note": note})

    @waits()
    def heartbeat(self, study: str, numbers: Iterable[int], owner: str) -> None:
        """Refresh the heartbeat of the running trials `owner` runs."""
        self._update_running(study, numbers, {"heartbeat_at": now_utc()}, owner=owner)

    def _update_running(
        self, study: str, numbers: Iterable[int], values: dict[str, Any], owner: str | None = None
    ) -> None:
        """Set `values` on the trials among `numbers` that are still running (and run by
        `owner`, when given), in one UPDATE."""
        numbers = [int(n) for n in numbers]
        if not numbers:
            return
        with self._session() as s:
            study_id = self._study_id(s, study)
            where = [Trial.study_id == study_id, Trial.number.in_(numbers), Trial.status == "running"]
            if owner is not None:
                where.append(Trial.owner == owner)
            s.execute(update(Trial).where(*where).values(**values))

    @waits()
    def retry_candidates(self, study: str, statuses: Iterable[str], max_attempt: int) -> list[TrialRecord]:
        """Trials with one of `statuses`, `attempt < max_attempt` and no retry yet."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            retried = select(Trial.retry_of).where(Trial.study_id == study_id, Trial.retry_of.is_not(None))
            rows = s.scalars(
                select(Trial)
                .where(
                    Trial.study_id == study_id,
                    Trial.status.in_(list(statuses)),
                    Trial.attempt < max_attempt,
                    Trial.number.not_in(retried),
                )
                .order_by(Trial.number)
            ).all()
            return [trial_record(t, {}) for t in rows]

    @waits()
    def progress(self, study: str, without_note: str | None = None) -> tuple[int, int]:
        """(final, running): finished trials (complete/failed/diverged) that no retry
        supersedes, and trials running now, over every process of the study; with
        `without_note`, trials whose note contains it are not counted (a search's seed
        checks: search/engine/seed_checks.py)."""
        with self._session() as s:  # one statement: it runs before and after every trial
            study_id = select(Study.id).where(Study.name == study).scalar_subquery()
            retried = select(Trial.retry_of).where(Trial.study_id == study_id, Trial.retry_of.is_not(None))
            where = [Trial.study_id == study_id]
            if without_note is not None:
                where.append(or_(Trial.note.is_(None), Trial.note.not_like(f"%{without_note}%")))
            final, running = s.execute(
                select(
                    func.count().filter(Trial.status.in_(FINISHED_STATUSES), Trial.number.not_in(retried)),
                    func.count().filter(Trial.status == "running"),
                ).where(*where)
            ).one()
            if not final and not running:
                self._study_id(s, study)  # an unknown study is an error, not an empty one
            return int(final or 0), int(running or 0)


def add_runs(s: Any, trial_id: int, results: list[RunResult], retraining: int = 0) -> None:
    """Insert one trial's runs (of the search, or of its retraining number `retraining`)
    with their epochs and artifacts, in the session's transaction."""
    runs = [
        Run(
            trial_id=trial_id,
            retraining=int(retraining),
            repeat=i,
            seed=int(r.seed),
            status=r.status,
            best_epoch=r.best_epoch,
            metrics=jsonable(r.metrics),
            duration_s=finite(r.duration_s),
            error=r.error,
        )
        for i, r in enumerate(results)
    ]
    s.add_all(runs)
    s.flush()
    epoch_rows = [
        dict(
            run_id=run.id,
            epoch=int(e.epoch),
            train_loss=finite(e.train_loss),
            metrics=jsonable(e.metrics),
            elapsed_s=finite(e.elapsed_s),
        )
        for run, r in zip(runs, results)
        for e in r.epochs
    ]
    if epoch_rows:
        s.execute(Epoch.__table__.insert(), epoch_rows)
    artifact_rows = [
        artifact_row(run.id, name, a) for run, r in zip(runs, results) for name, a in (r.artifacts or {}).items()
    ]
    if artifact_rows:
        s.execute(RunArtifact.__table__.insert(), artifact_rows)


def artifact_row(run_id: int, name: str, a: dict[str, Any]) -> dict[str, Any]:
    """The run_artifacts row of one `RunResult.artifacts` entry."""
    row: dict[str, Any] = {"run_id": run_id, "name": str(name), **{k: a.get(k) for k in ARTIFACT_FIELDS}}
    row["media_type"] = str(row["media_type"])
    if row["data"] is None and row["store_key"] is None:
        raise StorageError(f"artifact {name!r} has neither data nor a store key")
    return row
