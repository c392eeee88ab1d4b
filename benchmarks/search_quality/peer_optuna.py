"""Plain Optuna as a peer of the product's search (issue 30): what a user writes.

Follows Optuna's documentation: a multi-objective study (`directions=["minimize", metric's
direction]`: parameters, validation metric), driven through the ask-and-tell interface
(tutorial "Ask-and-Tell Interface") so that the product's study loop and trainer run the
trial; the space define-by-run with a categorical `family` and per-family conditional
parameters (tutorial "Pythonic Search Space": branches), a range that a shape rule ties to
an earlier key drawn as a dependent range (`d_h` in [4, d_z - 1]); samplers with their
defaults except the seed, the start-up trials and NSGA-II's population, sized to the trials.

The hard budget: the exact count is known before training, so a config over the budget
(or breaking a shape rule) is pruned before it trains: `study.tell(trial,
state=TrialState.PRUNED)`, the ask-and-tell form of `raise optuna.TrialPruned()`. Not
`constraints_func` / `Trial.set_constraint`: the samplers read constraints only from
COMPLETE trials, which need both objective values, i.e. a trained over-budget model or an
invented metric. TPE counts pruned trials among its bad ones; NSGA-II and GP skip them.

With several families, GP and NSGA-II model only the parameters every trial has (Optuna's
intersection search space: `family` alone); the per-family parameters are drawn by their
independent sampler, which is random for both. That is how these samplers treat a
conditional space; GP's warning about it is switched off (`warn_independent_sampling=False`),
not the behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import optuna
from optuna.trial import TrialState

from benchmarks.search_quality.peer_space import PeerSpace
from search.engine.sampling import Proposal, Rejection, Sampler
from search.spaces import Dim

optuna.logging.set_verbosity(optuna.logging.WARNING)


def startup_trials(trials: int) -> int:
    """Random start-up trials: Optuna's default 10 from 40 trials on, a quarter of fewer
    (at least 2, so a smoke run of a few trials reaches the model)."""
    return min(10, max(2, trials // 4))


def tpe(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup_trials(trials))


def nsga2(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """A population that fits the trials: about three generations (the product's nsga2 rule)."""
    return optuna.samplers.NSGAIISampler(seed=seed, population_size=min(50, max(4, trials // 3)))


def gp(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    return optuna.samplers.GPSampler(
        seed=seed, n_startup_trials=startup_trials(trials), warn_independent_sampling=False
    )


SAMPLERS: dict[str, Callable[[int, int], optuna.samplers.BaseSampler]] = {"tpe": tpe, "nsga2": nsga2, "gp": gp}


def suggest(trial: optuna.Trial, name: str, dim: Dim, low: float, high: float) -> Any:
    """`dim`'s value drawn by `trial` from [low, high] (log scale, step) or its choices."""
    if dim.kind == "choice":
        return trial.suggest_categorical(name, list(dim.choices))
    if dim.kind == "int":
        return trial.suggest_int(name, int(low), int(high), log=dim.log, step=dim.step)
    return trial.suggest_float(name, float(low), float(high), log=dim.log)


def draw(trial, space: PeerSpace) -> tuple[str, dict[str, Any]] | Rejection:
    """The define-by-run draw a user writes: `family` (when there are several), then its
    parameters, each range narrowed by the keys drawn before it; (family, values by peer
    parameter name), or a Rejection (no count) where no value of a key keeps the rules."""
    fams = space.families
    family = trial.suggest_categorical("family", fams) if len(fams) > 1 else fams[0]
    known, values = space.constants(family), {}
    for name, dim in space.params(family):
        low, high = space.bounds(family, dim, known) if dim.kind != "choice" else (0, 0)
        if low > high:  # no valid value left: the draw so far breaks a shape rule
            return Rejection(family, known, None, f"no {dim.name} keeps the space's rules")
        values[name] = known[dim.name] = suggest(trial, name, dim, low, high)
    return family, values


class OptunaPeer(Sampler):
    """One Optuna study over a `PeerSpace`; proposals carry their live `optuna.Trial`."""

    def __init__(self, space: PeerSpace, sampler: optuna.samplers.BaseSampler, direction: str) -> None:
        super().__init__(space.spaces, space.io, space.budget, space.count)
        self.space = space
        self.study = optuna.create_study(directions=["minimize", direction], sampler=sampler)

    def ask(self) -> Proposal | Rejection:
        trial = self.study.ask()
        drawn = draw(trial, self.space)
        if isinstance(drawn, Rejection):
            self.study.tell(trial, state=TrialState.PRUNED)
            return drawn
        family, values = drawn
        verdict = self.space.judge(family, self.space.config(family, values))
        if isinstance(verdict, Rejection):
            self.study.tell(trial, state=TrialState.PRUNED)
        else:
            verdict.handle = trial
        return verdict

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        ok = objective is not None and math.isfinite(objective) and not pruned
        if ok:
            self.study.tell(proposal.handle, [float(params), float(objective)])
        else:
            self.study.tell(proposal.handle, state=TrialState.PRUNED if pruned else TrialState.FAIL)
