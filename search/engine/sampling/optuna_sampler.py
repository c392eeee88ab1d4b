"""The Optuna sampler: a multi-objective Optuna study proposes the next configurations
(fewer parameters, a better validation metric), aimed at sizes, with families taking turns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, distribution_to_json, json_to_distribution
from optuna.trial import TrialState

from core.statuses import FINISHED_STATUSES
from search.engine.sampling.base import UNPRUNED_NOTE, Proposal, Rejection, Sampler, config_key
from search.engine.sampling.optuna_draw import POSITION_SUFFIX, PositionDraw, TrialDraw
from search.engine.sampling.policies import (
    CORNER_SIZES,
    LAST_CORNERS,
    MAX_REVISITS,
    RANDOM_AFTER_REVISITS,
    SamplerSettings,
    has_turns,
    ramp_target,
    size_objective,
    startup_trials,
    uncertain_turn,
)
from search.spaces import Infeasible, min_params, smallest_config, suggest_config
from search.spaces.size_dims import recheck

optuna.logging.set_verbosity(optuna.logging.WARNING)


SIZE_PARAM = "log10_params"  # the Optuna parameter of a proposal's target size
FREE_CHECKS = 5  # a family's first proposals whose free dimensions are counted again


class OptunaSampler(Sampler):
    """Multi-objective Optuna study (params: minimise; metric: the task's direction).

    The family is a categorical parameter when several families are searched; each
    family's keys are prefixed with its name. Our database is the source of truth: on
    resume, finished trials are replayed into a fresh in-memory Optuna study.

    spread "size" (the default): the sampler first draws a target size, the Optuna float
    `FAMILY.log10_params` in [log10 of the family's smallest model, log10 budget], and
    the config is drawn so that its count lands at or just under it
    (`suggest_config(..., target=)`); a new study first visits each family's corners,
    its smallest model and a model at the budget (enqueued trials; `corners` "smallest"
    visits the first only, "none" neither, "last" the smallest first and each family's
    budget model as the study's last trials, trained to the end whatever the pruner says
    (`Proposal.unpruned`): search.engine.sampling.policies). `start` "ramp"
    enqueues the target sizes of each family's random start under a rising cap
    (`ramp_target`; its draw seeded by the seed, the family and the trial's index in its
    family, so a resumed study draws the same). A random sampler
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

    scope "study" (the default): one Optuna study for all families, as above. scope
    "family", with several families: one Optuna study per family (its own seed, corners
    and sampler, built for its share of the trials, so its random start scales with it);
    the turns pick the family and its study draws the rest, so a multi-objective sampler
    ranks a family's trials against its own only (in one study, a family the other
    dominates has no "good" trials and TPE draws it as if at random; GPSampler models only
    what every trial shares, which is `family` alone). One family: the two are the same.
    """

    def __init__(
        self,
        spaces,
        io,
        budget,
        count,
        *,
        make_sampler: Callable[[int, int], optuna.samplers.BaseSampler],
        direction: str,
        seed: int,
        trials: int,
        settings: SamplerSettings | None = None,
        stopped_as_complete: bool = False,
        **options: str,
    ) -> None:
        super().__init__(spaces, io, budget, count)
        # how it searches: `settings`, or one built from `options` (SamplerSettings' field names)
        settings = settings if settings is not None else SamplerSettings(**options)
        spread, share, scope, corners = settings.spread, settings.share, settings.scope, settings.corners
        size_scale, start, revisit = settings.size_scale, settings.start, settings.revisit
        shape_draw = settings.shape_draw
        self.settings = settings
        self.make_sampler, self.direction, self.seed, self.spread = make_sampler, direction, seed, spread
        self.corners = CORNER_SIZES[corners]  # the sizes a new study visits first
        self.budget_last = corners in LAST_CORNERS  # each family's budget model is one of the study's last trials
        self._cornered: set[str] = set()  # families whose budget model was proposed ("last" corners)
        self.start = start  # the target sizes of each family's random start (policies.STARTS)
        self.size_scale = size_scale  # how the sampler is told a trial's parameter count (its first objective)
        self.revisit = revisit  # what a proposal of a configuration trained or pruned gets (policies.REVISITS)
        # how widths and depth are drawn (policies.SHAPE_DRAWS): as Optuna parameters over
        # their moving ranges ("random") or as positions in them ("modelled": `PositionDraw`)
        self._drawer = PositionDraw if shape_draw == "modelled" else TrialDraw
        # config_key -> what the sampler was told of its trial (values, state), if complete or pruned
        self._known: dict[str, tuple[list[float] | None, TrialState]] = {}
        self.answered = 0  # proposals answered from a known result (revisit "answer"), none trained
        self._running: set[str] = set()  # config_keys proposed and not told yet (revisit "answer")
        self._aims: list[tuple[str, float, float]] = []  # (family, low, high) of the next proposals (`aim`)
        self.share, self.trials = share, trials
        # A sampler that reads only complete trials (GPSampler) never sees a pruned one and
        # proposes its region again and again; it is told a pruned trial as complete, with
        # the value it had when it was stopped (below what it would have reached: the
        # region looks as dominated as the pruner found it). Others are told PRUNED.
        self.stopped_as_complete = stopped_as_complete
        self.spaces = dict(spaces)  # a family's space gains a size dimension its first proposals find
        self._checked: dict[str, int] = {}  # proposals per family whose free dimensions were counted again
        # scope "family" (several families, in turns): one Optuna study per family, so each
        # family's sampler ranks and models its own trials only; "study": one study, `family`
        # a parameter (share "free" draws the family, so it needs the one study)
        self.split = scope == "family" and len(self.families) > 1 and has_turns(share)
        self.named = len(self.families) > 1 and not self.split  # the study has a `family` parameter
        self.studies: dict[str | None, optuna.Study] = {}  # family (None: the one shared study) -> study
        self._replayed: dict[str | None, int] = {}  # trials replayed into each study
        self._turns = dict.fromkeys(self.families, 0)  # trials proposed per family (share "equal")
        # share "uncertain": each family's complete (params, objective) points, and for each
        # of its finished trials whether it joined the family's front then
        self._points: dict[str, list[tuple[float, float]]] = {f: [] for f in self.families}
        self._hits: dict[str, list[bool]] = {f: [] for f in self.families}
        self._smallest = (
            {f: min_params(s, io, lambda c, f=f: count(f, c)) for f, s in spaces.items()} if spread == "size" else {}
        )

    @property
    def study(self) -> optuna.Study | None:
        """The one shared Optuna study (scope "study"; None before the first ask)."""
        return self.studies.get(None)

    def _key(self, family: str) -> str | None:
        return family if self.split else None

    def _study(self, key: str | None) -> optuna.Study:
        if key not in self.studies:
            self.studies[key] = self._make_study(key)
        return self.studies[key]

    def _make_study(self, key: str | None) -> optuna.Study:
        """The Optuna study of family `key` (None: of every family); a new one first visits
        its families' corners."""
        replayed = self._replayed.get(key, 0)
        index = 0 if key is None else self.families.index(key)
        seed = self.seed * 100_003 + replayed + 1_000_003 * index  # a resumed study proposes anew
        # a family's own sampler gets its share of the trials (its random start scales with it)
        trials = self.trials if key is None else max(1, self.trials // len(self.families))
        study = optuna.create_study(directions=["minimize", self.direction], sampler=self.make_sampler(seed, trials))
        families = self.families if key is None else [key]
        if self.spread == "size" and not replayed:
            for size in self.corners:  # the corners first
                for fam in families:
                    if self._smallest[fam] <= self.budget:
                        lo, hi = self._size_range(fam)
                        fixed = {f"{fam}.{SIZE_PARAM}": lo if size == "smallest" else hi}
                        if size == "smallest":  # its size dimensions, choices too; free ones drawn
                            space = self.spaces[fam]
                            config = smallest_config(space, self.io, lambda c, f=fam: self.count(f, c))
                            fixed |= {
                                self._fixed_name(fam, k): 0.0 if self._is_position(fam, k) else v
                                for k, v in config.items()
                                if k not in space.free
                            }
                        study.enqueue_trial(fixed | ({"family": fam} if self.named else {}))
        return study

    def _is_position(self, fam: str, key: str) -> bool:
        """Whether `fam`'s dim `key` is drawn as a position (`PositionDraw`: a range dim)."""
        space = self.spaces[fam]
        return self._drawer is PositionDraw and any(
            d.name == key and d.kind != "choice" and space.is_sized(d) for d in space.dims
        )

    def _fixed_name(self, fam: str, key: str) -> str:
        """The Optuna parameter that fixes `fam`'s dim `key` in an enqueued trial (the
        smallest model: each range dim at its lowest, position 0)."""
        return f"{fam}.{key}{POSITION_SUFFIX}" if self._is_position(fam, key) else f"{fam}.{key}"

    @staticmethod
    def _waiting(study: optuna.Study) -> bool:
        """Whether enqueued trials (the corners) are still to be asked."""
        return bool(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))

    def _draw(self, family: str, record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """A recorded draw (params, distributions) as this proposer's study of `family`
        holds it: with the `family` parameter in a shared multi-family study, without it in
        a family's own (a study resumed under another scope is replayed all the same)."""
        params = {k: v for k, v in record["params"].items() if k != "family"}
        dists = {k: json_to_distribution(v) for k, v in record["distributions"].items() if k != "family"}
        if self.named:
            params["family"] = record["params"].get("family", family)
            dists["family"] = (
                json_to_distribution(record["distributions"]["family"])
                if "family" in record["distributions"]
                else CategoricalDistribution(self.families)
            )
        return params, dists

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
        hit = (
            objective is not None
            and math.isfinite(objective)
            and not any(n <= params and sign * v >= sign * objective for n, v in self._points[family])
        )
        self._hits[family].append(hit)
        if objective is not None and math.isfinite(objective):
            self._points[family].append((float(params), float(objective)))

    def replay(self, past, objective) -> None:
        trials: dict[str | None, list[optuna.trial.FrozenTrial]] = {}
        for r in past:
            if r.family in self._turns:  # past: the replayed statuses, rejections excluded
                self._turns[r.family] += 1
                if r.status in FINISHED_STATUSES:
                    obj = objective(r) if r.status == "complete" else None
                    self._finished(r.family, r.params, obj)
            if not r.optuna or (self.split and r.family not in self._turns):
                continue
            if self._is_budget_target(r.family, r.optuna["params"].get(f"{r.family}.{SIZE_PARAM}")):
                self._cornered.add(r.family)
            params, dists = self._draw(r.family, r.optuna)
            values, state = self._outcome(objective(r), r.params, r.status == "pruned", r.status == "complete")
            if r.status in ("complete", "pruned"):
                self._known[config_key(r.family, r.config)] = values, state
            trials.setdefault(self._key(r.family), []).append(
                optuna.trial.create_trial(params=params, distributions=dists, values=values, state=state)
            )
        for key in [None] if not self.split else self.families:
            self._replayed[key] = len(trials.get(key, ()))
            self.studies[key] = self._make_study(key)
            self.studies[key].add_trials(trials.get(key, []))

    def _turn(self) -> str:
        """The family whose turn it is (share "equal" or "uncertain")."""
        if self.share == "equal":
            return min(self.families, key=self._turns.__getitem__)  # first of ties
        return uncertain_turn(self._turns, self._hits)

    def _sized(self, fam: str) -> bool:
        """Whether `fam`'s proposals aim at a target size (spread "size", a model under the budget)."""
        return self.spread == "size" and self._smallest[fam] <= self.budget

    def _is_budget_target(self, fam: str, target: float | None) -> bool:
        return (
            target is not None
            and fam in self._smallest
            and self._sized(fam)
            and abs(float(target) - self._size_range(fam)[1]) < 1e-12
        )

    def _budget_due(self) -> list[str]:
        """With "last" corners, the families whose budget model is due now: those without
        one, once the proposals left are no more than they are."""
        if not self.budget_last:
            return []
        missing = [f for f in self.families if f not in self._cornered and self._sized(f)]
        left = self.trials - sum(self._turns.values())
        return missing if 0 < left <= len(missing) else []

    def _plan(self, fam: str, study: optuna.Study) -> None:
        """Enqueue what `fam`'s next proposal must be, if anything: its budget model when
        due ("last" corners) or, in its random start, a ramped target (`start` "ramp")."""
        if not self._sized(fam) or self._waiting(study):
            return
        lo, hi = self._size_range(fam)
        k, n = self._turns[fam], startup_trials(max(1, self.trials // len(self.families)))
        if fam in self._budget_due():
            target = hi
        elif self.start == "ramp" and k < n:
            rng = np.random.default_rng([self.seed & 0xFFFFFFFF, self.families.index(fam), k])
            target = ramp_target(lo, hi, k, n, float(rng.uniform()))
        else:
            return
        study.enqueue_trial({f"{fam}.{SIZE_PARAM}": target} | ({"family": fam} if self.named else {}))

    def _next_family(self) -> str | None:
        """The family of the next proposal, or None when the sampler draws it (share "free")."""
        if len(self.families) == 1:
            return self.families[0]
        if not has_turns(self.share):
            return None
        due = self._budget_due()
        return due[0] if due else self._turn()

    def ask(self) -> Proposal | Rejection:
        """The next proposal. revisit "answer": a proposal of a configuration the study has
        already trained to the end or stopped (the same family and values, so the same
        seeds: its training would recompute the stored curve exactly, and the Pareto
        pruner, knowing at least what it knew then, would stop it again) is not trained;
        the sampler is told what it was told of the first and proposes again, and after
        RANDOM_AFTER_REVISITS such answers in a row the next target size is drawn at
        random (a GP that keeps proposing the bottom of the size axis proposes it again
        after it is told); after MAX_REVISITS in a row the revisit is trained after all (a
        space whose configurations are all known). A proposal of a configuration still
        training (several trials in flight) is told as failed, which teaches the sampler
        nothing, and asked again the same way."""
        out = self._ask_once()
        if self.revisit != "answer":
            return out
        for k in range(1, MAX_REVISITS + 1):
            if not isinstance(out, Proposal) or out.handle is None:
                return out
            key = config_key(out.family, out.config)
            if key in self._running:
                known: tuple[list[float] | None, TrialState] | None = (None, TrialState.FAIL)
            else:
                known = self._known.get(key)
            if known is None:
                self._running.add(key)
                return out
            self._study(self._key(out.family)).tell(out.handle, known[0], state=known[1])
            self._turns[out.family] -= 1  # not a trial: the family's turn is not spent
            self.answered += 1
            if k >= RANDOM_AFTER_REVISITS and self._sized(out.family):
                self._enqueue_random(out.family)
            out = self._ask_once()
        return out

    def _enqueue_random(self, fam: str) -> None:
        """Enqueue a target size for `fam` drawn log-uniformly over its size range (after
        answered revisits in a row; seeded by the seed, the family and the answers so far)."""
        study = self._study(self._key(fam))
        if self._waiting(study):
            return
        lo, hi = self._size_range(fam)
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, self.families.index(fam), self.answered, 1])
        study.enqueue_trial(
            {f"{fam}.{SIZE_PARAM}": float(rng.uniform(lo, hi))} | ({"family": fam} if self.named else {})
        )

    def aim(self, family: str, low: float, high: float) -> None:
        self._aims.append((family, low, high))

    def _aimed(self, fam: str, study: optuna.Study, low: float, high: float) -> None:
        """Enqueue `fam`'s next proposal at a target size drawn log-uniformly in [low, high]
        (within its size range; seeded by the seed, the family and its trials so far)."""
        if self._waiting(study):
            return
        fixed = {"family": fam} if self.named else {}
        if self._sized(fam):
            lo, hi = self._size_range(fam)
            a = min(hi, max(lo, math.log10(max(low, 1.0))))
            b = min(hi, max(a, math.log10(max(high, 1.0))))
            rng = np.random.default_rng([self.seed & 0xFFFFFFFF, self.families.index(fam), self._turns[fam], 2])
            fixed[f"{fam}.{SIZE_PARAM}"] = float(rng.uniform(a, b))
        if fixed:
            study.enqueue_trial(fixed)

    def _ask_once(self) -> Proposal | Rejection:
        aim = self._aims.pop(0) if self._aims else None
        fam = aim[0] if aim is not None else self._next_family()
        study = self._study(self._key(fam) if fam is not None else None)
        if aim is not None:
            self._aimed(fam, study, aim[1], aim[2])
        elif fam is not None:
            self._plan(fam, study)
        if self.named and fam is not None and not self._waiting(study):
            study.enqueue_trial({"family": fam})  # the turns: the family is fixed, the sampler draws the rest
        t = study.ask()
        if not self.split:
            fam = t.suggest_categorical("family", self.families) if self.named else self.families[0]
        draw, target = self._drawer(t, fam), None
        if self._sized(fam):  # the target size itself is always the Optuna parameter FAMILY.log10_params
            target = 10 ** TrialDraw(t, fam).float(SIZE_PARAM, *self._size_range(fam), False)
        cfg = suggest_config(self.spaces[fam], self.io, self.budget, lambda c: self.count(fam, c), draw, target)
        if isinstance(cfg, Infeasible):
            study.tell(t, state=TrialState.PRUNED)
            return Rejection(fam, cfg.config, None, cfg.reason)
        moved: list[str] = []  # free dimensions found to move the count on a family's first proposals
        if self._checked.get(fam, 0) < FREE_CHECKS:
            self._checked[fam] = self._checked.get(fam, 0) + 1
            self.spaces[fam], moved = recheck(self.spaces[fam], self.io, cfg, lambda c: self.count(fam, c))
        params = self.count(fam, cfg)
        if params > self.budget:  # a free dimension that moves the count here: sized from now on
            study.tell(t, state=TrialState.PRUNED)
            return Rejection(fam, cfg, params, f"over budget: {', '.join(moved)} moves the count here (now sized)")
        record = {
            "params": dict(t.params),
            "distributions": {k: distribution_to_json(d) for k, d in t.distributions.items()},
        }
        at_budget = self._is_budget_target(fam, t.params.get(f"{fam}.{SIZE_PARAM}"))
        last = at_budget and fam in self._budget_due()
        if at_budget:
            self._cornered.add(fam)
        self._turns[fam] += 1
        # a budget model trained last is there for `search compare`'s top levels: the pruner,
        # which judges it against every smaller finished trial, would often stop it
        notes = [UNPRUNED_NOTE] if last else []
        notes += [f"{name} moves the count at this configuration: sized from now on" for name in moved]
        return Proposal(fam, cfg, params, record, handle=t, note="; ".join(notes) or None, unpruned=last)

    def _outcome(
        self, objective: float | None, params: float, pruned: bool, complete: bool = True
    ) -> tuple[list[float] | None, TrialState]:
        """What the Optuna study is told of a finished trial: (values, state); the size on
        the study's `--size-scale`."""
        known = objective is not None and math.isfinite(objective)
        if known and (complete and not pruned or pruned and self.stopped_as_complete):
            return [size_objective(params, self.size_scale), float(objective)], TrialState.COMPLETE
        return None, TrialState.PRUNED if pruned else TrialState.FAIL

    def tell(self, proposal: Proposal, objective: float | None, params: int, pruned: bool = False) -> None:
        ok = objective is not None and math.isfinite(objective) and not pruned
        self._finished(proposal.family, params, objective if ok else None)
        values, state = self._outcome(objective, params, pruned)
        key = config_key(proposal.family, proposal.config)
        self._running.discard(key)
        if ok or pruned:
            self._known[key] = values, state
        if self.split and proposal.family not in self._turns:
            return  # a retried trial of a family this study no longer searches
        study = self._study(self._key(proposal.family))
        if proposal.handle is not None:
            study.tell(proposal.handle, values, state=state)
        elif proposal.optuna:  # a retried config: add it as a finished trial
            params, dists = self._draw(proposal.family, proposal.optuna)
            study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, values=values, state=state))
