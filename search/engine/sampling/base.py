"""What every sampler is, and what it proposes: a `Sampler`'s `ask()` returns a `Proposal`
(a config within budget, with its exact parameter count) or a `Rejection` (never trained;
stored with its reason); `tell()` gives it a finished trial's objectives (params,
validation metric). The samplers themselves: `optuna_sampler.py` (Optuna's, by name) and
`grid.py` (a paper-style grid); `samplers.py` maps the names to them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: building the CLI's parser imports this package, not these
    from core.io import IOSpec
    from search.spaces import Space
    from storage.records import TrialRecord

ParamCounter = Callable[[str, dict[str, Any]], int]  # (family, config) -> exact parameter count


@dataclass
class Proposal:
    """A configuration to train: its family, config and exact count, the Optuna draw that
    made it (for replay), a note, and whether the pruner may stop it."""

    family: str
    config: dict[str, Any]
    params: int
    optuna: dict[str, Any] | None = None  # {"params": ..., "distributions": ...} for replay
    note: str | None = None
    handle: Any = field(default=None, repr=False)  # the live optuna.Trial, if any
    unpruned: bool = False  # trained to the end whatever the pruner says (a budget model trained last)


UNPRUNED_NOTE = "the budget model, trained last (not pruned)"  # a Proposal.unpruned's note, kept by its retries


@dataclass
class Rejection:
    """A proposal that is never trained (over the budget, or breaking a shape rule): stored
    with its reason so that a study says what it refused."""

    family: str
    config: dict[str, Any]
    params: int | None
    reason: str


def config_key(family: str, config: dict[str, Any]) -> str:
    """One string per (family, configuration): keys sorted, so equal configurations match."""
    return json.dumps([family, config], sort_keys=True)


class Sampler:
    """Where a study's next configuration comes from: `ask` proposes (or rejects), `tell`
    teaches it a finished trial, `replay` the study's past on resume, `aim` a size range."""

    answered = 0  # proposals answered from a known result, none trained (OptunaSampler's revisit "answer")

    def drawn(self) -> dict[str, int]:
        """How many of this process's proposals each of its underlying samplers drew (the GP
        and TPE under `auto`); empty where it has one."""
        return {}

    def __init__(self, spaces: dict[str, Space], io: IOSpec, budget: int, count: ParamCounter) -> None:
        self.spaces, self.io, self.budget, self.count = spaces, io, budget, count
        self.families = list(spaces)

    def replay(self, past: list[TrialRecord], objective: Callable[[TrialRecord], float | None]) -> None:
        """Teach the proposer the study's past trials (on resume): complete ones with their
        objectives, the others (failed, diverged, interrupted) as failures."""

    def ask(self) -> Proposal | Rejection | None:
        """The next config; None when the space is exhausted (grid)."""
        raise NotImplementedError

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        """objective: the validation metric (None/NaN when the trial failed; when it was
        pruned, its value at the epoch it was stopped, or None)."""

    def reject(self, rejection: Rejection) -> None:
        """A rejected proposal (already recorded by the caller)."""

    def aim(self, family: str, low: float, high: float) -> None:
        """Make the next proposal one of `family` at a size in [low, high] where the sampler
        draws sizes (`search run --decide`: search/engine/deciding.py); a sampler that
        proposes a fixed order (the grid) goes on with it."""
