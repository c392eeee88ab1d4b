"""`search run --keep`: which kept weights stay in the store as a study grows.

Run by the driver around each result it stores (`StudyLoop.on_result`):

* `before_store`: the weights of a trial that did not complete (a later seed failed or
  diverged after an earlier one was written) are not recorded, and are deleted once the
  result is stored;
* `after_store`: with `pareto`, the trials of the new trial's family that are no longer
  on that family's Pareto front (parameters minimised, the study's metric in its
  direction: the pages' per-family fronts, `core.pareto.pareto_mask`) lose their
  weights: their records are marked removed first (`Store.remove_artifacts`), then the
  files are deleted, so no record ever points at a file already gone. A trial off its
  front never comes back on it (trials are only added), so the store holds the fronts.

A file that cannot be deleted is reported on stderr and left (its record says removed).
"""

from __future__ import annotations

import sys
from typing import Any

from core.trials import TrialResult
from search.artifacts.location import check_keep, open_location
from search.artifacts.weights import WEIGHTS


class Keeper:
    def __init__(self, keep: str, store: Any, study: str, direction: str) -> None:
        """`direction`: the study metric's; the front is read from the stored objectives
        (`Store.objectives`: the study metric's mean per trial)."""
        self.keep, self.store, self.study, self.direction = check_keep(keep), store, study, direction

    def before_store(self, result: TrialResult) -> list[dict[str, Any]]:
        """Strip the weights records of an incomplete trial from `result`; return them
        (`after_store` deletes their files)."""
        if result.status == "complete":
            return []
        dropped = []
        for run in result.runs:
            record = (run.artifacts or {}).get(WEIGHTS)
            if record is not None:
                dropped.append(record)
                run.artifacts = {k: v for k, v in run.artifacts.items() if k != WEIGHTS}
        return dropped

    def after_store(self, family: str, result: TrialResult, dropped: list[dict[str, Any]]) -> list[int]:
        """Delete the dropped files and, with `pareto`, the weights of the trials of
        `family` now off its front; return the numbers of those trials."""
        off: list[int] = []
        if self.keep == "pareto" and result.status == "complete":
            off = self.off_front(family)
            dropped = dropped + self.store.remove_artifacts(self.study, off, WEIGHTS)
        for record in dropped:
            self._delete(record)
        return off

    def off_front(self, family: str) -> list[int]:
        """The complete trials of `family` not on its Pareto front."""
        from core.pareto import pareto_mask

        # (number, params, objective): the objective column is the study metric's mean, as
        # `trials` gives it, read without every trial's metrics and config (at 10,000 trials
        # 0.9 s a trial through `trials`)
        rows = self.store.objectives(self.study, family, ["complete"])
        if not rows:
            return []
        on = pareto_mask([(float(p), v) for _, p, v in rows], ["minimize", self.direction])
        return [number for (number, _, _), keep in zip(rows, on) if not keep]

    def _delete(self, record: dict[str, Any]) -> None:
        try:
            open_location(record["store"]).remove(record["store_key"])
        except Exception as e:
            print(f"warning: could not delete {record['store_key']} from {record['store']}: {e}", file=sys.stderr)
