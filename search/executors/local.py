"""The default executor: trials on this machine. `--workers N` trials at once in worker
processes with `--threads T` torch threads each (search/executors/workers.py), or, with
one worker and no `--trial-timeout`, one after another in this process; `--pack K` trials
of one family at a time as one batched program where they fuse (tasks/fused_train.py).

`--workers auto` (the default, or $SEARCH_WORKERS): on a CPU with at least 2 usable cores
(core/cpus.py: affinity and cgroup quota), one worker per core with one thread each: the
small models of a shape search gain little from a second intra-op thread and a second
trial uses the core fully (docs/results/speed.md, "Both cores"); on a GPU, or with one
core, one trial at a time in this process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from core.cpus import usable_cpus
from core.errors import UserError
from core.trials import TrialResult, TrialSpec
from search.executors.base import EpochCallback, Executor, run_guarded, run_guarded_pack
from search.executors.packs import check_pack, resolve_pack, whole_number

WORKERS_ENV = "SEARCH_WORKERS"  # the default of --workers
# Jobs proposed ahead of a free worker. 0: on 2 cores a job queued ahead made the quickstart
# slower (wall 0.94x without it, median of 3 seeds: the driver's GP fit then competes with two
# busy workers for the cores; docs/data/queued-ahead-2026-12-06.json).
QUEUED_AHEAD = 0
OPTIONS = ("pack", "workers", "threads", "trial_timeout", "device")


@dataclass(frozen=True)
class Placement:
    """How the local executor runs trials: `workers` at once with `threads` torch threads
    each; `in_process` when they run one after another in this process."""

    workers: int
    threads: int | None  # None: torch's own default (in this process)
    in_process: bool

    def describe(self) -> str:
        """The first line's words: '2 trials at once, 1 torch thread each', say."""
        each = "torch's default threads" if self.threads is None else f"{self.threads} torch thread(s)"
        if self.in_process:
            return f"1 trial at a time in this process, {each}"
        return f"{self.workers} trial(s) at once in worker processes, {each} each"


def placement(
    workers: Any = "auto",
    threads: Any = None,
    trial_timeout: float | None = None,
    device: str | None = "auto",
    cores: int | None = None,
) -> Placement:
    """The `Placement` of `--workers`, `--threads` and `--trial-timeout` on `cores` usable
    cores (default: core/cpus.py); UserError (one line) for values that cannot work."""
    cores = usable_cpus() if cores is None else cores
    w = whole_number(workers, "--workers", allow_auto=True)
    t = None if threads is None else int(whole_number(threads, "--threads", allow_auto=False))
    if trial_timeout is not None and (isinstance(trial_timeout, bool) or not trial_timeout > 0):
        raise UserError(f"--trial-timeout must be a positive number of seconds, got {trial_timeout!r}")
    if w == "auto":
        on_gpu = str(device or "auto").startswith("cuda") or (device in (None, "auto") and _has_cuda())
        w = 1 if on_gpu or cores < 2 else cores
        if t is not None and w * t > cores:
            w = max(1, cores // t)
    w = int(w)
    if w > cores:
        raise UserError(f"--workers {w} is more than the {cores} core(s) this process may use")
    if t is not None and w * t > cores:
        raise UserError(
            f"--workers {w} x --threads {t} = {w * t} torch threads would oversubscribe the {cores} "
            "core(s) this process may use"
        )
    in_process = w == 1 and trial_timeout is None
    if t is None and not in_process:
        t = max(1, cores // w)
    return Placement(w, t, in_process)


def placement_of(options: dict[str, Any]) -> Placement:
    """The `Placement` of the local executor's options (`OPTIONS`: workers, threads,
    trial_timeout, device), each option's default where it is not given."""
    return placement(
        options.get("workers", 1), options.get("threads"), options.get("trial_timeout"), options.get("device", "auto")
    )


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


class LocalExecutor(Executor):
    """Trials on this machine: in worker processes (`--workers`) or one at a time in this
    process, `--pack K` of one family as one program where they fuse."""

    capacity = 1

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        other = sorted(set(options) - set(OPTIONS))
        if other:
            raise UserError(f"the local executor takes no {', '.join(other)} (use --executor ray)")
        if "pack" in options:
            check_pack(options["pack"])
        placement_of(options)

    def __init__(self, on_epoch: EpochCallback | None = None, **options) -> None:
        self.check_options(options)
        self.on_epoch = on_epoch
        self.pack = resolve_pack(options.get("pack", "auto"))
        # a subclass that replaces `run` (the benchmarks' instant executors) runs in this process
        self.placement = placement_of(options)
        # with workers, QUEUED_AHEAD jobs more than they hold wait in the pool: a worker that
        # finishes starts one at once, while the driver tells the result and proposes the next
        self.capacity = self.pack * (1 if self.placement.in_process else self.placement.workers + QUEUED_AHEAD)
        self._queue: list[TrialSpec] = []
        self._pool = None
        self._threads_before: int | None = None
        if self.placement.in_process:
            if self.placement.threads is not None:
                import torch

                self._threads_before = torch.get_num_threads()
                torch.set_num_threads(self.placement.threads)
            return
        import torch

        from search.executors.workers import WorkerPool

        # the driver proposes while the workers train: one thread keeps it off their cores
        self._threads_before = torch.get_num_threads()
        torch.set_num_threads(1)
        self._pool = WorkerPool(
            self.placement.workers, self.placement.threads or 1, on_epoch, options.get("trial_timeout")
        )

    def describe(self) -> str:
        return self.placement.describe()

    def warm(self, spec: TrialSpec) -> None:
        if self._pool is not None:
            self._pool.warm(spec)

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(spec)
        if self._pool is not None and len(self._queue) >= self.pack:
            self._pool.submit(self._queue)
            self._queue = []

    @property
    def in_flight(self) -> int:
        return len(self._queue) + (self._pool.in_flight if self._pool is not None else 0)

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """Finished trials. In this process: the queued trials, one by `run` (which a
        subclass may replace, as the benchmarks' instant executors do), several as packs
        where they fuse (`run_guarded_pack`). With worker processes: those finished first."""
        specs, self._queue = self._queue, []
        if self._pool is not None:
            if specs:
                self._pool.submit(specs)
            return self._pool.wait()
        if len(specs) == 1:
            return [(specs[0], self.run(specs[0]))]
        return list(zip(specs, run_guarded_pack(specs, on_epoch=self.on_epoch)))

    def run(self, spec: TrialSpec) -> TrialResult:
        """One trial in this process (`run_guarded`)."""
        cb = (lambda i, rec: self.on_epoch(spec, i, rec)) if self.on_epoch else None
        return run_guarded(spec, on_epoch=cb)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._threads_before is not None:
            import torch

            torch.set_num_threads(self._threads_before)
            self._threads_before = None


def default_workers() -> str:
    """`--workers`'s default: $SEARCH_WORKERS, else auto."""
    return os.environ.get(WORKERS_ENV, "").strip() or "auto"
