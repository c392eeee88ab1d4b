"""Trial reads: records with their metrics, per-epoch rows, artifacts, the trials frame."""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.convert import Metric, metric_tuple, trial_record
from storage.engine import Database
from storage.records import TrialRecord
from storage.schema import DIM_COLUMNS, Epoch, Run, RunArtifact, Trial, TrialMetric

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for (CLI start-up)
    import pandas as pd


class TrialReads(Database):
    @staticmethod
    def _metrics(s: Session, study_id: int) -> dict[int, dict[str, Metric]]:
        """trial id -> metric name -> (mean, std|None, n), in stored order."""
        out: dict[int, dict[str, Metric]] = {}
        rows = s.execute(
            select(
                TrialMetric.trial_id, TrialMetric.name, TrialMetric.mean, TrialMetric.std,
                TrialMetric.n,
            )
            .join(Trial, Trial.id == TrialMetric.trial_id)
            .where(Trial.study_id == study_id)
            .order_by(TrialMetric.id)
        )
        for tid, name, mean, std, n in rows:
            out.setdefault(tid, {})[name] = metric_tuple(mean, std, n)
        return out

    def trials(self, study: str, statuses: Iterable[str] | None = None) -> list[TrialRecord]:
        """The trials of `study` (optionally only those statuses), ordered by number."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            q = select(Trial).where(Trial.study_id == study_id).order_by(Trial.number)
            if statuses is not None:
                q = q.where(Trial.status.in_(list(statuses)))
            trials = s.scalars(q).all()
            metrics = self._metrics(s, study_id)
            return [trial_record(t, metrics.get(t.id, {})) for t in trials]

    def epochs(self, study: str, number: int) -> list[dict[str, Any]]:
        """Per-epoch rows of every run of one trial: repeat, seed, epoch, train_loss,
        the validation metrics by name, elapsed_s. NULLs (non-finite values) are NaN."""
        with self._session() as s:
            trial = self._trial(s, self._study(s, study), number)
            rows = s.execute(
                select(
                    Run.repeat, Run.seed, Epoch.epoch, Epoch.train_loss, Epoch.metrics,
                    Epoch.elapsed_s,
                )
                .join(Epoch, Epoch.run_id == Run.id)
                .where(Run.trial_id == trial.id)
                .order_by(Run.repeat, Epoch.epoch, Epoch.id)
            ).all()
        out = []
        for repeat, seed, epoch, loss, metrics, elapsed in rows:
            row: dict[str, Any] = {"repeat": repeat, "seed": seed, "epoch": epoch,
                                   "train_loss": math.nan if loss is None else loss}
            for k, v in (metrics or {}).items():
                if k not in ("repeat", "seed", "epoch", "train_loss", "elapsed_s"):
                    row[k] = math.nan if v is None else v
            row["elapsed_s"] = math.nan if elapsed is None else elapsed
            out.append(row)
        return out

    def artifacts(self, study: str, number: int, name: str | None = None) -> list[dict[str, Any]]:
        """Files the runs of one trial produced (optionally only `name`), ordered by
        repeat: dicts with repeat, seed, name, media_type and data (base64 text)."""
        with self._session() as s:
            trial = self._trial(s, self._study(s, study), number)
            q = (
                select(Run.repeat, Run.seed, RunArtifact.name, RunArtifact.media_type, RunArtifact.data)
                .join(RunArtifact, RunArtifact.run_id == Run.id)
                .where(Run.trial_id == trial.id)
                .order_by(Run.repeat, RunArtifact.name)
            )
            if name is not None:
                q = q.where(RunArtifact.name == name)
            rows = s.execute(q).all()
        keys = ("repeat", "seed", "name", "media_type", "data")
        return [dict(zip(keys, row)) for row in rows]

    def trials_frame(self, study: str) -> pd.DataFrame:
        """One row per trial; the column contract is in `storage.frames`."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            trials = s.scalars(
                select(Trial).where(Trial.study_id == study_id).order_by(Trial.number)
            ).all()
            metrics = self._metrics(s, study_id)
            n_runs = dict(
                s.execute(
                    select(Run.trial_id, func.count())
                    .join(Trial, Trial.id == Run.trial_id)
                    .where(Trial.study_id == study_id, Run.status == "complete")
                    .group_by(Run.trial_id)
                ).all()
            )
        rows = [
            {
                "study": study, "number": t.number, "status": t.status, "family": t.family,
                "params": int(t.params), "config": dict(t.config),
                **{d: getattr(t, d) for d in DIM_COLUMNS},
                "seeds": list(t.seeds), "n_runs": n_runs.get(t.id, 0),
                "objective": t.objective, "note": t.note, "error": t.error,
                "device": t.device, "started_at": t.started_at,
                "finished_at": t.finished_at, "duration_s": t.duration_s,
            }
            for t in trials
        ]
        by_number = {t.number: metrics[t.id] for t in trials if t.id in metrics}
        from storage.frames import build_frame

        return build_frame(rows, by_number)
