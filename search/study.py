"""The study loop: ask -> TrialSpec -> executor -> TrialResult -> store -> tell.

Everything a user can get wrong is checked in `prepare` before the database is touched,
so bad input leaves the database as it was. Each finished trial is committed at once
(one transaction); re-running the same command resumes: finished trials are replayed
into the sampler, trials left `running` by a killed process are marked `interrupted` and
their configurations run again first.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import socket
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from core.budget import format_count
from core.errors import UserError
from core.io import IOSpec
from core.statuses import FINISHED_STATUSES
from core.trials import EpochRecord, TrainSettings, TrialResult, TrialSpec
from models import FAMILIES, Family, get_family
from search.executors import EXECUTORS, make_executor
from search.proposers import Proposal, Rejection
from search.samplers import make_proposer
from search.spaces import Space, build_spaces, min_params
from search.specs import RunSpec
from storage.records import StudyRecord, TrialRecord
from tasks import get_task
from tasks.base import Task

MAX_REJECTIONS_IN_A_ROW = 1000


@dataclass
class Prepared:
    spec: RunSpec
    task: Task
    io: IOSpec
    families: dict[str, Family]
    spaces: dict[str, Space]

    def count(self, family: str, config: dict[str, Any]) -> int:
        return self.families[family].count_params(config, self.io)

    @property
    def objective_key(self) -> str:
        """The metric the sampler optimises: the validation value (test stays unseen)."""
        return f"val_{self.task.metric}"


def prepare(spec: RunSpec) -> Prepared:
    """Resolve and validate names, spaces and the budget; touches no database."""
    task = get_task(spec.task, spec.task_options)
    EXECUTORS.get(spec.executor)  # unknown executors fail here, before any write
    io = task.io()
    families = {name: get_family(name) for name in spec.spaces}
    for name, fam in families.items():
        if not fam.fits(io):
            shape = io.input_shape or (io.d_in,)
            raise UserError(f"space {name!r} does not fit task {spec.task!r} ({io.output} output, input shape "
                            f"{tuple(shape)}); 'search spaces' lists the tasks each family fits")
    spaces = build_spaces(list(families), io, spec.space_file)
    prep = Prepared(spec, task, io, families, spaces)
    for name, space in spaces.items():
        smallest = min_params(space, io, lambda c, n=name: prep.count(n, c))
        if math.isinf(smallest):
            raise UserError(f"space {name!r} allows no configuration on {spec.task!r}: check its ranges")
        if smallest > spec.budget:
            raise UserError(
                f"budget {format_count(spec.budget)} is below the smallest {name} model on "
                f"{spec.task} ({smallest:,} parameters)"
            )
    return prep


def default_task(spaces: tuple[str, ...]) -> str:
    """The first family's paper task."""
    return get_family(spaces[0]).default_task


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


@dataclass
class Outcome:
    study: StudyRecord
    finished: int  # finished trials of the study now that no retry supersedes (all processes)
    ran: int  # trials run by this call
    rejected: int  # proposals rejected by this call
    interrupted: int  # orphaned trials found and marked interrupted at the start
    retried: int = 0  # retries run by this call (failed, interrupted, out of memory)
    exhausted: bool = False  # the grid ran out before --trials
    results: list[TrialResult] = field(default_factory=list)


@dataclass
class Job:
    """A trial about to run: a fresh proposal or a retry of an earlier trial."""

    proposal: Proposal
    train: TrainSettings
    attempt: int = 0
    retry_of: int | None = None
    seeds: tuple[int, ...] | None = None
    supersedes_final: bool = False  # the retried trial is failed, so counted as final until this runs


def _oom(result: TrialResult) -> bool:
    return result.status == "failed" and "out of memory" in (result.error or "").lower()


def _retry(record_or_spec: Any, proposal: Proposal, train: TrainSettings, attempt: int, why: str,
           seeds: tuple[int, ...], failed: bool) -> Job:
    note = f"retry {attempt} of trial {record_or_spec.number}: {why}"
    return Job(Proposal(proposal.family, proposal.config, proposal.params, proposal.optuna, note=note),
               train, attempt, record_or_spec.number, seeds, supersedes_final=failed)


def run_study(spec: RunSpec, store: Any, progress: Progress, prep: Prepared | None = None) -> Outcome:
    """Run (or resume) the study until it has `spec.trials` finished trials.

    Several processes may run the same study at once (each with its own sampler): each
    trial records its owner and a heartbeat; a trial whose owner died (same host, pid
    gone) or whose heartbeat is stale is an orphan, marked `interrupted` and retried.
    Failed and interrupted trials are retried up to `spec.retries` times; an
    out-of-memory failure once more with half the batch when `spec.oom_retry`.
    """
    prep = prep or prepare(spec)
    name, metric = spec.study_name, prep.task.metric
    study = store.create_or_load_study(
        name, task=spec.task, families=list(spec.spaces), metric=metric, direction=prep.task.direction,
        budget=spec.budget,
        settings={"sampler": spec.sampler, "seed": spec.seed, "repeats": spec.repeats, "trials": spec.trials,
                  "train": spec.train.to_dict(), "space_file": spec.space_file, "executor": spec.executor,
                  "task_options": spec.task_options,
                  "param_convention": " / ".join(sorted({f.param_convention for f in prep.families.values()}))},
    )
    me = owner_id()
    interrupted = store.interrupt_running(name, orphan=is_orphan)
    past = store.trials(name, statuses=(*FINISHED_STATUSES, "interrupted"))
    proposer = make_proposer(
        spec.sampler, prep.spaces, prep.io, spec.budget, prep.count,
        direction=prep.task.direction, seed=spec.seed, trials=spec.trials,
    )
    key = prep.objective_key
    proposer.replay(past, lambda r: r.metrics.get(key, (None,))[0])
    retries: deque[Job] = deque(
        _retry(r, Proposal(r.family, r.config, r.params, r.optuna), spec.train, r.attempt + 1,
               "interrupted" if r.status == "interrupted" else (r.error or "failed"), tuple(r.seeds),
               r.status == "failed")
        for r in store.retry_candidates(name, ("interrupted", "failed"), max_attempt=spec.retries)
        if r.family in prep.families
    )
    executor = make_executor(spec.executor, on_epoch=progress.epoch, **spec.executor_options)
    final, _ = store.progress(name)
    out = Outcome(study, final, 0, 0, len(interrupted))
    progress.start(study, spec.trials, out.finished, len(retries))
    pending: dict[int, Job] = {}
    beat = Heartbeat(store, name, me, pending)
    in_a_row = 0
    try:
        while True:
            while executor.in_flight < executor.capacity and not out.exhausted:
                final, running = store.progress(name)  # every process's trials count
                out.finished = final
                # a queued retry's original is final until the retry supersedes it
                if final - sum(j.supersedes_final for j in retries) + running >= spec.trials:
                    break
                job = retries.popleft() if retries else None
                if job is None:
                    p = proposer.ask()
                    if p is None:
                        out.exhausted = True
                        break
                    if isinstance(p, Rejection):
                        store.add_rejected(name, family=p.family, config=p.config, params=p.params or 0,
                                           reason=p.reason)
                        proposer.reject(p)
                        progress.rejected(p)
                        out.rejected += 1
                        in_a_row += 1
                        if in_a_row >= MAX_REJECTIONS_IN_A_ROW:
                            raise UserError(f"{in_a_row} proposals in a row were rejected: "
                                            "widen the space or raise the budget")
                        continue
                    in_a_row = 0
                    job = Job(p, spec.train)
                p = job.proposal
                seeds = job.seeds or run_seeds(spec.seed, p.family, p.config, spec.repeats)
                number = store.add_trial(name, family=p.family, config=p.config, params=p.params,
                                         seeds=list(seeds), optuna=p.optuna, note=p.note, owner=me,
                                         attempt=job.attempt, retry_of=job.retry_of)
                tspec = TrialSpec(name, number, p.family, p.config, spec.task, seeds, job.train, spec.data_dir,
                                  spec.task_options)
                pending[number] = job
                executor.submit(tspec)
                progress.trial_started(tspec, p.params, p.note)
            if not executor.in_flight:
                break
            for tspec, result in executor.wait():
                store.finish_trial(name, tspec.number, result)
                job = pending.pop(tspec.number)
                objective = result.aggregate().get(key, (None,))[0] if result.status == "complete" else None
                proposer.tell(job.proposal, objective, job.proposal.params)
                out.ran += 1
                out.retried += job.attempt > 0
                out.results.append(result)
                again = _follow_up(spec, prep, tspec, job, result)
                if again is not None:
                    retries.append(again)
                final = store.progress(name)[0] - sum(j.supersedes_final for j in retries)
                progress.trial_finished(tspec, job.proposal.params, result, final)
        out.finished = store.progress(name)[0]
    finally:
        beat.stop()
        if pending:  # Ctrl-C or an error: our running trials are interrupted, not lost
            store.interrupt_trials(name, list(pending))
        executor.close()
        progress.close()
    return out


def _follow_up(spec: RunSpec, prep: Prepared, tspec: TrialSpec, job: Job, result: TrialResult) -> Job | None:
    """The retry a finished trial earns, if any."""
    if _oom(result) and spec.oom_retry and not job.train.batch_size_halved:
        batch = (job.train.batch_size or prep.task.defaults.batch_size) // 2
        if batch >= 2:
            train = dataclasses.replace(job.train, batch_size=batch, batch_size_halved=True)
            return _retry(tspec, job.proposal, train, job.attempt + 1, f"out of memory; batch size {batch}",
                          tspec.seeds, True)
    if result.status == "failed" and job.attempt < spec.retries:
        return _retry(tspec, job.proposal, job.train, job.attempt + 1, result.error or "failed", tspec.seeds, True)
    return None


# ---------------------------------------------------------------- owners and heartbeats

HEARTBEAT_S = 10.0  # how often a driver refreshes its running trials
STALE_S = 120.0  # a running trial without a heartbeat for this long is an orphan


def owner_id() -> str:
    """"host:pid:token" of this process (the token tells apart reused pids)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_orphan(trial: TrialRecord, now: datetime | None = None) -> bool:
    """No live process runs this trial: no owner, its owner's process is gone (same
    host), or its heartbeat is older than STALE_S."""
    if not trial.owner:
        return True
    host, _, rest = trial.owner.partition(":")
    pid = rest.partition(":")[0]
    if host == socket.gethostname() and pid.isdigit() and not _pid_alive(int(pid)):
        return True
    now = now or datetime.now(timezone.utc)
    return trial.heartbeat_at is None or (now - trial.heartbeat_at).total_seconds() > STALE_S


class Heartbeat:
    """A daemon thread that refreshes the heartbeat of this process's running trials."""

    def __init__(self, store: Any, study: str, owner: str, pending: dict[int, Any]) -> None:
        self.store, self.study, self.owner, self.pending = store, study, owner, pending
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="search-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self.store.heartbeat(self.study, list(self.pending), self.owner)
            except Exception:  # a missed beat is harmless; the next one retries
                pass

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def known_spaces() -> list[str]:
    return FAMILIES.names()
