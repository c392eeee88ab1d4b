"""The default executor: trials run in this process, one after another, or `--pack K` at
a time as one batched program where they fuse (tasks/fused_train.py)."""

from __future__ import annotations

from typing import Any

from core.errors import UserError
from core.trials import TrialResult, TrialSpec
from search.executors.base import EpochCallback, Executor, run_guarded, run_guarded_pack
from search.executors.packs import check_pack, resolve_pack


class LocalExecutor(Executor):
    """Trials in this process, one at a time (or `--pack K` of one family as one program)."""

    capacity = 1

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        other = sorted(set(options) - {"pack"})
        if other:
            raise UserError(f"the local executor takes no {', '.join(other)} (use --executor ray)")
        if "pack" in options:
            check_pack(options["pack"])

    def __init__(self, on_epoch: EpochCallback | None = None, **options) -> None:
        self.check_options(options)
        self.on_epoch = on_epoch
        self.capacity = resolve_pack(options.get("pack", "auto"))
        self._queue: list[TrialSpec] = []

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(spec)

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        """The queued trials, run in this process: one by `run` (which a subclass may
        replace, as the benchmarks' instant executors do), several as packs where they fuse
        (`run_guarded_pack`)."""
        specs, self._queue = self._queue, []
        if len(specs) == 1:
            return [(specs[0], self.run(specs[0]))]
        return list(zip(specs, run_guarded_pack(specs, on_epoch=self.on_epoch)))

    def run(self, spec: TrialSpec) -> TrialResult:
        """One trial in this process (`run_guarded`)."""
        cb = (lambda i, rec: self.on_epoch(spec, i, rec)) if self.on_epoch else None
        return run_guarded(spec, on_epoch=cb)
