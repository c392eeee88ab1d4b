"""The target sizes an Optuna proposer plans for a family's next proposal, with spread
"size" (search/engine/sampling/policies.py): a ramped start, and aims.

- start (`--start`): "spread" (the default) plans nothing, and the sampler draws each
  target over the family's whole size range; "ramp" plans the targets of each family's
  random start (its first `startup_trials` of its share of the trials): the k-th of n
  drawn under a cap rising from its smallest model to the budget (`policies.ramp_target`),
  seeded by the seed, the family and k, so a resumed study draws the same.
- aims (`Sampler.aim`, `search run --decide`): the next proposal is of the family aimed
  at, at a target drawn log-uniformly in the size range given (within its own), seeded by
  the seed, the family and its trials so far.

A budget model due (corners "last": corners.py) comes before the ramp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from search.engine.sampling.policies import ramp_target, startup_trials
from search.engine.sampling.size_axis import SizeAxis, family_rng


class Targets:
    """The ramp of each family's start (`start`) and the aims to serve (`aims`, in order).

    families: the study's, in `--space` order; trials: the study's trial count (each
    family's random start is its share's)."""

    def __init__(self, start: str, seed: int, families: Sequence[str], axis: SizeAxis, trials: int) -> None:
        self.start, self.seed, self.families, self.axis, self.trials = start, seed, list(families), axis, trials
        self.aims: list[tuple[str, float, float]] = []  # (family, low, high) of the next proposals

    def aim(self, family: str, low: float, high: float) -> None:
        """Make a coming proposal one of `family` at a size in [low, high] (parameters)."""
        self.aims.append((family, low, high))

    def next_aim(self) -> tuple[str, float, float] | None:
        """The aim the next proposal serves (family, low, high), if any, taken off the queue."""
        return self.aims.pop(0) if self.aims else None

    def start_trials(self) -> int:
        """The random start of each family's sampler, built for its share of the trials."""
        return startup_trials(max(1, self.trials // len(self.families)))

    def planned(self, fam: str, k: int, due: bool) -> float | None:
        """The target (log10 parameters) of `fam`'s next proposal, its k-th (0-based), if
        planned: its budget model when `due`, else in a ramped start its k-th ramped
        target; None: the sampler draws it."""
        lo, hi = self.axis.range(fam)
        n = self.start_trials()
        if due:
            return hi
        if self.start == "ramp" and k < n:
            rng = family_rng(self.seed, self.families.index(fam), k)
            return ramp_target(lo, hi, k, n, float(rng.uniform()))
        return None

    def aimed(self, fam: str, low: float, high: float, k: int) -> float:
        """The target (log10 parameters) of an aim at [low, high] parameters for `fam`,
        its k-th trial: drawn log-uniformly in it, within `fam`'s size range."""
        lo, hi = self.axis.range(fam)
        a = min(hi, max(lo, math.log10(max(low, 1.0))))
        b = min(hi, max(a, math.log10(max(high, 1.0))))
        rng = family_rng(self.seed, self.families.index(fam), k, 2)
        return float(rng.uniform(a, b))
