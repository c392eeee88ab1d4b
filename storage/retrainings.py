"""Retrainings (`search train`): a trial's configuration trained again, stored beside the
search's results of the trial and never in place of them.

A retraining is written in one transaction when it has ended (`add_retraining`): its row
in `retrainings` (number k = 1, 2, ... per trial, settings, status, aggregated metrics)
and its runs (`runs.retraining = k`) with their epochs and artifacts. A process killed
before that leaves no row. The search's own rows (the trial's metrics and objective, its
runs with `retraining = 0`) are not touched, so the study's fronts stay what they were.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from core.errors import StorageError
from core.statuses import TRIAL_STATUSES
from core.trials import TrialResult
from storage.convert import finite, jsonable, metric_tuple, now_utc
from storage.database import Database, _Conflict
from storage.records import RetrainingRecord
from storage.schema import Epoch, Retraining, Run, RunArtifact, Trial
from storage.trial_reads import epoch_rows
from storage.trial_writes import add_runs
from storage.waiting import new_token, waits

_NUMBER_ATTEMPTS = 20
_ARTIFACT_KEYS = ("name", "media_type", "data", "store", "store_key", "size", "sha256", "removed_at")


class Retrainings(Database):
    @waits(once={"token": new_token})
    def add_retraining(
        self,
        study: str,
        number: int,
        settings: dict[str, Any],
        result: TrialResult,
        started_at: datetime | None = None,
        token: str | None = None,
    ) -> int:
        """Store a retraining of trial `number` (its runs, epochs, artifacts and aggregated
        metrics) in one transaction; returns its number (the trial's next, from 1). A call
        whose `token` (one per call, made when not given) is stored already returns that
        retraining's number: a retry never stores it twice."""
        if result.status not in TRIAL_STATUSES:
            raise StorageError(f"unknown retraining status {result.status!r}")
        metrics = {
            name: {"mean": finite(mean), "std": finite(std), "n": n}
            for name, (mean, std, n) in result.aggregate().items()
        }
        last: _Conflict | None = None
        for attempt in range(_NUMBER_ATTEMPTS):
            try:
                with self._session() as s:
                    trial = self._trial(s, self._study(s, study), number)
                    if token is not None:  # stored by a try whose answer was lost
                        done = s.scalar(select(Retraining.number).where(Retraining.token == token))
                        if done is not None:
                            return int(done)
                    top = s.scalar(select(func.max(Retraining.number)).where(Retraining.trial_id == trial.id))
                    k = 1 if top is None else top + 1
                    s.add(
                        Retraining(
                            trial_id=trial.id,
                            number=k,
                            status=result.status,
                            settings=jsonable(settings),
                            metrics=metrics,
                            device=result.device,
                            error=result.error,
                            started_at=started_at,
                            finished_at=now_utc(),
                            duration_s=finite(result.duration_s),
                            token=token,
                        )
                    )
                    s.flush()
                    add_runs(s, trial.id, result.runs, retraining=k)
                    return k
            except _Conflict as exc:  # another process took number k meanwhile
                last = exc
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise StorageError(f"could not number a retraining of trial {number} of {study!r}: {last}")

    @waits()
    def retrainings(self, study: str, numbers: Iterable[int] | None = None) -> list[RetrainingRecord]:
        """The retrainings of a study's trials (or only of the trials `numbers`), ordered by
        trial and retraining number, each with its runs and their artifacts."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            where = [Trial.study_id == study_id]
            if numbers is not None:
                where.append(Trial.number.in_(sorted({int(n) for n in numbers})))
            rows = s.execute(
                select(Trial.id, Trial.number, Retraining)
                .join(Retraining, Retraining.trial_id == Trial.id)
                .where(*where)
                .order_by(Trial.number, Retraining.number)
            ).all()
            if not rows:
                return []
            trial_ids = sorted({tid for tid, _, _ in rows})
            runs = s.execute(
                select(
                    Run.id,
                    Run.trial_id,
                    Run.retraining,
                    Run.repeat,
                    Run.seed,
                    Run.status,
                    Run.best_epoch,
                    Run.metrics,
                    Run.duration_s,
                    Run.error,
                    select(func.count(Epoch.id)).where(Epoch.run_id == Run.id).scalar_subquery(),
                )
                .where(Run.trial_id.in_(trial_ids), Run.retraining > 0)
                .order_by(Run.repeat)
            ).all()
            artifacts: dict[int, list[dict[str, Any]]] = {}
            for run_id, *values in s.execute(
                select(RunArtifact.run_id, *(getattr(RunArtifact, k) for k in _ARTIFACT_KEYS))
                .join(Run, Run.id == RunArtifact.run_id)
                .where(Run.trial_id.in_(trial_ids), Run.retraining > 0)
                .order_by(RunArtifact.name)
            ):
                artifacts.setdefault(run_id, []).append(dict(zip(_ARTIFACT_KEYS, values)))
            by_key: dict[tuple[int, int], list[dict[str, Any]]] = {}
            for run_id, tid, k, repeat, seed, status, best, metrics, duration, error, n_epochs in runs:
                by_key.setdefault((tid, k), []).append(
                    dict(
                        repeat=repeat,
                        seed=seed,
                        status=status,
                        best_epoch=best,
                        epochs=int(n_epochs or 0),
                        metrics=metrics or {},
                        duration_s=duration,
                        error=error,
                        artifacts=artifacts.get(run_id, []),
                    )
                )
            return [
                RetrainingRecord(
                    trial=number,
                    number=r.number,
                    status=r.status,
                    settings=dict(r.settings or {}),
                    metrics={
                        name: metric_tuple(m.get("mean"), m.get("std"), int(m.get("n") or 0))
                        for name, m in (r.metrics or {}).items()
                    },
                    runs=by_key.get((tid, r.number), []),
                    device=r.device,
                    error=r.error,
                    started_at=r.started_at,
                    finished_at=r.finished_at,
                    duration_s=r.duration_s,
                )
                for tid, number, r in rows
            ]

    @waits()
    def retraining_epochs(self, study: str, number: int, retraining: int) -> list[dict[str, Any]]:
        """Per-epoch rows of the runs of one retraining, as `Store.epochs` gives the search's."""
        with self._session() as s:
            trial = self._trial(s, self._study(s, study), number)
            rows = s.execute(
                select(Run.repeat, Run.seed, Epoch.epoch, Epoch.train_loss, Epoch.metrics, Epoch.elapsed_s)
                .join(Epoch, Epoch.run_id == Run.id)
                .where(Run.trial_id == trial.id, Run.retraining == int(retraining))
                .order_by(Run.repeat, Epoch.epoch, Epoch.id)
            ).all()
        return epoch_rows(rows)
