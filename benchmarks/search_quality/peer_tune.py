"""Ray Tune's `OptunaSearch` as a peer of the product's search (issue 30): what a Tune user
writes, driven through the Searcher interface Tune itself calls.

A Tune user with a conditional space writes it define-by-run (Tune's docs, "Running Tune
experiments with Optuna": "conditional search spaces ... define-by-run"), a function of
an Optuna trial that draws a `family` and its parameters, returning the constants; and
`OptunaSearch(space=that, metric=["params", METRIC], mode=["min", MODE], seed=SEED)`,
which builds a `TPESampler(seed=SEED)` with Optuna's defaults. Tune asks
`searcher.suggest(trial_id)` for each trial and reports `on_trial_complete(trial_id,
result)` with the trial's last result. This class makes the same calls from the
product's study loop, so the product's trainer runs the trials and only the search
differs (as for the other peers).

The hard budget and the shape rules: the trainable knows a config's exact count before it
trains, so a config over the budget (or breaking a rule) ends before training with no
result, which `OptunaSearch` tells Optuna as PRUNED (`on_trial_complete(id, None)`); a
failed trial is `error=True` (FAIL). A trial stopped by the product's pruner has no final
metric here, so it is PRUNED too (under Tune its last epoch's validation would arrive as a
COMPLETE value; the benchmark's peers run without the product's pruner).

So this is plain Optuna's TPE behind Tune's wrapper, with the same start-up trials as
`optuna-tpe` at 40 trials (Optuna's default 10): the two peers draw the same
configurations, which tests/test_peers_benchmark.py checks.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from ray.tune.search.optuna import OptunaSearch

from benchmarks.search_quality.peer_optuna import draw
from benchmarks.search_quality.peer_space import PeerSpace
from search.engine.sampling import Proposal, Rejection, Sampler


class TuneOptunaPeer(Sampler):
    """Tune's `OptunaSearch` over a `PeerSpace`; proposals carry their Tune trial id."""

    def __init__(self, space: PeerSpace, direction: str, seed: int) -> None:
        super().__init__(space.spaces, space.io, space.budget, space.count)
        self.space = space
        self._ids = (f"trial_{i:05d}" for i in itertools.count())
        self.broken: Rejection | None = None  # the last draw, where it broke a shape rule
        self.searcher = OptunaSearch(
            space=self._define,
            metric=["params", "metric"],
            mode=["min", "max" if direction == "maximize" else "min"],
            seed=seed,
        )

    def _define(self, trial) -> dict[str, Any]:
        """The define-by-run space a Tune user writes (peer_optuna.draw); returns the constants."""
        drawn = draw(trial, self.space)
        self.broken = drawn if isinstance(drawn, Rejection) else None
        return {"family": drawn.family if self.broken else drawn[0]}

    def ask(self) -> Proposal | Rejection:
        trial_id = next(self._ids)
        values = self.searcher.suggest(trial_id)
        family = values.pop("family")
        if self.broken is not None:
            self.searcher.on_trial_complete(trial_id, None)
            return self.broken
        verdict = self.space.judge(family, self.space.config(family, values))
        if isinstance(verdict, Rejection):  # the trainable ends before training, reporting nothing
            self.searcher.on_trial_complete(trial_id, None)
        else:
            verdict.handle = trial_id
        return verdict

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        if objective is not None and math.isfinite(objective) and not pruned:
            self.searcher.on_trial_complete(proposal.handle, {"params": float(params), "metric": float(objective)})
        else:
            self.searcher.on_trial_complete(proposal.handle, None, error=not pruned)
