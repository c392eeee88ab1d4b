"""Trial reads: records with their metrics, per-epoch rows, artifacts, the trials frame.
They read the search's runs only (`runs.retraining` 0); a trial's retrainings are read
by `storage/retrainings.py`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, func, select, type_coerce
from sqlalchemy.orm import Session

from storage.convert import Metric, metric_tuple, trial_record
from storage.database import Database
from storage.records import ConfigurationRow, ObjectiveRow, TrialRecord
from storage.schema import DIM_COLUMNS, Epoch, Run, RunArtifact, Trial, TrialMetric
from storage.waiting import waits

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for (CLI start-up)
    import pandas as pd


class TrialReads(Database):
    @staticmethod
    def _metrics(s: Session, study_id: int) -> dict[int, dict[str, Metric]]:
        """trial id -> metric name -> (mean, std|None, n), in stored order."""
        out: dict[int, dict[str, Metric]] = {}
        rows = s.execute(
            select(TrialMetric.trial_id, TrialMetric.name, TrialMetric.mean, TrialMetric.std, TrialMetric.n)
            .join(Trial, Trial.id == TrialMetric.trial_id)
            .where(Trial.study_id == study_id)
            .order_by(TrialMetric.id)
        )
        for tid, name, mean, std, n in rows:
            out.setdefault(tid, {})[name] = metric_tuple(mean, std, n)
        return out

    @waits()
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

    @waits()
    def epochs(self, study: str, number: int) -> list[dict[str, Any]]:
        """Per-epoch rows of every run of one trial: repeat, seed, epoch, train_loss,
        the validation metrics by name, elapsed_s. NULLs (non-finite values) are NaN."""
        with self._session() as s:
            trial = self._trial(s, self._study(s, study), number)
            rows = s.execute(
                select(Run.repeat, Run.seed, Epoch.epoch, Epoch.train_loss, Epoch.metrics, Epoch.elapsed_s)
                .join(Epoch, Epoch.run_id == Run.id)
                .where(Run.trial_id == trial.id, Run.retraining == 0)
                .order_by(Run.repeat, Epoch.epoch, Epoch.id)
            ).all()
        return epoch_rows(rows)

    @waits()
    def epochs_of(
        self, study: str, statuses: Iterable[str], repeat: int | None = None
    ) -> dict[int, list[dict[str, Any]]]:
        """`epochs` of every trial with one of `statuses` in one query (a resumed study's
        pruner reads them all; a query per trial was 1 s per 1,000 trials): trial number ->
        its rows (only run `repeat` if given); a trial without epochs is absent."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            q = (
                select(
                    Trial.number, Run.repeat, Run.seed, Epoch.epoch, Epoch.train_loss, Epoch.metrics, Epoch.elapsed_s
                )
                .join(Run, Run.trial_id == Trial.id)
                .join(Epoch, Epoch.run_id == Run.id)
                .where(Trial.study_id == study_id, Trial.status.in_(list(statuses)), Run.retraining == 0)
                .order_by(Trial.number, Run.repeat, Epoch.epoch, Epoch.id)
            )
            if repeat is not None:
                q = q.where(Run.repeat == repeat)
            by_trial: dict[int, list[tuple]] = {}
            for number, *row in s.execute(q):
                by_trial.setdefault(number, []).append(row)
        return {number: epoch_rows(rows) for number, rows in by_trial.items()}

    @waits()
    def objectives(self, study: str, family: str, statuses: Iterable[str]) -> list[ObjectiveRow]:
        """(number, params, objective) of the trials of `family` with one of `statuses`, by
        number: the objective is the study metric's mean over the runs, NaN when missing
        (what `trials` gives as `metrics[study metric][0]`, without reading every metric or
        any JSON column: `search run --keep pareto` asks after every trial)."""
        with self._session() as s:
            study_id = self._study_id(s, study)
            rows = s.execute(
                select(Trial.number, Trial.params, Trial.objective)
                .where(Trial.study_id == study_id, Trial.family == family, Trial.status.in_(list(statuses)))
                .order_by(Trial.number)
            ).all()
        return [ObjectiveRow(n, p, math.nan if v is None else float(v)) for n, p, v in rows]

    # sizes per query: well under SQLite's 32,766 bound parameters
    _SIZES_PER_READ = 5000

    @waits()
    def configurations(
        self, study: str, family: str, statuses: Iterable[str], sizes: Iterable[int]
    ) -> list[ConfigurationRow]:
        """(number, runs, config) of the trials of `family` with one of `statuses` whose
        parameter count is one of `sizes`, by number (`--keep pareto` reads these only for
        the sizes that more than one trial shares: only those can share a configuration)."""
        sizes = sorted(set(sizes))
        out: list[ConfigurationRow] = []
        with self._session() as s:
            study_id = self._study_id(s, study)
            for k in range(0, len(sizes), self._SIZES_PER_READ):
                rows = s.execute(
                    select(Trial.number, Trial.seeds, Trial.config).where(
                        Trial.study_id == study_id,
                        Trial.family == family,
                        Trial.status.in_(list(statuses)),
                        Trial.params.in_(sizes[k : k + self._SIZES_PER_READ]),
                    )
                ).all()
                out += [ConfigurationRow(n, len(seeds or []) or 1, config) for n, seeds, config in rows]
        return sorted(out)

    # What `artifacts` and `artifacts_of` return of each artifact.
    _ARTIFACT_KEYS = (
        "repeat",
        "seed",
        "name",
        "media_type",
        "data",
        "store",
        "store_key",
        "size",
        "sha256",
        "removed_at",
    )
    _ARTIFACT_COLUMNS = (
        Run.repeat,
        Run.seed,
        RunArtifact.name,
        RunArtifact.media_type,
        RunArtifact.data,
        RunArtifact.store,
        RunArtifact.store_key,
        RunArtifact.size,
        RunArtifact.sha256,
        RunArtifact.removed_at,
    )

    @waits()
    def artifacts(self, study: str, number: int, name: str | None = None) -> list[dict[str, Any]]:
        """Files the runs of one trial produced (optionally only `name`), ordered by
        repeat: dicts with repeat, seed, name, media_type and data (base64 text), or for a
        file in an artifact store no data but store, store_key, size, sha256 and
        removed_at (None while the file is kept)."""
        with self._session() as s:
            trial = self._trial(s, self._study(s, study), number)
            q = (
                select(*self._ARTIFACT_COLUMNS)
                .join(RunArtifact, RunArtifact.run_id == Run.id)
                .where(Run.trial_id == trial.id, Run.retraining == 0)
                .order_by(Run.repeat, RunArtifact.name)
            )
            if name is not None:
                q = q.where(RunArtifact.name == name)
            rows = s.execute(q).all()
        return [dict(zip(self._ARTIFACT_KEYS, row)) for row in rows]

    # Trial numbers per IN (...) list: below SQLite's oldest limit of 999 bound values.
    _IN_CHUNK = 900

    @waits()
    def artifacts_of(
        self, study: str, numbers: Iterable[int], name: str | None = None
    ) -> dict[int, list[dict[str, Any]]]:
        """`artifacts` of many trials at once (one query per 900 trials, not one per
        trial): trial number -> its artifacts (optionally only `name`), ordered by repeat
        and name; a trial without any (or not in the study) is absent."""
        wanted = sorted({int(n) for n in numbers})
        out: dict[int, list[dict[str, Any]]] = {}
        keys = self._ARTIFACT_KEYS
        with self._session() as s:
            study_id = self._study_id(s, study)
            for i in range(0, len(wanted), self._IN_CHUNK):
                q = (
                    select(Trial.number, *self._ARTIFACT_COLUMNS)
                    .join(Run, Run.trial_id == Trial.id)
                    .join(RunArtifact, RunArtifact.run_id == Run.id)
                    .where(
                        Trial.study_id == study_id,
                        Trial.number.in_(wanted[i : i + self._IN_CHUNK]),
                        Run.retraining == 0,
                    )
                    .order_by(Trial.number, Run.repeat, RunArtifact.name)
                )
                if name is not None:
                    q = q.where(RunArtifact.name == name)
                for number, *row in s.execute(q):
                    out.setdefault(number, []).append(dict(zip(keys, row)))
        return out

    # The trial columns the frame holds, read as plain rows (not ORM objects), the JSON and
    # time columns as the database's own text where it has text (SQLite): decoded for the
    # whole column at once (`storage.frames`), not row by row. 100,000 trials: 10 s -> 2 s.
    _FRAME_COLUMNS = (
        "id",
        "number",
        "status",
        "family",
        "params",
        "config",
        *DIM_COLUMNS,
        "seeds",
        "objective",
        "note",
        "error",
        "device",
        "started_at",
        "finished_at",
        "duration_s",
    )
    _RAW_COLUMNS = ("config", "seeds", "started_at", "finished_at")

    @waits()
    def trials_frame(self, study: str) -> pd.DataFrame:
        """One row per trial; the column contract is in `storage.frames`."""
        from storage.frames import build_frame, gc_paused

        with gc_paused():
            return self._trials_frame(study, build_frame)

    @staticmethod
    def _plain_rows(core: Any, statement: Any) -> list[tuple]:
        """The rows of `statement` as the driver's own tuples. Every column read here has no
        result processing in SQLAlchemy (the JSON and time columns are read as text: see
        _RAW_COLUMNS), so its Row objects would only wrap the same values (at 100,000
        trials a quarter of a second)."""
        result = core.execute(statement)
        try:
            return result.cursor.fetchall() if result.cursor is not None else [tuple(r) for r in result.all()]
        finally:
            result.close()

    def _trials_frame(self, study: str, build_frame: Any) -> pd.DataFrame:
        columns = [
            type_coerce(getattr(Trial, c), String) if c in self._RAW_COLUMNS else getattr(Trial, c)
            for c in self._FRAME_COLUMNS
        ]
        with self._session() as s:
            study_id = self._study_id(s, study)
            core = s.connection()  # plain Core results: no ORM loading step per row
            trials = self._plain_rows(core, select(*columns).where(Trial.study_id == study_id).order_by(Trial.number))
            metrics = self._plain_rows(
                core,
                select(Trial.number, TrialMetric.name, TrialMetric.mean, TrialMetric.std)
                .join(Trial, Trial.id == TrialMetric.trial_id)
                .where(Trial.study_id == study_id)
                .order_by(Trial.number, TrialMetric.id),
            )
            n_runs = dict(
                self._plain_rows(
                    core,
                    select(Run.trial_id, func.count())
                    .join(Trial, Trial.id == Run.trial_id)
                    .where(Trial.study_id == study_id, Run.status == "complete", Run.retraining == 0)
                    .group_by(Run.trial_id),
                )
            )
        values = (
            {c: list(v) for c, v in zip(self._FRAME_COLUMNS, zip(*trials))}
            if trials
            else {c: [] for c in self._FRAME_COLUMNS}
        )
        ids = values.pop("id")
        values["study"] = [study] * len(ids)
        values["n_runs"] = [n_runs.get(i, 0) for i in ids]
        return build_frame(values, metrics)


def epoch_rows(rows: Iterable[Any]) -> list[dict[str, Any]]:
    """`Store.epochs`' dicts of (repeat, seed, epoch, train_loss, metrics, elapsed_s) rows."""
    out = []
    for repeat, seed, epoch, loss, metrics, elapsed in rows:
        row: dict[str, Any] = {
            "repeat": repeat,
            "seed": seed,
            "epoch": epoch,
            "train_loss": math.nan if loss is None else loss,
        }
        for k, v in (metrics or {}).items():
            if k not in ("repeat", "seed", "epoch", "train_loss", "elapsed_s"):
                row[k] = math.nan if v is None else v
        row["elapsed_s"] = math.nan if elapsed is None else elapsed
        out.append(row)
    return out
