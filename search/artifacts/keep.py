"""`search run --keep`: which kept weights stay in the store as a study grows.

Run by the driver around each result it stores (`StudyLoop.on_result`):

* `before_store`: the weights of a trial that did not complete (a later seed failed or
  diverged after an earlier one was written) are not recorded, and are deleted once the
  result is stored;
* `after_store`: with `pareto`, the trials of the new trial's family whose configuration
  is no longer on that family's Pareto front (parameters minimised, the study's metric in
  its direction: the pages' per-family fronts, `core.pareto.pareto_mask`) lose their
  weights: their records are marked removed first (`Store.remove_artifacts`), then the
  files are deleted, so no record ever points at a file already gone.

A trial keeps its weights while it is on its family's front as the pages draw it (one
point per trial, `reports.fronts.front_data`) or its configuration is on the front as the
verdicts read it (`verdicts.repeats.merge_runs`: the trials of one family and config, a
configuration and its seed checks, are one point at the run-weighted mean of their
objectives; every trial of a front configuration keeps its weights). So both the page's
front trials and the trial a verdict names can be loaded. Trials are only added, so a
trial off both fronts rarely comes back on one: only when a configuration that beat it
gets a worse seed check; its weights are gone by then (loading them says so).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

from core.pooling import pool_runs
from core.trials import TrialResult
from search.artifacts.location import check_keep, open_location
from search.artifacts.weights import WEIGHTS
from storage.records import ObjectiveRow


def configuration_value(members: list[tuple[ObjectiveRow, int]]) -> float:
    """The value of one configuration's trials (each with its runs) on the front: the
    run-weighted mean of their objectives (`merge_runs`'s), a lone trial's own."""
    if len(members) == 1:  # most configurations: one trial
        return members[0][0].objective
    return pool_runs([runs for _, runs in members], [row.objective for row, _ in members])[0]


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
        """The complete trials of `family` on neither of its Pareto fronts: by trial and by
        configuration."""
        from core.pareto import pareto_mask

        # the objective column is the study metric's mean, as `trials` gives it, read
        # without every trial's metrics (at 10,000 trials 0.9 s a trial through `trials`)
        rows = self.store.objectives(self.study, family, ["complete"])
        if not rows:
            return []
        sense = ["minimize", self.direction]
        by_trial = pareto_mask([(float(r.params), r.objective) for r in rows], sense)
        on = {r.number for r, keep in zip(rows, by_trial) if keep}
        # only trials of one size can share a configuration, as `merge_runs` compares them:
        # the configurations (JSON) are read and compared for those sizes alone; where no
        # size is shared the configurations' front is the trials' (reading every trial's
        # config took 40 ms a trial at 10,000 trials)
        sizes = Counter(row.params for row in rows)
        shared = [size for size, count in sizes.items() if count > 1]
        if shared:
            details = {c.number: c for c in self.store.configurations(self.study, family, ["complete"], shared)}
            groups: dict[tuple[int, str | int], list[tuple[ObjectiveRow, int]]] = {}
            for row in rows:
                c = details.get(row.number)
                same = row.number if c is None else json.dumps(c.config, sort_keys=True, default=str)
                groups.setdefault((row.params, same), []).append((row, 1 if c is None else c.runs))
            points = [(float(params), configuration_value(members)) for (params, _), members in groups.items()]
            on |= {r.number for ms, keep in zip(groups.values(), pareto_mask(points, sense)) if keep for r, _ in ms}
        return [r.number for r in rows if r.number not in on]

    def _delete(self, record: dict[str, Any]) -> None:
        try:
            open_location(record["store"]).remove(record["store_key"])
        except Exception as e:
            print(f"warning: could not delete {record['store_key']} from {record['store']}: {e}", file=sys.stderr)
