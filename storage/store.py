"""`Store`: the one storage interface of the app (SQLite by default, any SQLAlchemy URL).

Every write runs in one session that commits or rolls back, and database errors become
`StorageError` (Optuna's storages/_rdb style). Only `storage.records` dataclasses,
plain dicts and DataFrames leave this module.
"""
from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable

from sqlalchemy import Engine, create_engine, delete, event, func, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from core.directions import DIRECTIONS
from core.errors import StorageError, one_line
from core.statuses import FINISHED_STATUSES, TRIAL_STATUSES
from core.trials import TrialResult
from storage.convert import (
    Metric,
    dims,
    finite,
    jsonable,
    metric_tuple,
    now_utc,
    study_record,
    trial_record,
)
from storage.migrate import ensure_schema
from storage.readonly import check_readonly
from storage.records import StudyRecord, StudySummary, TrialRecord
from storage.schema import (
    DIM_COLUMNS,
    Epoch,
    Run,
    RunArtifact,
    Study,
    Trial,
    TrialMetric,
)

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for (CLI start-up)
    import pandas as pd

DEFAULT_URL = "sqlite:///search.db"
INTERRUPTED_NOTE = "interrupted: the process running it stopped"
SQLITE_BUSY_TIMEOUT_S = 5.0
_NUMBER_ATTEMPTS = 20


def default_url() -> str:
    """`$SEARCH_STORAGE` if set, else a SQLite file `search.db` in the current directory."""
    return os.environ.get("SEARCH_STORAGE") or DEFAULT_URL


def normalize_url(url: str) -> str:
    """A plain filesystem path (no `://`) becomes an absolute sqlite URL."""
    if "://" in url:
        return url
    return "sqlite:///" + os.path.abspath(os.path.expanduser(url))


class _Conflict(StorageError):
    """A unique or foreign-key constraint refused a write (callers may retry)."""


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys = ON")
    cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    cur.execute("PRAGMA journal_mode = WAL")
    cur.close()


class Store:
    """Studies, trials, runs and epochs in one database; see the module docstring."""

    def __init__(self, url: str | None = None) -> None:
        self.url = normalize_url(url if url is not None else default_url())
        self._shown = self.url
        try:
            parsed = make_url(self.url)
            self._shown = parsed.render_as_string(hide_password=True)
            self.dialect = parsed.get_backend_name()
            kwargs: dict[str, Any] = {}
            if self.dialect == "sqlite":
                kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
            else:
                kwargs["pool_pre_ping"] = True
            self._engine: Engine = create_engine(parsed, **kwargs)
            if self.dialect == "sqlite":
                event.listen(self._engine, "connect", _sqlite_on_connect)
            ensure_schema(self._engine, self._shown)
        except StorageError:
            raise
        except ImportError as exc:
            raise StorageError(
                f"cannot open storage '{self._shown}': "
                f"its database driver is not installed ({exc})"
            ) from exc
        except (SQLAlchemyError, ValueError, OSError) as exc:
            raise StorageError(f"cannot open storage '{self._shown}': {one_line(exc)}") from exc
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)

    # -- life cycle ---------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self._shown!r})"

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """One transaction: commit on success, roll back and map errors on failure."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except IntegrityError as exc:
            session.rollback()
            raise _Conflict(f"storage conflict in '{self._shown}': {one_line(exc)}") from exc
        except SQLAlchemyError as exc:
            session.rollback()
            raise StorageError(f"storage error in '{self._shown}': {one_line(exc)}") from exc
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    # -- studies ------------------------------------------------------------------
    def _study(self, session: Session, name: str) -> Study:
        study = session.scalar(select(Study).where(Study.name == name))
        if study is None:
            known = session.scalars(select(Study.name).order_by(Study.name)).all()
            raise StorageError(
                f"no study named {name!r}; known: {', '.join(known) if known else '(none)'}"
            )
        return study

    def create_or_load_study(
        self,
        name: str,
        *,
        task: str,
        families: Iterable[str],
        metric: str,
        direction: str,
        budget: int,
        settings: dict[str, Any] | None = None,
    ) -> StudyRecord:
        """Create study `name`, or load it (adding new families, taking the new budget).

        A different task, metric or direction than the stored one is a StorageError.
        Stored settings are kept as created; a budget change is logged in
        `settings["budget_history"]`.
        """
        families = list(dict.fromkeys(families))
        if direction not in DIRECTIONS:
            raise StorageError(
                f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}"
            )
        for attempt in range(3):
            try:
                with self._session() as s:
                    study = s.scalar(select(Study).where(Study.name == name))
                    if study is None:
                        study = Study(
                            name=name, task=task, families=families, metric=metric,
                            direction=direction, budget=int(budget),
                            settings=jsonable(settings or {}), created_at=now_utc(),
                        )
                        s.add(study)
                    else:
                        self._merge_study(study, task, families, metric, direction, int(budget))
                    s.flush()
                    return study_record(study)
            except _Conflict:  # created by another process meanwhile: load it
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _merge_study(
        study: Study, task: str, families: list[str], metric: str, direction: str, budget: int
    ) -> None:
        for field, new in (("task", task), ("metric", metric), ("direction", direction)):
            old = getattr(study, field)
            if old != new:
                raise StorageError(
                    f"study {study.name!r} exists with {field} {old!r}; use that {field} "
                    f"or another study name (not {new!r})"
                )
        merged = list(study.families) + [f for f in families if f not in study.families]
        if merged != list(study.families):
            study.families = merged
        if budget != study.budget:
            settings = dict(study.settings or {})
            history = list(settings.get("budget_history", []))
            history.append({"budget": int(study.budget), "until": now_utc().isoformat()})
            settings["budget_history"] = history
            study.settings = settings
            study.budget = budget

    def get_study(self, name: str) -> StudyRecord:
        """The study named `name` (StorageError listing the known names when missing)."""
        with self._session() as s:
            return study_record(self._study(s, name))

    def list_studies(self) -> list[StudySummary]:
        """Every study with trial counts by status and its best complete objective."""
        with self._session() as s:
            studies = s.scalars(select(Study).order_by(Study.name)).all()
            counts: dict[int, dict[str, int]] = {}
            for sid, status, n in s.execute(
                select(Trial.study_id, Trial.status, func.count()).group_by(
                    Trial.study_id, Trial.status
                )
            ):
                counts.setdefault(sid, {})[status] = n
            best = {
                sid: (hi, lo)
                for sid, hi, lo in s.execute(
                    select(Trial.study_id, func.max(Trial.objective), func.min(Trial.objective))
                    .where(Trial.status == "complete")
                    .group_by(Trial.study_id)
                )
            }
            out = []
            for st in studies:
                c = counts.get(st.id, {})
                hi, lo = best.get(st.id, (None, None))
                out.append(
                    StudySummary(
                        name=st.name, task=st.task, families=list(st.families),
                        metric=st.metric, direction=st.direction, budget=int(st.budget),
                        n_complete=c.get("complete", 0),
                        n_failed=c.get("failed", 0) + c.get("diverged", 0),
                        n_running=c.get("running", 0), n_rejected=c.get("rejected", 0),
                        best=hi if st.direction == "maximize" else lo,
                    )
                )
            return out

    def delete_study(self, name: str) -> None:
        """Delete a study with all its trials, metrics, runs and epochs."""
        with self._session() as s:
            study = self._study(s, name)
            trial_ids = select(Trial.id).where(Trial.study_id == study.id)
            run_ids = select(Run.id).where(Run.trial_id.in_(trial_ids))
            s.execute(delete(Epoch).where(Epoch.run_id.in_(run_ids)))
            s.execute(delete(Run).where(Run.trial_id.in_(trial_ids)))
            s.execute(delete(TrialMetric).where(TrialMetric.trial_id.in_(trial_ids)))
            s.execute(delete(Trial).where(Trial.study_id == study.id))
            s.execute(delete(Study).where(Study.id == study.id))

    # -- trials: writes -----------------------------------------------------------
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
    ) -> int:
        """Insert a trial with the study's next free number (0-based) and return it.

        `owner` names the process that runs it (its heartbeat starts now); `retry_of`
        and `attempt` link a retry to the trial it repeats.

        Safe across processes: the (study, number) unique constraint refuses a
        duplicate and the insert is retried with a fresh number.
        """
        if status not in TRIAL_STATUSES:
            raise StorageError(
                f"unknown trial status {status!r}; known: {', '.join(TRIAL_STATUSES)}"
            )
        now = now_utc()
        values: dict[str, Any] = dict(
            family=family, status=status, params=int(params), config=jsonable(config),
            seeds=[int(x) for x in seeds],
            optuna=jsonable(optuna) if optuna is not None else None,
            note=note, started_at=now if status == "running" else None,
            owner=owner, heartbeat_at=now if owner else None, attempt=int(attempt), retry_of=retry_of,
            finished_at=now if status == "rejected" else None, **dims(config),
        )
        last: _Conflict | None = None
        for attempt in range(_NUMBER_ATTEMPTS):
            try:
                with self._session() as s:
                    study_id = self._study(s, study).id
                    top = s.scalar(
                        select(func.max(Trial.number)).where(Trial.study_id == study_id)
                    )
                    number = 0 if top is None else top + 1
                    s.add(Trial(study_id=study_id, number=number, **values))
                    s.flush()
                    return number
            except _Conflict as exc:
                last = exc
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise StorageError(
            f"could not number a new trial of study {study!r} "
            f"after {_NUMBER_ATTEMPTS} tries: {last}"
        )

    def add_rejected(
        self, study: str, *, family: str, config: dict[str, Any], params: int, reason: str
    ) -> int:
        """Record a proposal that was never trained (e.g. over budget); returns its number."""
        return self.add_trial(
            study, family=family, config=config, params=params, seeds=[],
            status="rejected", note=reason,
        )

    @staticmethod
    def _trial(s: Session, study: Study, number: int) -> Trial:
        trial = s.scalar(select(Trial).where(Trial.study_id == study.id, Trial.number == number))
        if trial is None:
            raise StorageError(f"study {study.name!r} has no trial {number}")
        return trial

    def finish_trial(self, study: str, number: int, result: TrialResult) -> None:
        """Store a trial's result, its metrics, runs and epochs in one transaction.

        Calling it again for the same trial replaces what the first call stored.
        """
        if result.status not in TRIAL_STATUSES:
            raise StorageError(f"unknown trial status {result.status!r}")
        aggregate = result.aggregate()
        with self._session() as s:
            st = self._study(s, study)
            trial = self._trial(s, st, number)
            run_ids = select(Run.id).where(Run.trial_id == trial.id)
            s.execute(delete(Epoch).where(Epoch.run_id.in_(run_ids)))
            s.execute(delete(RunArtifact).where(RunArtifact.run_id.in_(run_ids)))
            s.execute(delete(Run).where(Run.trial_id == trial.id))
            s.execute(delete(TrialMetric).where(TrialMetric.trial_id == trial.id))
            trial.status = result.status
            trial.error = result.error
            trial.traceback = result.traceback
            trial.device = result.device
            trial.duration_s = finite(result.duration_s)
            trial.finished_at = now_utc()
            primary = aggregate.get(st.metric)
            trial.objective = finite(primary[0]) if primary else None
            s.add_all(
                TrialMetric(trial_id=trial.id, name=name, mean=finite(mean), std=finite(std), n=n)
                for name, (mean, std, n) in aggregate.items()
            )
            runs = [
                Run(
                    trial_id=trial.id, repeat=i, seed=int(r.seed), status=r.status,
                    best_epoch=r.best_epoch, metrics=jsonable(r.metrics),
                    duration_s=finite(r.duration_s), error=r.error,
                )
                for i, r in enumerate(result.runs)
            ]
            s.add_all(runs)
            s.flush()
            epoch_rows = [
                dict(
                    run_id=run.id, epoch=int(e.epoch), train_loss=finite(e.train_loss),
                    metrics=jsonable(e.metrics), elapsed_s=finite(e.elapsed_s),
                )
                for run, r in zip(runs, result.runs)
                for e in r.epochs
            ]
            if epoch_rows:
                s.execute(Epoch.__table__.insert(), epoch_rows)
            artifact_rows = [
                dict(run_id=run.id, name=str(name), media_type=str(a["media_type"]), data=str(a["data"]))
                for run, r in zip(runs, result.runs)
                for name, a in (r.artifacts or {}).items()
            ]
            if artifact_rows:
                s.execute(RunArtifact.__table__.insert(), artifact_rows)

    def interrupt_running(
        self, study: str, orphan: Callable[[TrialRecord], bool] | None = None
    ) -> list[TrialRecord]:
        """Mark `running` trials of `study` interrupted and return them.

        With `orphan`, only the trials it says no live process runs any more (its owner
        died, or its heartbeat is stale); without it, every running trial.
        """
        with self._session() as s:
            study_id = self._study(s, study).id
            trials = s.scalars(
                select(Trial)
                .where(Trial.study_id == study_id, Trial.status == "running")
                .order_by(Trial.number)
            ).all()
            hit = []
            for t in trials:
                if orphan is not None and not orphan(trial_record(t, {})):
                    continue
                # only if still running: its owner may have finished it since we read it
                changed = s.execute(
                    update(Trial).where(Trial.id == t.id, Trial.status == "running")
                    .values(status="interrupted", note=INTERRUPTED_NOTE)
                    .execution_options(synchronize_session=False)
                ).rowcount
                if changed:
                    s.refresh(t)
                    hit.append(t)
            return [trial_record(t, {}) for t in hit]

    def interrupt_trials(self, study: str, numbers: Iterable[int], note: str = INTERRUPTED_NOTE) -> None:
        """Mark these trials interrupted if they are still running (e.g. on Ctrl-C)."""
        numbers = [int(n) for n in numbers]
        if not numbers:
            return
        with self._session() as s:
            study_id = self._study(s, study).id
            s.execute(
                update(Trial)
                .where(Trial.study_id == study_id, Trial.number.in_(numbers), Trial.status == "running")
                .values(status="interrupted", note=note)
            )

    def heartbeat(self, study: str, numbers: Iterable[int], owner: str) -> None:
        """Refresh the heartbeat of the running trials `owner` runs."""
        numbers = [int(n) for n in numbers]
        if not numbers:
            return
        with self._session() as s:
            study_id = self._study(s, study).id
            s.execute(
                update(Trial)
                .where(Trial.study_id == study_id, Trial.number.in_(numbers), Trial.owner == owner,
                       Trial.status == "running")
                .values(heartbeat_at=now_utc())
            )

    def retry_candidates(self, study: str, statuses: Iterable[str], max_attempt: int) -> list[TrialRecord]:
        """Trials with one of `statuses`, `attempt < max_attempt` and no retry yet."""
        with self._session() as s:
            study_id = self._study(s, study).id
            retried = select(Trial.retry_of).where(Trial.study_id == study_id, Trial.retry_of.is_not(None))
            rows = s.scalars(
                select(Trial)
                .where(Trial.study_id == study_id, Trial.status.in_(list(statuses)),
                       Trial.attempt < max_attempt, Trial.number.not_in(retried))
                .order_by(Trial.number)
            ).all()
            return [trial_record(t, {}) for t in rows]

    def progress(self, study: str) -> tuple[int, int]:
        """(final, running): finished trials (complete/failed/diverged) that no retry
        supersedes, and trials running now, over every process of the study."""
        with self._session() as s:
            study_id = self._study(s, study).id
            retried = select(Trial.retry_of).where(Trial.study_id == study_id, Trial.retry_of.is_not(None))
            final = s.scalar(
                select(func.count()).select_from(Trial)
                .where(Trial.study_id == study_id, Trial.status.in_(FINISHED_STATUSES),
                       Trial.number.not_in(retried))
            )
            running = s.scalar(
                select(func.count()).select_from(Trial)
                .where(Trial.study_id == study_id, Trial.status == "running")
            )
            return int(final or 0), int(running or 0)

    # -- trials: reads ------------------------------------------------------------
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
            study_id = self._study(s, study).id
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
            study_id = self._study(s, study).id
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

    # -- ad-hoc SQL -----------------------------------------------------------------
    def query_readonly(
        self, sql: str, limit: int | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one read-only SQL statement; return (column names, rows).

        Writes are refused before execution (see `storage.readonly`), and the
        statement runs in a read-only transaction that is always rolled back.
        """
        statement = check_readonly(sql, self.dialect)
        try:
            conn = self._engine.connect()
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot open storage '{self._shown}': {one_line(exc)}") from exc
        try:
            if self.dialect == "sqlite":
                conn.exec_driver_sql("PRAGMA query_only = ON")
            elif self.dialect == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            # no_parameters: a '%' in the query is not a placeholder for any driver
            result = conn.execution_options(no_parameters=True).exec_driver_sql(statement)
            columns = list(result.keys()) if result.returns_rows else []
            if not result.returns_rows or (limit is not None and limit <= 0):
                rows = []
            elif limit is None:
                rows = [tuple(r) for r in result.fetchall()]
            else:
                rows = [tuple(r) for r in result.fetchmany(limit)]
            result.close()
            return columns, rows
        except SQLAlchemyError as exc:
            raise StorageError(one_line(exc)) from exc
        finally:
            try:
                conn.rollback()
                if self.dialect == "sqlite":
                    conn.exec_driver_sql("PRAGMA query_only = OFF")
                    conn.rollback()
            except SQLAlchemyError:
                conn.invalidate()  # never hand a read-only connection back to the pool
            conn.close()
