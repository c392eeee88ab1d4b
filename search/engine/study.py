"""The study loop: ask -> TrialSpec -> executor -> TrialResult -> store -> tell.

`prepare` (search/engine/prepare.py) resolves a `RunSpec`; `StudyLoop` runs it over any `StudyStore`
(search/engine/study_store.py); owners and heartbeats are in search/engine/ownership.py, jobs and
retries in search/engine/retries.py.

Everything a user can get wrong is checked in `prepare` before the database is touched,
so bad input leaves the database as it was. Each finished trial is committed at once
(one transaction); re-running the same command resumes: finished trials are replayed
into the sampler, trials left `running` by a killed process are marked `interrupted` and
their configurations run again first.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import RejectedInARow
from core.statuses import CURVE_STATUSES, REPLAYED_STATUSES, RETRY_STATUSES
from core.trials import EpochRecord, TrialResult, TrialSpec, TrialStopped
from models import FAMILIES
from search.artifacts.keep import Keeper
from search.artifacts.location import weights_location
from search.engine.deciding import Step, decide_start, plan_round
from search.engine.ownership import Heartbeat, is_orphan, owner_id
from search.engine.prepare import Prepared, prepare, route_sampler, study_fields
from search.engine.pruners import Pruner, make_pruner
from search.engine.retries import Job, checked_train, follow_up, resume_job
from search.engine.sampling import Proposal, Rejection, Sampler, make_sampler
from search.engine.seed_checks import SEED_CHECK, check_note, checked_trial, is_check, plan_checks
from search.engine.specs import RunSpec
from search.engine.study_store import StudyStore
from search.executors import Executor, make_executor
from storage.records import StudyRecord, TrialRecord

MAX_REJECTIONS_IN_A_ROW = 1000


def run_seeds(study_seed: int, family: str, config: dict[str, Any], repeats: int) -> tuple[int, ...]:
    """Seeds of a config's runs: derived from the config, so a re-run gets the same ones."""
    h = hashlib.sha256(json.dumps([study_seed, family, config], sort_keys=True).encode()).hexdigest()
    base = int(h[:8], 16) % 2**31
    return tuple((base + 7919 * r) % 2**31 for r in range(repeats))


class Progress(Protocol):
    def start(self, study: StudyRecord, total: int, done: int, retries: int) -> None: ...
    def trial_started(self, spec: TrialSpec, params: int, note: str | None) -> None: ...
    def epoch(self, spec: TrialSpec, repeat: int, record: EpochRecord) -> None: ...
    def trial_finished(self, spec: TrialSpec, params: int, result: TrialResult, finished: int) -> None: ...
    def rejected(self, rejection: Rejection) -> None: ...
    def close(self) -> None: ...


def study_sampler(spec: RunSpec, prep: Prepared) -> Sampler:
    """The proposer a study of `spec` searches with: its sampler and search settings, with
    what its spaces need (prepare's `route_sampler`, whichever path built `spec`)."""
    routed = route_sampler(spec, prep.spaces)
    return make_sampler(
        routed.sampler,
        prep.spaces,
        prep.io,
        spec.budget,
        prep.count,
        direction=prep.task.direction,
        seed=spec.seed,
        trials=spec.trials,
        settings=routed.sampler_settings(),
    )


@dataclass
class Outcome:
    study: StudyRecord
    finished: int  # finished trials of the study now that no retry supersedes (all processes)
    ran: int  # trials run by this call
    rejected: int  # proposals rejected by this call
    interrupted: int  # orphaned trials found and marked interrupted at the start
    retried: int = 0  # retries run by this call (failed, interrupted, out of memory)
    exhausted: bool = False  # the grid ran out before --trials
    answered: int = 0  # proposals of trained configurations answered from their results by this call (--revisit answer)
    drawn: dict[str, int] = field(default_factory=dict)  # this call's proposals by the Optuna sampler that drew them
    decided: bool = False  # --decide: every named budget was decided before --trials
    timed_out: bool = False  # --time-limit: it passed, so no more trials or seed checks were started
    results: list[TrialResult] = field(default_factory=list)


class StudyLoop:
    """One driver's run of a study, in steps that can be tested alone.

    `start` creates or loads the study, marks orphaned trials interrupted, replays the
    past into the proposer and queues retries; `next_job` gives the next trial to run
    (a queued retry first, else a proposal; rejections are recorded on the way) or None
    when the study has enough trials; `submit` records a trial and hands it to the
    executor; `on_epoch` shows a running trial's epoch and raises `TrialStopped` when the
    pruner stops it; `on_result` stores a finished trial, tells the proposer and queues the
    retry it earns. `run` drives them until the study has `spec.trials` finished trials;
    `--executor tune` drives them from Ray Tune's hooks instead (search/tune/).
    """

    def __init__(
        self, spec: RunSpec, store: StudyStore, progress: Progress, prep: Prepared, executor: Executor | None = None
    ) -> None:
        self.spec, self.store, self.progress, self.prep = spec, store, progress, prep
        self.name = spec.study_name
        self.owner = owner_id()
        self.executor = executor
        self.retries: deque[Job] = deque()
        self.pending: dict[int, Job] = {}  # trial number -> job, for trials in flight
        self.rejected_in_a_row = 0
        self._counted: tuple[int, int] | None = None  # store.progress as on_result just read it
        self._checks: list[TrialRecord] | None = None  # the seed checks still to run, once planned
        self._round: list[Step] = []  # --decide: the jobs of the current round (search/engine/deciding.py)
        self.sampler: Sampler | None = None
        self.pruner: Pruner = Pruner()  # `spec.pruner`'s, built by start()
        self.out: Outcome | None = None
        # Where the processes that train write the weights (`--keep`, `--artifacts`; a
        # folder beside the database file by default; None: none kept, or a store with no
        # URL), and who keeps them as the study grows.
        self.weights: str | None = weights_location(spec.keep, spec.artifacts, getattr(store, "url", None))
        self.keeper: Keeper | None = None
        self.deadline: float | None = None  # time.monotonic() after which nothing new starts (--time-limit)

    # -- steps ----------------------------------------------------------------------
    def start(self) -> Outcome:
        spec, prep, store = self.spec, self.prep, self.store
        study = store.create_or_load_study(self.name, **study_fields(spec, prep))
        if self.weights is not None:
            self.keeper = Keeper(spec.keep, store, self.name, study.direction)
        interrupted = store.interrupt_running(self.name, orphan=is_orphan)
        past = [r for r in store.trials(self.name, statuses=REPLAYED_STATUSES) if not is_check(r)]
        self.sampler = study_sampler(spec, prep)
        # the finished trials' first-seed curves, read once: the pruner judges by them, and a
        # pruned trial is told to the proposer with its value at the epoch it was stopped
        curves = (
            self.store.epochs_of(self.name, CURVE_STATUSES, repeat=0)  # one read, not one per trial
            if spec.pruner != "none"
            else {}
        )
        key, metric = prep.objective_key, prep.task.metric
        stopped = {n: c[-1] for n, rows in curves.items() if (c := first_seed_curve(rows, metric))}
        self.sampler.replay(
            past, lambda r: stopped.get(r.number) if r.status == "pruned" else r.metrics.get(key, (None,))[0]
        )
        self.pruner = self._pruner(past, curves)
        self.retries.extend(
            resume_job(r, spec.train)
            for r in store.retry_candidates(self.name, RETRY_STATUSES, max_attempt=spec.retries)
            if r.family in prep.families
        )
        if self.executor is None:
            self.executor = make_executor(spec.executor, on_epoch=self.on_epoch, **spec.executor_options)
            self.executor.warm(prep.task_spec(self.name))  # the task's data loaded in workers meanwhile
        final, _ = self.counts()
        self.out = Outcome(study, final, 0, 0, len(interrupted))
        if spec.time_limit is not None:  # counted from this run's start: a resume gets its own
            self.deadline = time.monotonic() + spec.time_limit
        self.progress.start(study, spec.trials, final, len(self.retries))
        return self.out

    def _pruner(self, past: list, curves: dict[int, list[dict[str, Any]]]) -> Pruner:
        """`spec.pruner`'s pruner, knowing the curves of the finished trials (so that a
        resumed study judges by the same rule); curves: `Store.epochs_of` of run 0."""
        spec, prep = self.spec, self.prep
        epochs = spec.train.epochs or prep.task.defaults.epochs
        pruner = make_pruner(
            spec.pruner,
            prep.task.direction,
            epochs,
            "parameters" if spec.budget_of == "params" else prep.convention,
            spec.prune_grace,
        )
        if spec.pruner != "none":
            for r in past:
                if r.status in CURVE_STATUSES:
                    pruner.observe(r.params, first_seed_curve(curves.get(r.number, []), prep.task.metric), r.family)
        return pruner

    def counts(self) -> tuple[int, int]:
        """`store.progress` of the search's own trials (its seed checks not counted)."""
        return self.store.progress(self.name, without_note=SEED_CHECK)

    def _queued_finals(self) -> int:
        """Failed trials whose queued retry has not run yet: final until it supersedes them."""
        return sum(j.supersedes_final for j in self.retries)

    def next_job(self) -> Job | None:
        """The next trial to run, or None when the finished and running trials of every
        process reach `spec.trials`, the grid is exhausted (`out.exhausted`) or the time
        limit has passed (`out.timed_out`)."""
        assert self.sampler is not None and self.out is not None, "start() first"
        while True:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.out.timed_out = True
                return None
            # every process's trials count; the reading on_result just took serves once
            final, running = self._counted or self.counts()
            self._counted = None
            self.out.finished = final
            # a queued retry's original is final until the retry supersedes it
            if final - self._queued_finals() + running >= self.spec.trials:
                return self._next_check()
            if self.retries:
                return self.retries.popleft()
            if self.spec.decide and final >= decide_start(self.spec.trials, len(self.prep.families)):
                step = self._next_step()
                if step is None:
                    return None  # a round in flight, or every budget decided
                if step.again is not None:
                    return self._seed_job(step.again, step.runs)
                self.sampler.aim(step.family, step.low, step.high)
            p = self.sampler.ask()
            self.out.answered = self.sampler.answered
            self.out.drawn = self.sampler.drawn()
            if p is None:
                self.out.exhausted = True
                return None
            if isinstance(p, Rejection):
                self._reject(p)
                continue
            self.rejected_in_a_row = 0
            return Job(p, self.spec.train)

    def _next_step(self) -> Step | None:
        """--decide: the next job of the round, or None: the round is still in flight, or
        every named budget is decided (`out.decided`), or nothing is left to try. A new
        round reads the verdicts once the last one has finished (search/engine/deciding.py)."""
        assert self.out is not None
        if not self._round:
            if self.pending:
                return None
            spec, task = self.spec, self.prep.task
            plan = plan_round(
                self.store.trials(self.name),
                task.metric,
                task.direction,
                list(self.prep.families),
                spec,
                self.out.study.settings,  # as created: the design its first trials followed
            )
            if plan is None:
                self.out.decided = True
                return None
            self._round = plan
            if not plan:
                return None
        return self._round.pop(0)

    def _seed_job(self, first: TrialRecord, runs: int) -> Job:
        """One more seed of trial `first`'s configuration: the next seed of its sequence
        after the `runs` it has (its own and its seed checks')."""
        spec = self.spec
        seeds = run_seeds(spec.seed, first.family, first.config, runs + spec.repeats)[runs:]
        proposal = Proposal(first.family, first.config, first.params, note=check_note(first.number), unpruned=True)
        return Job(proposal, checked_train(spec.train, first), seeds=seeds)

    def _next_check(self) -> Job | None:
        """After the trials: the next seed check (search/engine/seed_checks.py), or None.
        The checks are planned once this process's trials have all finished (the plan reads
        the fronts); a search of --repeats 2 or more knows its noise and has none."""
        spec = self.spec
        again = next((j for j in self.retries if is_check_job(j)), None)
        if again is not None:  # a failed check's retry
            self.retries.remove(again)
            return again
        if spec.repeats > 1 or spec.seed_checks <= 0 or self.pending:
            return None
        if self._checks is None:
            key = self.prep.objective_key
            self._checks = plan_checks(
                self.store.trials(self.name),
                lambda r: r.metrics.get(key, (None,))[0],
                self.prep.task.direction,
                spec.seed_checks,
                spec.seed_check_order,
            )
        if not self._checks:
            return None
        first = self._checks.pop(0)
        return self._seed_job(first, len(first.seeds))  # planned only where no check ran

    def _reject(self, p: Rejection) -> None:
        assert self.sampler is not None and self.out is not None
        self.store.add_rejected(self.name, family=p.family, config=p.config, params=p.params or 0, reason=p.reason)
        self.sampler.reject(p)
        self.progress.rejected(p)
        self.out.rejected += 1
        self.rejected_in_a_row += 1
        if self.rejected_in_a_row >= MAX_REJECTIONS_IN_A_ROW:
            raise RejectedInARow(
                f"{self.rejected_in_a_row} proposals in a row were rejected: widen the space or raise the budget"
            )

    def submit(self, job: Job) -> TrialSpec:
        """Record the trial as running (owned by this process) and hand it to the executor."""
        assert self.executor is not None
        spec, p = self.spec, job.proposal
        seeds = job.seeds or run_seeds(spec.seed, p.family, p.config, spec.repeats)
        number = self.store.add_trial(
            self.name,
            family=p.family,
            config=p.config,
            params=p.params,
            seeds=list(seeds),
            optuna=p.optuna,
            note=p.note,
            owner=self.owner,
            attempt=job.attempt,
            retry_of=job.retry_of,
        )
        tspec = TrialSpec(
            self.name,
            number,
            p.family,
            p.config,
            spec.task,
            seeds,
            job.train,
            spec.data_dir,
            spec.task_options,
            weights=self.weights,
            plugins=self.prep.plugins,
        )
        self.pending[number] = job
        self.executor.submit(tspec)
        self.progress.trial_started(tspec, p.params, p.note)
        return tspec

    def on_epoch(self, tspec: TrialSpec, index: int, record: EpochRecord) -> None:
        """After each epoch of a running trial: show it; stop the trial if the pruner says
        so (judged on its first seed)."""
        self.progress.epoch(tspec, index, record)
        job = self.pending.get(tspec.number)
        if index == 0 and job is not None and not job.proposal.unpruned:
            value = record.metrics.get(self.prep.task.metric, math.nan)
            reason = self.pruner.check(job.proposal.params, record.epoch, value, job.proposal.family)
            if reason is not None:
                raise TrialStopped(reason)

    def on_result(self, tspec: TrialSpec, result: TrialResult) -> None:
        """Store a finished trial (one transaction), tell the proposer, queue its retry."""
        assert self.sampler is not None and self.out is not None
        dropped = self.keeper.before_store(result) if self.keeper else []
        self.store.finish_trial(self.name, tspec.number, result)
        job = self.pending.pop(tspec.number)
        if self.keeper is not None:
            self.keeper.after_store(job.proposal.family, result, dropped)
        key = self.prep.objective_key
        if result.status == "complete":
            objective = result.aggregate().get(key, (None,))[0]
        else:  # a pruned trial: its value at the epoch it was stopped (the proposer decides what to make of it)
            stopped = result.runs[0].epochs if result.status == "pruned" and result.runs else []
            objective = stopped[-1].metrics.get(self.prep.task.metric) if stopped else None
        check = is_check_job(job)
        if not check:  # a seed check trains a configuration the sampler already knows
            self.sampler.tell(job.proposal, objective, job.proposal.params, pruned=result.status == "pruned")
        if result.status in CURVE_STATUSES and result.runs and not check:
            curve = [e.metrics.get(self.prep.task.metric, math.nan) for e in result.runs[0].epochs]
            self.pruner.observe(job.proposal.params, curve, job.proposal.family)
        self.out.ran += 1
        self.out.retried += job.attempt > 0
        self.out.results.append(result)
        again = follow_up(
            job,
            tspec.number,
            tspec.seeds,
            result,
            retries=self.spec.retries,
            oom_retry=self.spec.oom_retry,
            default_batch=self.prep.task.defaults.batch_size,
        )
        if again is not None:
            self.retries.append(again)
        self._counted = self.counts()
        self.progress.trial_finished(tspec, job.proposal.params, result, self._counted[0] - self._queued_finals())

    # -- the loop -------------------------------------------------------------------
    def run(self) -> Outcome:
        out = self.start()
        executor = self.executor
        assert executor is not None
        beat = Heartbeat(
            lambda numbers: self.store.heartbeat(self.name, numbers, self.owner), lambda: list(self.pending)
        )
        try:
            while True:
                while executor.in_flight < executor.capacity and not out.exhausted:
                    job = self.next_job()
                    if job is None:
                        break
                    self.submit(job)
                if not executor.in_flight:
                    break
                for tspec, result in executor.wait():
                    self.on_result(tspec, result)
            out.finished = self.counts()[0]
        finally:
            beat.stop()
            if self.pending:  # Ctrl-C or an error: our running trials are interrupted, not lost
                self.store.interrupt_trials(self.name, list(self.pending))
            executor.close()
            self.progress.close()
        return out


def is_check_job(job: Job) -> bool:
    return checked_trial(job.proposal.note) is not None


def first_seed_curve(rows: list[dict[str, Any]], metric: str) -> list[float]:
    """The validation `metric` by epoch of a trial's first run (rows: `Store.epochs`)."""
    return [float(r.get(metric, math.nan)) for r in rows if r["repeat"] == 0]


def run_study(spec: RunSpec, store: StudyStore, progress: Progress, prep: Prepared | None = None) -> Outcome:
    """Run (or resume) the study until it has `spec.trials` finished trials.

    Several processes may run the same study at once (each with its own sampler): each
    trial records its owner and a heartbeat; a trial whose owner died (same host, pid
    gone) or whose heartbeat is stale is an orphan, marked `interrupted` and retried
    (search/engine/ownership.py). Failed and interrupted trials are retried up to
    `spec.retries` times; an out-of-memory failure once more with half the batch when
    `spec.oom_retry` (search/engine/retries.py).
    """
    return StudyLoop(spec, store, progress, prep or prepare(spec)).run()


def known_spaces() -> list[str]:
    return FAMILIES.names()
