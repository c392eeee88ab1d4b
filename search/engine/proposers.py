"""Where the next configuration comes from: Optuna samplers or a paper-style grid.

A proposer's `ask()` returns a `Proposal` (a config within budget, with its exact
parameter count) or a `Rejection` (never trained; stored with its reason). `tell()` gives
the proposer a finished trial's objectives: (params, validation metric).
"""
from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import optuna
from optuna.distributions import distribution_to_json, json_to_distribution
from optuna.trial import TrialState

from core.io import IOSpec
from core.statuses import FINISHED_STATUSES
from search.engine.optuna_draw import TrialDraw
from search.engine.policies import DEFAULT_SHARE, DEFAULT_SPREAD, uncertain_turn
from search.spaces import (
    Infeasible,
    Space,
    check_config,
    grid_configs,
    min_params,
    smallest_config,
    suggest_config,
)
from storage.records import TrialRecord

optuna.logging.set_verbosity(optuna.logging.WARNING)

ParamCounter = Callable[[str, dict[str, Any]], int]  # (family, config) -> exact parameter count


@dataclass
class Proposal:
    family: str
    config: dict[str, Any]
    params: int
    optuna: dict[str, Any] | None = None  # {"params": ..., "distributions": ...} for replay
    note: str | None = None
    handle: Any = field(default=None, repr=False)  # the live optuna.Trial, if any


@dataclass
class Rejection:
    family: str
    config: dict[str, Any]
    params: int | None
    reason: str


def config_key(family: str, config: dict[str, Any]) -> str:
    return json.dumps([family, config], sort_keys=True)


class Proposer:
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
        """objective: the validation metric (None/NaN when the trial failed or was pruned)."""

    def reject(self, rejection: Rejection) -> None:
        """A rejected proposal (already recorded by the caller)."""


SIZE_PARAM = "log10_params"  # the Optuna parameter of a proposal's target size


class OptunaProposer(Proposer):
    """Multi-objective Optuna study (params: minimise; metric: the task's direction).

    The family is a categorical parameter when several families are searched; each
    family's keys are prefixed with its name. Our database is the source of truth: on
    resume, finished trials are replayed into a fresh in-memory Optuna study.

    spread "size" (the default): the sampler first draws a target size, the Optuna float
    `FAMILY.log10_params` in [log10 of the family's smallest model, log10 budget], and
    the config is drawn so that its count lands at or just under it
    (`suggest_config(..., target=)`); a new study first visits each family's corners,
    its smallest model and a model at the budget (enqueued trials). A random sampler
    then spreads models log-uniformly over the parameter axis, and TPE or NSGA-II learn
    which sizes pay, since the size is one of their parameters. spread "none": every
    range dim is drawn from its budget-feasible range (models pile up in the middle).

    share "equal" (the default), with several families: the families take turns, the one
    with the fewest trials so far (rejections excluded, replayed trials included) goes
    next, ties in `--space` order; its name is enqueued as the trial's fixed `family`
    and the sampler draws the rest. The reports draw one front per family, and a sampler
    left to choose gives most trials to the family leading so far, which leaves the other
    fronts thin (docs/benchmarks.md §14). share "free": `family` is a categorical the
    sampler draws like any other parameter.
    """

    def __init__(self, spaces, io, budget, count, *, make_sampler: Callable[[int], optuna.samplers.BaseSampler],
                 direction: str, seed: int, spread: str = DEFAULT_SPREAD, share: str = DEFAULT_SHARE) -> None:
        super().__init__(spaces, io, budget, count)
        self.make_sampler, self.direction, self.seed, self.spread = make_sampler, direction, seed, spread
        self.share = share
        self.study: optuna.Study | None = None
        self._replayed = 0
        self._turns = dict.fromkeys(self.families, 0)  # trials proposed per family (share "equal")
        # share "uncertain": each family's complete (params, objective) points, and for each
        # of its finished trials whether it joined the family's front then
        self._points: dict[str, list[tuple[float, float]]] = {f: [] for f in self.families}
        self._hits: dict[str, list[bool]] = {f: [] for f in self.families}
        self._smallest = {f: min_params(s, io, lambda c, f=f: count(f, c)) for f, s in spaces.items()} \
            if spread == "size" else {}

    def _make_study(self) -> optuna.Study:
        seed = self.seed * 100_003 + self._replayed  # a resumed study proposes anew
        study = optuna.create_study(directions=["minimize", self.direction], sampler=self.make_sampler(seed))
        if self.spread == "size" and not self._replayed:
            for size in ("smallest", "budget"):  # the corners first
                for fam in self.families:
                    if self._smallest[fam] <= self.budget:
                        lo, hi = self._size_range(fam)
                        fixed = {f"{fam}.{SIZE_PARAM}": lo if size == "smallest" else hi}
                        if size == "smallest":  # the whole config, choices too
                            config = smallest_config(self.spaces[fam], self.io, lambda c, f=fam: self.count(f, c))
                            fixed |= {f"{fam}.{k}": v for k, v in config.items()}
                        study.enqueue_trial(fixed | ({"family": fam} if len(self.families) > 1 else {}))
        return study

    def _waiting(self) -> bool:
        """Whether enqueued trials (the corners) are still to be asked."""
        assert self.study is not None
        return bool(self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))

    def _size_range(self, fam: str) -> tuple[float, float]:
        lo = math.log10(max(1.0, self._smallest[fam]))
        return lo, max(lo, math.log10(self.budget))

    def _finished(self, family: str, params: float, objective: float | None) -> None:
        """Record a finished trial of `family` for share "uncertain" (objective None: it
        failed, diverged or was pruned): a hit when no complete trial of its family with no
        more parameters is at least as good."""
        if family not in self._hits:
            return
        sign = 1.0 if self.direction == "maximize" else -1.0
        hit = objective is not None and math.isfinite(objective) and not any(
            n <= params and sign * v >= sign * objective for n, v in self._points[family])
        self._hits[family].append(hit)
        if objective is not None and math.isfinite(objective):
            self._points[family].append((float(params), float(objective)))

    def replay(self, past, objective) -> None:
        trials = []
        for r in past:
            if r.family in self._turns:  # past: the replayed statuses, rejections excluded
                self._turns[r.family] += 1
                if r.status in FINISHED_STATUSES:
                    obj = objective(r) if r.status == "complete" else None
                    self._finished(r.family, r.params, obj)
            if not r.optuna:
                continue
            dists = {k: json_to_distribution(v) for k, v in r.optuna["distributions"].items()}
            obj = objective(r)
            ok = r.status == "complete" and obj is not None and math.isfinite(obj)
            trials.append(
                optuna.trial.create_trial(
                    params=r.optuna["params"], distributions=dists,
                    values=[float(r.params), obj] if ok else None,
                    state=TrialState.COMPLETE if ok else TrialState.PRUNED if r.status == "pruned" else TrialState.FAIL,
                )
            )
        self._replayed = len(trials)
        self.study = self._make_study()
        self.study.add_trials(trials)

    def ask(self) -> Proposal | Rejection:
        if self.study is None:
            self.study = self._make_study()
        if self.share in ("equal", "uncertain") and len(self.families) > 1 and not self._waiting():
            turn = (min(self.families, key=self._turns.__getitem__) if self.share == "equal"  # first of ties
                    else uncertain_turn(self._turns, self._hits))
            self.study.enqueue_trial({"family": turn})
        t = self.study.ask()
        fam = t.suggest_categorical("family", self.families) if len(self.families) > 1 else self.families[0]
        draw, target = TrialDraw(t, fam), None
        if self.spread == "size" and self._smallest[fam] <= self.budget:
            target = 10 ** draw.float(SIZE_PARAM, *self._size_range(fam), False)
        cfg = suggest_config(self.spaces[fam], self.io, self.budget, lambda c: self.count(fam, c), draw, target)
        if isinstance(cfg, Infeasible):
            self.study.tell(t, state=TrialState.PRUNED)
            return Rejection(fam, cfg.config, None, cfg.reason)
        record = {"params": dict(t.params), "distributions": {k: distribution_to_json(d) for k, d in t.distributions.items()}}
        self._turns[fam] += 1
        return Proposal(fam, cfg, self.count(fam, cfg), record, handle=t)

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        assert self.study is not None
        ok = objective is not None and math.isfinite(objective) and not pruned
        self._finished(proposal.family, params, objective if ok else None)
        values = [float(params), float(objective)] if ok else None
        state = TrialState.COMPLETE if ok else TrialState.PRUNED if pruned else TrialState.FAIL
        if proposal.handle is not None:
            self.study.tell(proposal.handle, values, state=state)
        elif proposal.optuna:  # a retried config: add it as a finished trial
            dists = {k: json_to_distribution(v) for k, v in proposal.optuna["distributions"].items()}
            self.study.add_trial(
                optuna.trial.create_trial(params=proposal.optuna["params"], distributions=dists, values=values, state=state)
            )


class GridProposer(Proposer):
    """Paper-style grid: every family's cartesian product of grid values, shuffled with the
    seed, families interleaved. Points that break a family's shape rule are not part of
    its space and are skipped; points over budget are rejected (recorded)."""

    def __init__(self, spaces, io, budget, count, *, seed: int) -> None:
        super().__init__(spaces, io, budget, count)
        self._done: set[str] = set()
        iters = [zip(itertools.repeat(f), grid_configs(s, seed)) for f, s in spaces.items()]
        self._points: Iterator[tuple[str, dict[str, Any]]] = (
            p for group in itertools.zip_longest(*iters) for p in group if p is not None
        )

    def replay(self, past, objective) -> None:
        self._done |= {config_key(r.family, r.config) for r in past}

    def ask(self) -> Proposal | Rejection | None:
        for fam, cfg in self._points:
            if config_key(fam, cfg) in self._done or check_config(self.spaces[fam], self.io, cfg):
                continue
            self._done.add(config_key(fam, cfg))
            n = self.count(fam, cfg)
            if n > self.budget:
                return Rejection(fam, cfg, n, f"over budget: {n} > {self.budget} parameters")
            return Proposal(fam, cfg, n)
        return None
