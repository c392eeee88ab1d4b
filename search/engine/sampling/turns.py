"""Which family an Optuna proposer's next trial is of: the turns (`share`, `--share`;
search/engine/sampling/policies.py SHARES), in a study of several families.

- "equal" (the default): the family with the fewest trials so far goes next (rejections
  excluded, replayed trials included), ties in `--space` order.
- "uncertain": the family whose front still moves (`policies.uncertain_turn` over each
  family's front hits: whether each finished trial joined its family's front then), with
  equal turns to start and a floor of half an equal share.
- "free": no turns; the sampler draws `family` like any other parameter.

The proposer fixes the family whose turn it is (a budget model due first: corners.py);
an answered revisit (revisits.py) is no trial, so its family's turn is given back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from search.engine.sampling.policies import has_turns, uncertain_turn


class Turns:
    """Trials proposed per family, and (share "uncertain") each family's front hits."""

    def __init__(self, families: Sequence[str], share: str, direction: str) -> None:
        self.families, self.share, self.direction = list(families), share, direction
        self.counts = dict.fromkeys(self.families, 0)  # trials proposed per family
        # share "uncertain": each family's complete (params, objective) points, and for
        # each of its finished trials whether it joined the family's front then
        self.points: dict[str, list[tuple[float, float]]] = {f: [] for f in self.families}
        self.hits: dict[str, list[bool]] = {f: [] for f in self.families}

    @property
    def taken(self) -> bool:
        """Whether the families take turns (share "equal" or "uncertain"; not "free")."""
        return has_turns(self.share)

    def searches(self, family: str) -> bool:
        """Whether `family` is one of this study's (a replayed or retried trial may not be)."""
        return family in self.counts

    def proposed(self) -> int:
        """Trials proposed so far, every family's."""
        return sum(self.counts.values())

    def spend(self, family: str) -> None:
        """Count a trial proposed of `family`."""
        self.counts[family] += 1

    def give_back(self, family: str) -> None:
        """Uncount a proposal of `family` that is not a trial (an answered revisit)."""
        self.counts[family] -= 1

    def next(self) -> str:
        """The family whose turn it is (share "equal" or "uncertain")."""
        if self.share == "equal":
            return min(self.families, key=self.counts.__getitem__)  # first of ties
        return uncertain_turn(self.counts, self.hits)

    def finished(self, family: str, params: float, objective: float | None) -> None:
        """Record a finished trial of `family` for share "uncertain" (objective None: it
        failed, diverged or was pruned): a hit when no complete trial of its family with no
        more parameters is at least as good."""
        if family not in self.hits:
            return
        sign = 1.0 if self.direction == "maximize" else -1.0
        hit = (
            objective is not None
            and math.isfinite(objective)
            and not any(n <= params and sign * v >= sign * objective for n, v in self.points[family])
        )
        self.hits[family].append(hit)
        if objective is not None and math.isfinite(objective):
            self.points[family].append((float(params), float(objective)))
