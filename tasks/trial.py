"""One trial: each of its seeds trained by the task's trainer (tasks/train.py), or all of
them as one pack (tasks/fused_train.py), then the trial's result.

`run_trial(spec, on_epoch=, keep=)` is what every executor calls for one trial
(search/executors/base.py: `run_guarded`); `run_trials(specs, ...)` trains several, in packs
where they fuse (`--pack K`: `run_guarded_pack`)."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import torch

from core.errors import one_line
from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from tasks.base import Task
from tasks.by_name import TRAINERS, get_task
from tasks.fused_train import PackRun, pack_key, train_runs
from tasks.loading import device_label, load_data, resolve_device
from tasks.train import Keep, OnEpoch, Trainer, _CallbackError


def _seed_runs(
    spec: TrialSpec, task: Task, data: Any, trainer: Trainer, on_epoch: OnEpoch | None
) -> Iterator[tuple[RunResult, str | None]]:
    """Each seed's (run, traceback) in order: the seeds trained as one pack
    (tasks/fused_train.py) when there are several, `spec.train.fuse` is on and the family
    fuses; otherwise one after another, stopping after a pruned run."""
    try:
        if len(spec.seeds) > 1 and spec.train.fuse and pack_key(spec, task) is not None:
            pack = [PackRun(spec, int(seed), index, on_epoch, spec.number) for index, seed in enumerate(spec.seeds)]
            for run, run_tb in train_runs(pack, task, data):
                if run is not None:
                    yield run, run_tb
            return
        for index, seed in enumerate(spec.seeds):
            yield trainer(spec, task, data, int(seed), index, on_epoch)
    except _CallbackError as e:
        raise e.original from None


def run_trial(spec: TrialSpec, *, on_epoch: OnEpoch | None = None, keep: Keep | None = None) -> TrialResult:
    """Train spec.config on spec.task once per seed; on_epoch(repeat_index, record) after
    every epoch of every run (raising TrialStopped there prunes the trial). DataError/UserError from loading
    the data propagate (check
    the data first with tasks.load_data); errors during runs become failed runs.

    `keep(spec, run, state)` gets the state of every complete run as soon as the run ends
    (the state its metrics come from) and returns the record of the file it wrote, kept
    as the run's "weights" artifact; an exception there makes the run failed (no record
    of a file that may be half written). The state itself never leaves this function."""
    t0 = time.perf_counter()
    task = get_task(spec.task, spec.task_options)
    device = _start(spec)
    data = load_data(task, spec.data_dir, device)
    trainer = TRAINERS.get(task.trainer)
    return _trial_result(spec, _seed_runs(spec, task, data, trainer, on_epoch), keep, t0, device)


PackEpoch = Callable[[TrialSpec, int, EpochRecord], None]  # (trial, repeat index, record)


def run_trials(
    specs: list[TrialSpec], *, on_epoch: PackEpoch | None = None, keep: Callable[[TrialSpec], Keep | None] | None = None
) -> list[TrialResult]:
    """Several trials in this process, their results in order. Trials whose runs share a
    `pack_key` (tasks/fused_train.py) train as one pack, every seed of every trial in
    lock-step, each trial recorded as if it had trained alone; a pruned trial leaves the
    pack, the others go on. The others train one at a time (`run_trial`).
    on_epoch(spec, repeat_index, record) after each epoch of each run; keep(spec) is the
    trial's `Keep` (or None). The trials of a pack share its clock: each one's
    `duration_s` is the pack's."""
    tasks_ = [get_task(s.task, s.task_options) for s in specs]
    packs: dict[Any, list[int]] = {}
    for i, (spec, task) in enumerate(zip(specs, tasks_)):
        key = pack_key(spec, task) if spec.train.fuse else None
        packs.setdefault(key if key is not None else ("alone", i), []).append(i)
    results: dict[int, TrialResult] = {}
    for members in packs.values():
        if len(members) > 1:
            results |= dict(zip(members, _run_pack([specs[i] for i in members], tasks_[members[0]], on_epoch, keep)))
            continue
        spec = specs[members[0]]
        results[members[0]] = run_trial(spec, on_epoch=_bound(on_epoch, spec), keep=keep(spec) if keep else None)
    return [results[i] for i in range(len(specs))]


def _bound(on_epoch: PackEpoch | None, spec: TrialSpec) -> OnEpoch | None:
    return None if on_epoch is None else (lambda index, record: on_epoch(spec, index, record))


def _run_pack(
    specs: list[TrialSpec], task: Task, on_epoch: PackEpoch | None, keep: Callable[[TrialSpec], Keep | None] | None
) -> list[TrialResult]:
    t0 = time.perf_counter()
    device = _start(specs[0])
    data = load_data(task, specs[0].data_dir, device)
    runs = [
        PackRun(spec, int(seed), index, _bound(on_epoch, spec), spec.number)
        for spec in specs
        for index, seed in enumerate(spec.seeds)
    ]
    try:
        outcomes = train_runs(runs, task, data)
    except _CallbackError as e:
        raise e.original from None
    by_trial: dict[int, list[tuple[RunResult, str | None]]] = {spec.number: [] for spec in specs}
    for run, (result, tb) in zip(runs, outcomes):
        if result is not None:
            by_trial[run.spec.number].append((result, tb))
    return [
        _trial_result(spec, iter(by_trial[spec.number]), keep(spec) if keep else None, t0, device) for spec in specs
    ]


def _start(spec: TrialSpec) -> torch.device:
    device = resolve_device(spec.train.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    return device


def _trial_result(
    spec: TrialSpec,
    seed_runs: Iterator[tuple[RunResult, str | None]],
    keep: Keep | None,
    t0: float,
    device: torch.device,
) -> TrialResult:
    """The trial's result from its runs in order (stopping after a pruned one), each
    complete run's state handed to `keep` first."""
    runs: list[RunResult] = []
    tb: str | None = None
    for run, run_tb in seed_runs:
        state, run.best_state = run.best_state, None
        if keep is not None and run.status == "complete" and state is not None:
            try:
                run.artifacts = {**run.artifacts, "weights": keep(spec, run, state)}
            except Exception as e:
                run.status, run.error = "failed", f"weights not written: {one_line(e, with_type=True)}"
                run_tb = traceback.format_exc()
        del state
        runs.append(run)
        tb = tb or run_tb
        if run.status == "pruned":
            break

    problems = [r for r in runs if r.status != "complete"]
    status, error = ("complete", None) if runs and not problems else ("failed", "trial has no seeds")
    if problems:
        status, error = problems[0].status, problems[0].error
    return TrialResult(
        number=spec.number,
        status=status,
        runs=runs,
        duration_s=time.perf_counter() - t0,
        device=device_label(device),
        error=error,
        traceback=tb,
        peak_gpu_mib=torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None,
    )
