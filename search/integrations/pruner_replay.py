"""The Pareto pruner replayed on an unpruned study (issue 11): which trials the rule would
have stopped, at which epoch, and what that would have cost each family's front.

Every trial of an unpruned study (`--pruner none`) trained all its epochs, so its whole
first-seed validation curve is stored. Replayed in trial order with the study's own rule
(search/engine/pruners.py), trial i is judged after each epoch against trials 0..i-1 as they would
have finished (a stopped one with its curve up to its stop), as the local executor with one
trial in flight judges it. This shows what a live pruned search cannot show: whether a
stopped trial would have been on its family's front (a *false stop*), with no sampler-path
difference between a pruned and an unpruned search to blur it. What it does not show: a
sampler told "pruned" would then propose other trials. The live benchmark
(benchmarks/search_quality/search_efficiency.py) measures that whole effect.

Pure functions; shapes:
    trials: sequence of ReplayTrial in trial order
    replay_stops(trials, pruner) -> list[int | None]   (stop epoch, 1-based, or None)
    summarise(trials, stops, direction) -> dict[family, ReplaySummary]
    replay_order(trials, order) -> list[int]   (indices into trials, in the order replayed)
    rank_agreement(trials, epoch) -> dict[family, float]   (Spearman's rho, epoch against the end)
    false_stops(trials, stops, direction) -> list[FalseStop]   (each stopped front trial and its judge)
    best_so_far(trials, direction) -> list[ReplayTrial]   (each curve as its running best)
    rung_trust(trials, rung, direction, first=None) -> dict[family, float | None]   (`rung_keeps` per family)
Any rule, not only the Pareto pruner: `replay_stops` takes a `Pruner` (`pareto`, `rungs`).

`false_stops`, `best_so_far` and `rung_trust` ask why a rule stops front trials
(docs/benchmarks.md §14, "Why the rules stop front trials on generative classification"):
which trial judged each false stop and how the two curves went on; whether judging each
curve's best value so far (an epoch's dip forgiven) stops fewer; and what the checked
rungs' trust test says of a rung on a family's first trials against all of them.

`replay_order` asks what the trial order costs: the same trials replayed smallest first
(every trial that could judge one, having no more parameters, trains before it) or with
each family's budget corner moved to the end (what `--corners last` changes, the
sampler's other proposals aside).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.directions import check_direction
from core.pareto import hypervolume_share, pareto_mask
from search.engine.pruners import Pruner, rung_keeps


@dataclass(frozen=True)
class ReplayTrial:
    family: str
    params: int  # the study's budget measure (what "no more parameters" compares)
    curve: tuple[float, ...]  # first-seed validation metric by epoch (1-based: curve[e - 1])
    value: float  # the reported metric, mean over seeds (what the front is made of)


def replay_stops(trials: Sequence[ReplayTrial], pruner: Pruner) -> list[int | None]:
    """The epoch at which `pruner` would have stopped each trial (None: never), judging
    trial i against trials 0..i-1 only. `pruner` is fresh and is fed as it goes."""
    stops: list[int | None] = []
    for t in trials:
        stop = next(
            (e for e, v in enumerate(t.curve, start=1) if pruner.check(t.params, e, v, t.family) is not None), None
        )
        pruner.observe(t.params, t.curve[:stop] if stop else t.curve, t.family)
        stops.append(stop)
    return stops


ORDERS = ("study", "smallest-first", "budget-last")


def budget_corners(trials: Sequence[ReplayTrial]) -> list[int]:
    """The indices of each family's budget corner in a study of `--corners both`: the larger
    of the family's first two trials (a new study enqueues each family's smallest model,
    then its model at the budget), in study order; none for a family with one trial."""
    firsts: dict[str, list[int]] = {}
    for i, t in enumerate(trials):
        if len(firsts.setdefault(t.family, [])) < 2:
            firsts[t.family].append(i)
    return sorted(max(ix, key=lambda i: trials[i].params) for ix in firsts.values() if len(ix) == 2)


def replay_order(trials: Sequence[ReplayTrial], order: str) -> list[int]:
    """The indices of `trials` (in study order) in the order `order` replays them:
    `study`: as they trained; `smallest-first`: by parameters, ties in study order, so every
    trial that could judge a trial (a finished one of its family with no more parameters)
    has trained before it; `budget-last`: each family's budget corner (`budget_corners`)
    moved after every other trial, in study order."""
    if order == "study":
        return list(range(len(trials)))
    if order == "smallest-first":
        return sorted(range(len(trials)), key=lambda i: trials[i].params)
    if order == "budget-last":
        corners = budget_corners(trials)
        return [i for i in range(len(trials)) if i not in corners] + corners
    raise ValueError(f"unknown replay order {order!r}; known: {', '.join(ORDERS)}")


@dataclass(frozen=True)
class ReplaySummary:
    trials: int
    stopped: int
    work_kept: float  # sum of params x epochs trained with the stops, over that without them
    front: int  # trials on the family's front (params minimised, value in `direction`)
    front_stopped: int  # of those, how many the rule stops: false stops
    hypervolume_kept: float  # the front of the not-stopped trials, as a fraction of the whole front's
    # The least work any stopping rule could keep and still keep the whole front: the front's
    # trials trained to the end, every other trial stopped after its first epoch (issue 25:
    # how much of the compute the front's own trials need).
    front_work: float = 1.0


def _family_front(
    trials: Sequence[ReplayTrial], family: str, direction: str
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(indices of `family`'s trials with a finite value and parameters, their points in
    (log10 params, value), which of them are on the family's front): the front `summarise`
    and `false_stops` both draw."""
    ok = [i for i, t in enumerate(trials) if t.family == family and math.isfinite(t.value) and t.params > 0]
    pts = np.array([[math.log10(trials[i].params), trials[i].value] for i in ok]).reshape(-1, 2)
    return ok, pts, pareto_mask(pts, ["minimize", direction]) if ok else np.zeros(0, dtype=bool)


def summarise(trials: Sequence[ReplayTrial], stops: Sequence[int | None], direction: str) -> dict[str, ReplaySummary]:
    """Per family: what the stops save and what they cost its front. The front and the
    hypervolume are in (log10 params minimised, value in `direction`), against the
    `default_reference` of the family's finite points; trials with a non-finite value are
    on no front."""
    check_direction(direction)
    if len(trials) != len(stops):
        raise ValueError(f"{len(trials)} trials but {len(stops)} stops")
    dirs = ["minimize", direction]
    out: dict[str, ReplaySummary] = {}
    for family in dict.fromkeys(t.family for t in trials):
        mine = [(t, s) for t, s in zip(trials, stops) if t.family == family]
        full = sum(t.params * len(t.curve) for t, _ in mine)
        kept = sum(t.params * (s if s else len(t.curve)) for t, s in mine)
        ok, pts, on_front = _family_front(trials, family, direction)
        survived = np.array([stops[i] is None for i in ok], dtype=bool)
        front_params = {id(trials[i]) for i, on in zip(ok, on_front) if on}
        floor = sum(t.params * (len(t.curve) if id(t) in front_params else min(1, len(t.curve))) for t, _ in mine)
        hv_kept = hypervolume_share(pts, survived, dirs) if len(ok) else 1.0
        out[family] = ReplaySummary(
            trials=len(mine),
            stopped=sum(s is not None for _, s in mine),
            work_kept=kept / full if full else 1.0,
            front=int(on_front.sum()),
            front_stopped=int((on_front & ~survived).sum()),
            hypervolume_kept=float(hv_kept),
            front_work=floor / full if full else 1.0,
        )
    return out


def rank_agreement(trials: Sequence[ReplayTrial], epoch: int) -> dict[str, float]:
    """Per family, Spearman's rank correlation between its trials' validation values at
    `epoch` (1-based) and at their last epoch: how well that epoch ranks the trials a rule
    judges there (1: the same order). Only trials that trained past `epoch` with finite
    values at both count; nan for a family with fewer than three of them or with a
    constant column."""
    from scipy.stats import spearmanr

    out: dict[str, float] = {}
    for family in dict.fromkeys(t.family for t in trials):
        pairs = [
            (t.curve[epoch - 1], t.curve[-1])
            for t in trials
            if t.family == family
            and len(t.curve) > epoch
            and math.isfinite(t.curve[epoch - 1])
            and math.isfinite(t.curve[-1])
        ]
        if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
            out[family] = math.nan
            continue
        out[family] = float(spearmanr([a for a, _ in pairs], [b for _, b in pairs]).statistic)
    return out


@dataclass(frozen=True)
class FalseStop:
    """A trial on its family's front that a rule stopped, and its judge: the best trial
    before it in the replay, of its family, with no more parameters, at the stop epoch
    (the trial `dominated_at` and `rung_verdict` name). Indices are into the replayed
    sequence; values are first-seed validation values (`value`: the reported metric)."""

    index: int
    family: str
    params: int
    stop: int
    at_stop: float
    end: float  # its own last epoch, had it not been stopped
    value: float
    judge: int | None  # None: no earlier trial of the family with no more parameters reached the epoch
    judge_params: int = 0
    judge_at_stop: float = math.nan
    judge_end: float = math.nan  # the judge's own last epoch, had it not been stopped either


def false_stops(trials: Sequence[ReplayTrial], stops: Sequence[int | None], direction: str) -> list[FalseStop]:
    """Each trial on its family's front (as `summarise` draws it) that `stops` stops, in
    replay order, with its judge."""
    check_direction(direction)
    if len(trials) != len(stops):
        raise ValueError(f"{len(trials)} trials but {len(stops)} stops")
    sign = 1.0 if direction == "maximize" else -1.0
    out: list[FalseStop] = []
    for family in dict.fromkeys(t.family for t in trials):
        ok, _, on_front = _family_front(trials, family, direction)
        for i, on in zip(ok, on_front):
            s = stops[i]
            if not on or s is None:
                continue
            t = trials[i]
            # a judge trained to the epoch: its curve up to its own stop
            judges = [
                j
                for j in range(i)
                if trials[j].family == family
                and trials[j].params <= t.params
                and len(trials[j].curve) >= s
                and (stops[j] is None or stops[j] >= s)
                and math.isfinite(trials[j].curve[s - 1])
            ]
            j = max(judges, key=lambda k: sign * trials[k].curve[s - 1], default=None)
            judge = (
                {}
                if j is None
                else dict(
                    judge_params=trials[j].params, judge_at_stop=trials[j].curve[s - 1], judge_end=trials[j].curve[-1]
                )
            )
            out.append(FalseStop(i, family, t.params, s, t.curve[s - 1], t.curve[-1], t.value, j, **judge))
    return sorted(out, key=lambda f: f.index)


def best_so_far(trials: Sequence[ReplayTrial], direction: str) -> list[ReplayTrial]:
    """The trials with each curve replaced by its best value so far (running max or min
    in `direction`; a non-finite value keeps the best before it), the reported value
    unchanged: replayed, a rule judges each trial's best epoch so far against its judges'
    best, so one epoch's dip stops nothing."""
    check_direction(direction)
    better = max if direction == "maximize" else min
    out = []
    for t in trials:
        run: list[float] = []
        for v in t.curve:
            last = run[-1] if run else math.nan
            run.append(v if math.isnan(last) else (better(last, v) if math.isfinite(v) else last))
        out.append(ReplayTrial(t.family, t.params, tuple(run), t.value))
    return out


def rung_trust(
    trials: Sequence[ReplayTrial], rung: int, direction: str, first: int | None = None
) -> dict[str, float | None]:
    """Per family, what `checked-rungs`' trust test (`rung_keeps`) says the rung at epoch
    `rung` keeps of the front, judged on the family's first `first` trials (all of them:
    None), every one trained to the end as in an unpruned study. A test that opens a rung
    on a few trials far apart in size may read 1.0 where all the family's trials, crowded
    near its front, read less."""
    epochs = max((len(t.curve) for t in trials), default=0)
    out: dict[str, float | None] = {}
    for family in dict.fromkeys(t.family for t in trials):
        mine = [(t.params, t.curve) for t in trials if t.family == family]
        out[family] = rung_keeps(rung, mine[:first] if first else mine, epochs, direction)
    return out
