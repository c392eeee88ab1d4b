"""What an Optuna proposer does with a proposal of a configuration its study has already
trained to the end or stopped: `revisit` (`--revisit`; search/engine/sampling/policies.py
REVISITS).

A configuration's seeds follow from it (the same family and values), so training it again
would recompute the stored curve exactly, and the Pareto pruner, knowing at least what it
knew then, would stop it again.

- "answer" (the default): it is not trained; the sampler is told what it was told of the
  first (`known`) and proposes again. After RANDOM_AFTER_REVISITS such answers in a row the
  next target size is drawn at random (`random_target`: a GP that keeps proposing the
  bottom of the size axis proposes it again after it is told); after MAX_REVISITS in a row
  the revisit is trained after all (a space whose configurations are all known). A
  proposal of a configuration still training (several trials in flight, `running`) is
  told as failed, which teaches the sampler nothing, and asked again the same way.
- "train": it is trained again, as the sampler proposed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from optuna.trial import TrialState

from search.engine.sampling.base import config_key
from search.engine.sampling.policies import RANDOM_AFTER_REVISITS
from search.engine.sampling.size_axis import SizeAxis, family_rng

Told = tuple[list[float] | None, TrialState]  # what a study was told of a trial: (values, state)


class Revisits:
    """The configurations whose results are known (complete or pruned) or still training,
    and how many proposals were answered from a known result."""

    def __init__(self, revisit: str, seed: int, families: Sequence[str], axis: SizeAxis) -> None:
        self.answers = revisit == "answer"  # a revisit is answered, not trained
        self.seed, self.families, self.axis = seed, list(families), axis
        self.known: dict[str, Told] = {}  # config_key -> what the sampler was told of it, if complete or pruned
        self.running: set[str] = set()  # config_keys proposed and not told yet
        self.answered = 0  # proposals answered from a known result, none trained

    def answer(self, family: str, config: dict[str, Any]) -> Told | None:
        """What to tell the sampler of a proposal of (family, config) instead of training
        it: its known result, or a failure while it is still training; None: it is new,
        to be trained (and is running from now on)."""
        key = config_key(family, config)
        known = (None, TrialState.FAIL) if key in self.running else self.known.get(key)
        if known is None:
            self.running.add(key)
        return known

    def answered_one(self, in_a_row: int) -> bool:
        """Count an answered proposal, the `in_a_row`-th in a row: whether the next target
        size is drawn at random (`random_target`)."""
        self.answered += 1
        return in_a_row >= RANDOM_AFTER_REVISITS

    def random_target(self, fam: str) -> float:
        """A target size (log10 parameters) for `fam` drawn log-uniformly over its size
        range, seeded by the seed, the family and the answers so far."""
        lo, hi = self.axis.range(fam)
        rng = family_rng(self.seed, self.families.index(fam), self.answered, 1)
        return float(rng.uniform(lo, hi))

    def told(self, family: str, config: dict[str, Any], told: Told, known: bool) -> None:
        """A proposal of (family, config) finished and the sampler was told `told`;
        `known`: it completed or was pruned, so a revisit of it is answered with that."""
        key = config_key(family, config)
        self.running.discard(key)
        if known:
            self.known[key] = told

    def replayed(self, family: str, config: dict[str, Any], told: Told) -> None:
        """A replayed trial of (family, config) that completed or was pruned, told `told`."""
        self.known[config_key(family, config)] = told
