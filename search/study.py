"""The study loop: ask -> TrialSpec -> executor -> TrialResult -> store -> tell.

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
from dataclasses import dataclass, field
from typing import Any, Protocol

from models import FAMILIES, Family, get_family
from search.budget import format_count
from search.errors import UserError
from search.executors import EXECUTORS, make_executor
from search.proposers import Proposal, Rejection, make_proposer
from search.spaces import Space, build_spaces, min_params
from search.specs import FINISHED_STATUSES, EpochRecord, RunSpec, TrialResult, TrialSpec
from storage.records import StudyRecord, TrialRecord
from tasks import get_task
from tasks.base import IOSpec, Task

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
    EXECUTORS.get(spec.executor)
    io = task.io()
    families = {name: get_family(name) for name in spec.spaces}
    for name, fam in families.items():
        if not fam.fits(io):
            raise UserError(f"space {name!r} does not fit task {spec.task!r} ({io.output} output)")
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
    def start(self, study: StudyRecord, total: int, done: int, interrupted: int) -> None: ...
    def trial_started(self, spec: TrialSpec, params: int, note: str | None) -> None: ...
    def epoch(self, spec: TrialSpec, repeat: int, record: EpochRecord) -> None: ...
    def trial_finished(self, spec: TrialSpec, params: int, result: TrialResult) -> None: ...
    def rejected(self, rejection: Rejection) -> None: ...
    def close(self) -> None: ...


@dataclass
class Outcome:
    study: StudyRecord
    finished: int  # finished trials in the study now
    ran: int  # trials run by this call
    rejected: int  # proposals rejected by this call
    interrupted: int  # trials found interrupted and queued again
    exhausted: bool = False  # the grid ran out before --trials
    results: list[TrialResult] = field(default_factory=list)


def run_study(spec: RunSpec, store: Any, progress: Progress, prep: Prepared | None = None) -> Outcome:
    prep = prep or prepare(spec)
    name, metric = spec.study_name, prep.task.metric
    study = store.create_or_load_study(
        name, task=spec.task, families=list(spec.spaces), metric=metric, direction=prep.task.direction,
        budget=spec.budget,
        settings={"sampler": spec.sampler, "seed": spec.seed, "repeats": spec.repeats, "trials": spec.trials,
                  "train": spec.train.to_dict(), "space_file": spec.space_file, "executor": spec.executor,
                  "task_options": spec.task_options},
    )
    interrupted = store.interrupt_running(name)
    finished = store.trials(name, statuses=FINISHED_STATUSES)
    proposer = make_proposer(
        spec.sampler, prep.spaces, prep.io, spec.budget, prep.count,
        direction=prep.task.direction, seed=spec.seed, trials=spec.trials,
    )
    key = prep.objective_key
    proposer.replay(finished, lambda r: r.metrics.get(key, (None,))[0])
    proposer.requeue([r for r in interrupted if r.family in prep.families])
    executor = make_executor(spec.executor, on_epoch=progress.epoch)
    out = Outcome(study, len(finished), 0, 0, len(interrupted))
    progress.start(study, spec.trials, out.finished, len(interrupted))
    pending: dict[int, Proposal] = {}
    in_a_row = 0
    try:
        while True:
            while (executor.in_flight < executor.capacity
                   and out.finished + executor.in_flight < spec.trials and not out.exhausted):
                p = proposer.ask()
                if p is None:
                    out.exhausted = True
                elif isinstance(p, Rejection):
                    store.add_rejected(name, family=p.family, config=p.config, params=p.params or 0, reason=p.reason)
                    proposer.reject(p)
                    progress.rejected(p)
                    out.rejected += 1
                    in_a_row += 1
                    if in_a_row >= MAX_REJECTIONS_IN_A_ROW:
                        raise UserError(f"{in_a_row} proposals in a row were rejected: widen the space or raise the budget")
                else:
                    in_a_row = 0
                    seeds = run_seeds(spec.seed, p.family, p.config, spec.repeats)
                    number = store.add_trial(name, family=p.family, config=p.config, params=p.params,
                                             seeds=list(seeds), optuna=p.optuna, note=p.note)
                    tspec = TrialSpec(name, number, p.family, p.config, spec.task, seeds, spec.train, spec.data_dir,
                                      spec.task_options)
                    pending[number] = p
                    executor.submit(tspec)
                    progress.trial_started(tspec, p.params, p.note)
            if not executor.in_flight:
                break
            for tspec, result in executor.wait():
                store.finish_trial(name, tspec.number, result)
                p = pending.pop(tspec.number)
                objective = result.aggregate().get(key, (None,))[0] if result.status == "complete" else None
                proposer.tell(p, objective, p.params)
                out.finished += 1
                out.ran += 1
                out.results.append(result)
                progress.trial_finished(tspec, p.params, result)
    finally:
        executor.close()
        progress.close()
    return out


def known_spaces() -> list[str]:
    return FAMILIES.names()
