"""Each family's size axis (spread "size", search/engine/sampling/policies.py), which an
Optuna proposer's size policies share: the log10 parameter counts from the family's
smallest model to the budget, along which it aims its configurations.

A proposal's target size is the Optuna parameter `FAMILY.log10_params` (`SIZE_PARAM`);
a policy fixes it by enqueueing a trial that sets it (`target_trial`), unless trials the
study enqueued earlier are still to be asked (`waiting`). The policies that do: corners.py
(what a new study visits first, and the budget models trained last), targets.py (a
ramped start, aims) and revisits.py (a random target after answered revisits). spread
"none": no family is sized, and none of them fixes a size.
"""

from __future__ import annotations

import math

import numpy as np
import optuna
from optuna.trial import TrialState

SIZE_PARAM = "log10_params"  # the Optuna parameter of a proposal's target size


def waiting(study: optuna.Study) -> bool:
    """Whether trials enqueued earlier (the corners, a planned target) are still to be asked."""
    return bool(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def target_trial(family: str, target: float, named: bool) -> dict[str, float | str]:
    """The fixed parameters of an enqueued trial of `family` aimed at `target` (log10
    parameters), with the `family` parameter where the study has one (`named`)."""
    return {f"{family}.{SIZE_PARAM}": target} | ({"family": family} if named else {})


def family_rng(seed: int, index: int, *rest: int) -> np.random.Generator:
    """A generator seeded by the study's seed, a family's index in `--space` order and
    `rest` (what the draw counts), so that a resumed study draws the same."""
    return np.random.default_rng([seed & 0xFFFFFFFF, index, *rest])


class SizeAxis:
    """Each family's target sizes: log10 of its smallest model to log10 of the budget.

    smallest: family -> its smallest model's parameter count (empty with spread "none")."""

    def __init__(self, smallest: dict[str, float], budget: float, spread: str) -> None:
        self.smallest, self.budget, self.spread = smallest, budget, spread

    def sized(self, fam: str) -> bool:
        """Whether `fam`'s proposals aim at a target size (spread "size", a model under the budget)."""
        return self.spread == "size" and self.smallest[fam] <= self.budget

    def range(self, fam: str) -> tuple[float, float]:
        """`fam`'s target sizes (log10 parameters): its smallest model's to the budget's."""
        lo = math.log10(max(1.0, self.smallest[fam]))
        return lo, max(lo, math.log10(self.budget))

    def at_budget(self, fam: str, target: float | None) -> bool:
        """Whether `target` (a proposal's log10 target size, None if it had none) is `fam`'s
        budget model: the top of its range."""
        return (
            target is not None
            and fam in self.smallest
            and self.sized(fam)
            and abs(float(target) - self.range(fam)[1]) < 1e-12
        )
