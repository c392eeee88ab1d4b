"""Studies: create or load one, read, list with counts, delete."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, func, select

from core.directions import DIRECTIONS
from core.errors import StorageError
from core.statuses import FAILURE_STATUSES
from storage.convert import jsonable, now_utc, study_record
from storage.database import Database, _Conflict
from storage.records import StudyRecord, StudySummary, StudyVersion
from storage.schema import Epoch, Retraining, Run, Study, Trial, TrialMetric
from storage.waiting import waits


class Studies(Database):
    @waits()
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
            raise StorageError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        for attempt in range(3):
            try:
                with self._session() as s:
                    study = s.scalar(select(Study).where(Study.name == name))
                    if study is None:
                        study = Study(
                            name=name,
                            task=task,
                            families=families,
                            metric=metric,
                            direction=direction,
                            budget=int(budget),
                            settings=jsonable(settings or {}),
                            created_at=now_utc(),
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
    def _merge_study(study: Study, task: str, families: list[str], metric: str, direction: str, budget: int) -> None:
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

    @waits()
    def get_study(self, name: str) -> StudyRecord:
        """The study named `name` (StorageError listing the known names when missing)."""
        with self._session() as s:
            return study_record(self._study(s, name))

    @waits()
    def list_studies(self) -> list[StudySummary]:
        """Every study with trial counts by status and its best complete objective."""
        with self._session() as s:
            studies = s.scalars(select(Study).order_by(Study.name)).all()
            counts: dict[int, dict[str, int]] = {}
            for sid, status, n in s.execute(
                select(Trial.study_id, Trial.status, func.count()).group_by(Trial.study_id, Trial.status)
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
                        name=st.name,
                        task=st.task,
                        families=list(st.families),
                        metric=st.metric,
                        direction=st.direction,
                        budget=int(st.budget),
                        n_complete=c.get("complete", 0),
                        n_failed=sum(c.get(s, 0) for s in FAILURE_STATUSES),
                        n_running=c.get("running", 0),
                        n_rejected=c.get("rejected", 0),
                        n_pruned=c.get("pruned", 0),
                        best=hi if st.direction == "maximize" else lo,
                    )
                )
            return out

    @waits()
    def study_versions(self, name: str | None = None) -> dict[str, StudyVersion]:
        """A version of every study (or only `name`: StorageError when missing), from one
        aggregate query over the trials and the study rows, without reading any trial.

        The version covers everything a page shows: the study row (budget, families,
        settings) and, over its trials, their number, the newest trial's id, how many run
        (an interrupted trial changes no time), the latest start and the latest end (a
        finish, a re-finish or a rejection), and how many retrainings its trials have and the
        newest's id (`search train`). Heartbeats are left out: they change nothing shown.
        """
        with self._session() as s:
            q = select(Study)
            if name is not None:
                q = q.where(Study.id == self._study_id(s, name))
            studies = s.scalars(q.order_by(Study.name)).all()
            q = select(
                Trial.study_id,
                func.count(),
                func.max(Trial.id),
                func.count().filter(Trial.status == "running"),
                func.max(Trial.started_at),
                func.max(Trial.finished_at),
            ).group_by(Trial.study_id)
            if name is not None:
                q = q.where(Trial.study_id == studies[0].id)
            trials = {row[0]: row[1:] for row in s.execute(q)}
            q = (
                select(Trial.study_id, func.count(), func.max(Retraining.id))
                .join(Trial, Trial.id == Retraining.trial_id)
                .group_by(Trial.study_id)
            )
            if name is not None:
                q = q.where(Trial.study_id == studies[0].id)
            retrained = {row[0]: row[1:] for row in s.execute(q)}
        out = {}
        for st in studies:
            n, top, running, started, finished = trials.get(st.id, (0, None, 0, None, None))
            version = json.dumps(
                [
                    st.id,
                    st.name,
                    st.budget,
                    st.families,
                    st.settings,
                    n,
                    top,
                    running,
                    started,
                    finished,
                    *retrained.get(st.id, (0, None)),
                ],
                default=str,
                sort_keys=True,
            )
            times = [t for t in (st.created_at, started, finished) if t is not None]
            out[st.name] = StudyVersion(version, max(times) if times else None)
        return out

    def delete_study(self, name: str) -> None:
        """Delete a study with all its trials, metrics, runs and epochs."""
        with self._session() as s:
            study = self._study(s, name)
            trial_ids = select(Trial.id).where(Trial.study_id == study.id)
            run_ids = select(Run.id).where(Run.trial_id.in_(trial_ids))
            s.execute(delete(Epoch).where(Epoch.run_id.in_(run_ids)))
            s.execute(delete(Run).where(Run.trial_id.in_(trial_ids)))
            s.execute(delete(Retraining).where(Retraining.trial_id.in_(trial_ids)))
            s.execute(delete(TrialMetric).where(TrialMetric.trial_id.in_(trial_ids)))
            s.execute(delete(Trial).where(Trial.study_id == study.id))
            s.execute(delete(Study).where(Study.id == study.id))
