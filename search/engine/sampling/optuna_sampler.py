"""The Optuna sampler: a multi-objective Optuna study proposes the next configurations
(fewer parameters, a better validation metric), aimed at sizes, with families taking turns.

`OptunaSampler` is the loop of ask and tell; its policies live in files of their own:
turns.py (`Turns`: which family is next, `share`), corners.py (`Corners`: what a new study
visits first, `corners`), targets.py (`Targets`: a ramped start, `start`, and aims),
revisits.py (`Revisits`: a proposal of a known configuration, `revisit`), all on
size_axis.py (`SizeAxis`: each family's target sizes, spread "size").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution, distribution_to_json, json_to_distribution
from optuna.trial import TrialState

from core.statuses import FINISHED_STATUSES
from search.engine.sampling.base import UNPRUNED_NOTE, Proposal, Rejection, Sampler
from search.engine.sampling.corners import Corners
from search.engine.sampling.drawn import drawn_by
from search.engine.sampling.optuna_draw import POSITION_SUFFIX, PositionDraw, TrialDraw
from search.engine.sampling.policies import MAX_REVISITS, SamplerSettings, has_turns, size_objective
from search.engine.sampling.revisits import Revisits, Told
from search.engine.sampling.size_axis import SIZE_PARAM, SizeAxis, target_trial, waiting
from search.engine.sampling.targets import Targets
from search.engine.sampling.turns import Turns
from search.spaces import Infeasible, min_params, smallest_config, suggest_config
from search.spaces.size_dims import recheck

optuna.logging.set_verbosity(optuna.logging.WARNING)

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
        self.settings = settings
        self.make_sampler, self.direction, self.seed, self.spread = make_sampler, direction, seed, settings.spread
        self.share, self.trials, self.start, self.revisit = settings.share, trials, settings.start, settings.revisit
        self.size_scale = settings.size_scale  # how the sampler is told a trial's parameter count (its first objective)
        # A sampler that reads only complete trials (GPSampler) never sees a pruned one and
        # proposes its region again and again; it is told a pruned trial as complete, with
        # the value it had when it was stopped (below what it would have reached: the
        # region looks as dominated as the pruner found it). Others are told PRUNED.
        self.stopped_as_complete = stopped_as_complete
        # how widths and depth are drawn (policies.SHAPE_DRAWS): as Optuna parameters over
        # their moving ranges ("random") or as positions in them ("modelled": `PositionDraw`)
        self._drawer = PositionDraw if settings.shape_draw == "modelled" else TrialDraw
        self.spaces = dict(spaces)  # a family's space gains a size dimension its first proposals find
        self._checked: dict[str, int] = {}  # proposals per family whose free dimensions were counted again
        # scope "family" (several families, in turns): one Optuna study per family, so each
        # family's sampler ranks and models its own trials only; "study": one study, `family`
        # a parameter (share "free" draws the family, so it needs the one study)
        self.split = settings.scope == "family" and len(self.families) > 1 and has_turns(self.share)
        self.named = len(self.families) > 1 and not self.split  # the study has a `family` parameter
        self.studies: dict[str | None, optuna.Study] = {}  # family (None: the one shared study) -> study
        self._replayed: dict[str | None, int] = {}  # trials replayed into each study
        smallest = (
            {f: min_params(s, io, lambda c, f=f: count(f, c)) for f, s in spaces.items()}
            if self.spread == "size"
            else {}
        )
        # the policies, each in a file of its own
        self.axis = SizeAxis(smallest, budget, self.spread)  # each family's target sizes
        self.turns = Turns(self.families, self.share, direction)  # which family is next
        self.corners = Corners(settings.corners, self.families, self.axis, trials)  # what a new study visits first
        self.targets = Targets(self.start, seed, self.families, self.axis, trials)  # a ramped start, aims
        self.revisits = Revisits(self.revisit, seed, self.families, self.axis)  # proposals of known configurations
        self._drawn: Counter[str] = Counter()  # proposals by the Optuna sampler that drew them

    def drawn(self) -> dict[str, int]:
        """Proposals by the Optuna sampler that drew them (drawn.drawn_by), this process's."""
        return dict(self._drawn)

    @property
    def answered(self) -> int:
        """Proposals answered from a known result (revisit "answer"), none trained."""
        return self.revisits.answered

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
        if not replayed:
            self.corners.enqueue(study, self.families if key is None else [key], self._smallest_fixed, self.named)
        return study

    def _smallest_fixed(self, fam: str) -> dict[str, Any]:
        """What fixes `fam`'s smallest model in an enqueued trial besides its target size:
        its size dimensions, choices too (free ones are drawn)."""
        space = self.spaces[fam]
        config = smallest_config(space, self.io, lambda c: self.count(fam, c))
        return {
            self._fixed_name(fam, k): 0.0 if self._is_position(fam, k) else v
            for k, v in config.items()
            if k not in space.free
        }

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

    def replay(self, past, objective) -> None:
        trials: dict[str | None, list[optuna.trial.FrozenTrial]] = {}
        for r in past:
            if self.turns.searches(r.family):  # past: the replayed statuses, rejections excluded
                self.turns.spend(r.family)
                if r.status in FINISHED_STATUSES:
                    obj = objective(r) if r.status == "complete" else None
                    self.turns.finished(r.family, r.params, obj)
            if not r.optuna or (self.split and not self.turns.searches(r.family)):
                continue
            self.corners.replayed(r.family, r.optuna["params"].get(f"{r.family}.{SIZE_PARAM}"))
            params, dists = self._draw(r.family, r.optuna)
            values, state = self._outcome(objective(r), r.params, r.status == "pruned", r.status == "complete")
            if r.status in ("complete", "pruned"):
                self.revisits.replayed(r.family, r.config, (values, state))
            trials.setdefault(self._key(r.family), []).append(
                optuna.trial.create_trial(params=params, distributions=dists, values=values, state=state)
            )
        for key in [None] if not self.split else self.families:
            self._replayed[key] = len(trials.get(key, ()))
            self.studies[key] = self._make_study(key)
            self.studies[key].add_trials(trials.get(key, []))

    def ask(self) -> Proposal | Rejection:
        """The next proposal; with revisit "answer", one of a configuration already trained
        or stopped is answered from its result and the sampler asked again (revisits.py)."""
        out = self._ask_once()
        if not self.revisits.answers:
            return out
        for k in range(1, MAX_REVISITS + 1):
            if not isinstance(out, Proposal) or out.handle is None:
                return out
            known = self.revisits.answer(out.family, out.config)
            if known is None:
                return out
            self._answer(out, known, k)
            out = self._ask_once()
        return out

    def _answer(self, out: Proposal, known: Told, in_a_row: int) -> None:
        """Tell the sampler a revisit's known result instead of training it; its family's
        turn is not spent. After enough in a row, the next target size is drawn at random."""
        self._study(self._key(out.family)).tell(out.handle, known[0], state=known[1])
        self.turns.give_back(out.family)  # not a trial: the family's turn is not spent
        if self.revisits.answered_one(in_a_row) and self.axis.sized(out.family):
            self._enqueue(out.family, self._study(self._key(out.family)), self.revisits.random_target)

    def aim(self, family: str, low: float, high: float) -> None:
        self.targets.aim(family, low, high)

    def _next_family(self) -> str | None:
        """The family of the next proposal, or None when the sampler draws it (share "free")."""
        if len(self.families) == 1:
            return self.families[0]
        if not self.turns.taken:
            return None
        due = self.corners.due(self.turns.proposed())
        return due[0] if due else self.turns.next()

    def _enqueue(self, fam: str, study: optuna.Study, target: Callable[[str], float | None]) -> None:
        """Enqueue `fam`'s next proposal at `target(fam)` (log10 parameters; None: nothing
        planned), unless enqueued trials are still to be asked."""
        if waiting(study):
            return
        size = target(fam)
        if size is not None:
            study.enqueue_trial(target_trial(fam, size, self.named))

    def _plan(self, fam: str, study: optuna.Study) -> None:
        """Enqueue what `fam`'s next proposal must be, if anything: its budget model when
        due ("last" corners) or, in its random start, a ramped target (`start` "ramp")."""
        if not self.axis.sized(fam):
            return
        due = fam in self.corners.due(self.turns.proposed())
        self._enqueue(fam, study, lambda f: self.targets.planned(f, self.turns.counts[f], due))

    def _aimed(self, fam: str, study: optuna.Study, low: float, high: float) -> None:
        """Enqueue `fam`'s next proposal at a target size drawn log-uniformly in [low, high]
        (within its size range; seeded by the seed, the family and its trials so far)."""
        if waiting(study):
            return
        fixed: dict[str, Any] = {"family": fam} if self.named else {}
        if self.axis.sized(fam):
            fixed[f"{fam}.{SIZE_PARAM}"] = self.targets.aimed(fam, low, high, self.turns.counts[fam])
        if fixed:
            study.enqueue_trial(fixed)

    def _next_trial(self) -> tuple[str | None, optuna.Study]:
        """The family of the next proposal (None: the sampler draws it) and its study, with
        what the proposal must be enqueued: an aim's target, a planned one, or the family
        whose turn it is (the sampler draws the rest)."""
        aim = self.targets.next_aim()
        fam = aim[0] if aim is not None else self._next_family()
        study = self._study(self._key(fam) if fam is not None else None)
        if aim is not None:
            self._aimed(fam, study, aim[1], aim[2])
        elif fam is not None:
            self._plan(fam, study)
        if self.named and fam is not None and not waiting(study):
            study.enqueue_trial({"family": fam})  # the turns: the family is fixed, the sampler draws the rest
        return fam, study

    def _ask_once(self) -> Proposal | Rejection:
        fam, study = self._next_trial()
        t = study.ask()
        if not self.split:
            fam = t.suggest_categorical("family", self.families) if self.named else self.families[0]
        draw, target = self._drawer(t, fam), None
        if self.axis.sized(fam):  # the target size itself is always the Optuna parameter FAMILY.log10_params
            target = 10 ** TrialDraw(t, fam).float(SIZE_PARAM, *self.axis.range(fam), False)
        cfg = suggest_config(self.spaces[fam], self.io, self.budget, lambda c: self.count(fam, c), draw, target)
        if isinstance(cfg, Infeasible):
            study.tell(t, state=TrialState.PRUNED)
            return Rejection(fam, cfg.config, None, cfg.reason)
        moved = self._recheck(fam, cfg)
        params = self.count(fam, cfg)
        if params > self.budget:  # a free dimension that moves the count here: sized from now on
            study.tell(t, state=TrialState.PRUNED)
            return Rejection(fam, cfg, params, f"over budget: {', '.join(moved)} moves the count here (now sized)")
        return self._proposal(fam, cfg, params, t, moved, draw.outside)

    def _recheck(self, fam: str, cfg: dict[str, Any]) -> list[str]:
        """On `fam`'s first FREE_CHECKS proposals, the free dimensions found to move the
        count at `cfg` (its space sizes them from now on)."""
        if self._checked.get(fam, 0) >= FREE_CHECKS:
            return []
        self._checked[fam] = self._checked.get(fam, 0) + 1
        self.spaces[fam], moved = recheck(self.spaces[fam], self.io, cfg, lambda c: self.count(fam, c))
        return moved

    def _proposal(
        self,
        fam: str,
        cfg: dict[str, Any],
        params: int,
        t: optuna.Trial,
        moved: list[str],
        outside: list[str] | tuple[str, ...] = (),
    ) -> Proposal:
        """Trial `t`'s accepted configuration `cfg` of `fam` as a proposal, its turn spent."""
        by = drawn_by(t.study.sampler, t.number)  # the Optuna sampler that drew it (auto: the GP or TPE)
        record = {
            "params": dict(t.params),
            "distributions": {k: distribution_to_json(d) for k, d in t.distributions.items()},
            "drawn_by": by,
        }
        last = self.corners.proposed(fam, t.params.get(f"{fam}.{SIZE_PARAM}"), self.turns.proposed())
        self._drawn[by] += 1
        self.turns.spend(fam)
        # a budget model trained last is there for `search compare`'s top levels: the pruner,
        # which judges it against every smaller finished trial, would often stop it
        notes = [UNPRUNED_NOTE] if last else []
        notes += [f"{name} moves the count at this configuration: sized from now on" for name in moved]
        if outside:  # an enqueued value (a corner's) the budget logic's range did not hold: used as given
            notes.append(f"enqueued outside the range the budget left: {', '.join(outside)}")
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
        self.turns.finished(proposal.family, params, objective if ok else None)
        values, state = self._outcome(objective, params, pruned)
        self.revisits.told(proposal.family, proposal.config, (values, state), known=ok or pruned)
        if self.split and not self.turns.searches(proposal.family):
            return  # a retried trial of a family this study no longer searches
        study = self._study(self._key(proposal.family))
        if proposal.handle is not None:
            study.tell(proposal.handle, values, state=state)
        elif proposal.optuna:  # a retried config: add it as a finished trial
            params, dists = self._draw(proposal.family, proposal.optuna)
            study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, values=values, state=state))
