"""The default executor: trials run one after another in this process."""
from __future__ import annotations

from typing import Any

from core.errors import UserError
from core.trials import TrialResult, TrialSpec
from search.executors.base import EpochCallback, Executor, run_guarded


class LocalExecutor(Executor):
    capacity = 1

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        if options:
            raise UserError(f"the local executor takes no {', '.join(sorted(options))} (use --executor ray)")

    def __init__(self, on_epoch: EpochCallback | None = None, **options) -> None:
        self.check_options(options)
        self.on_epoch = on_epoch
        self._queue: list[TrialSpec] = []

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(spec)

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def wait(self) -> list[tuple[TrialSpec, TrialResult]]:
        spec = self._queue.pop(0)
        return [(spec, self.run(spec))]

    def run(self, spec: TrialSpec) -> TrialResult:
        cb = (lambda i, rec: self.on_epoch(spec, i, rec)) if self.on_epoch else None
        return run_guarded(spec, on_epoch=cb)
