"""What a new Optuna study visits first: each family's corners (`corners`, `--corners`;
search/engine/sampling/policies.py CORNERS, core/limits.py CORNER_SIZES), with spread
"size".

- "both" (the default): each family's smallest model (its size dimensions at their
  smallest, choices too; free ones drawn), then a model at the budget, as enqueued trials
  before the sampler draws;
- "smallest": the smallest models only; "none": neither;
- "last": the smallest models first, and each family's budget model as one of the study's
  last trials: due once the proposals left are no more than the families still missing
  one, and trained to the end whatever the pruner says (`Proposal.unpruned`).

A resumed study visits no corners again; its replayed budget models count as proposed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import optuna

from search.engine.sampling.policies import CORNER_SIZES, LAST_CORNERS
from search.engine.sampling.size_axis import SIZE_PARAM, SizeAxis


class Corners:
    """The corners a new study visits first, and (corners "last") the families whose
    budget model was proposed.

    families: the study's, in `--space` order; trials: the study's trial count (the "last"
    budget models are its last)."""

    def __init__(self, corners: str, families: Sequence[str], axis: SizeAxis, trials: int) -> None:
        self.sizes = CORNER_SIZES[corners]  # the sizes a new study visits first, in order
        self.last = corners in LAST_CORNERS  # each family's budget model is one of the study's last trials
        self.families, self.axis, self.trials = list(families), axis, trials
        self.cornered: set[str] = set()  # families whose budget model was proposed ("last" corners)

    def enqueue(
        self, study: optuna.Study, families: Sequence[str], smallest: Callable[[str], dict[str, Any]], named: bool
    ) -> None:
        """Enqueue `families`' corners in a new `study`: for each corner size in turn,
        each sized family's. smallest(fam): the fixed parameters of `fam`'s smallest
        model besides its target size; named: the study has a `family` parameter."""
        for size in self.sizes:
            for fam in families:
                if self.axis.sized(fam):
                    lo, hi = self.axis.range(fam)
                    fixed: dict[str, Any] = {f"{fam}.{SIZE_PARAM}": lo if size == "smallest" else hi}
                    if size == "smallest":
                        fixed |= smallest(fam)
                    study.enqueue_trial(fixed | ({"family": fam} if named else {}))

    def due(self, proposed: int) -> list[str]:
        """With "last" corners, the families whose budget model is due now, `proposed`
        trials proposed so far: those without one, once the proposals left are no more
        than they are."""
        if not self.last:
            return []
        missing = [f for f in self.families if f not in self.cornered and self.axis.sized(f)]
        left = self.trials - proposed
        return missing if 0 < left <= len(missing) else []

    def replayed(self, fam: str, target: float | None) -> None:
        """A replayed trial of `fam` aimed at `target`: its budget model, if it was one."""
        if self.axis.at_budget(fam, target):
            self.cornered.add(fam)

    def proposed(self, fam: str, target: float | None, proposed: int) -> bool:
        """A proposal of `fam` aimed at `target` (`proposed` trials before it): whether it
        is its budget model trained last ("last" corners: not to be pruned)."""
        at_budget = self.axis.at_budget(fam, target)
        last = at_budget and fam in self.due(proposed)
        if at_budget:
            self.cornered.add(fam)
        return last
