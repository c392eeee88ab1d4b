"""Pareto-aware early stopping (`--pruner pareto|rungs|checked-rungs|none`).

A running trial reports its validation metric after every epoch. With `pareto`, a trial is
stopped at epoch e (e >= the grace period) when a finished trial OF ITS FAMILY with no
more parameters had already reached a clearly better validation value at the same epoch
e: it is dominated at equal fidelity (fewer or as many parameters, better metric), so
finishing it is unlikely to add a point to its family's front. Only its own family
judges it: the pages draw one front per family, and stopping a weaker family's trials
because another family is better would thin out exactly the front being compared (the
first version, which judged across families, did so: docs/benchmarks.md §14). "Clearly": better by more than
`margin` times the
magnitude of the better value (1% by default, e.g. 0.18 dB at 18 dB PSNR).

Only the first seed of a trial is watched and compared (the other seeds run only if it is
not stopped). Stopped trials are stored as `pruned` with the epochs they trained; they
count towards --trials and are told to the sampler as pruned (Optuna's PRUNED state),
never as complete. Optuna's own pruners compare one objective; Ray Tune's schedulers take
one metric: neither knows a parameter budget, hence this rule.

A trial is never stopped after its last epoch (that saves nothing and would discard a
complete result). Executors: the local one calls the check after every epoch and stops
at once; Ray workers post their epochs to the driver, which checks them every poll
interval and posts a stop that the worker reads at its next epoch, so on Ray a stopped
trial may train a few epochs more when its epochs are shorter than the driver's poll
interval (search/executors/ray.py, EpochBoard).

The grace period defaults to a third of the epochs (`--prune-grace`, a fraction of the
epochs): with a learning rate decaying to zero, early epochs rank trials of different
learning rates poorly.

`rungs` (issue 25) judges only at successive-halving rungs, the epochs 1, 3, 9, 27 of 30
(eta 3; `--prune-grace` moves the first rung), and there by rank rather than by a margin:
the family's trials at that epoch are sorted into non-dominated ranks on (parameters,
validation value), and a trial continues while fewer than a third of them rank ahead of
it (asynchronous successive halving with MO-ASHA's ranking, Schmucker et al. 2021). A
trial that no trial with no more parameters beats is never stopped, so the judges are
the same as `pareto`'s. It judges from the first epoch, where `pareto` waits a third of
them; docs/benchmarks.md (issue 25) measures what each saves and costs.

`checked-rungs` opens a rung for a family only while, replayed on that family's own
finished trials, it keeps 0.99 of the front of those that trained to the end (and not
before five did: `rung_trusted`), and lets the Pareto rule judge everywhere else, so a
family whose first epochs mislead (HanNet on digits) is judged as `pareto` judges it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence

import numpy as np

from core.directions import check_direction
from core.pareto import hypervolume_share, pareto_mask
from core.registry import Registry
from core.stops import stop_reason

DEFAULT_MARGIN = 0.01


def dominated_at(
    params: int,
    epoch: int,
    value: float,
    curves: Sequence[tuple[int, Sequence[float]]],
    direction: str,
    margin: float = DEFAULT_MARGIN,
) -> tuple[int, float] | None:
    """(its params, its value) of the best finished trial with params <= `params` whose
    validation value at `epoch` (1-based; curves[i] = (params, values by epoch)) beats
    `value` by more than margin * |that value|; None when there is none. Non-finite values
    never dominate and are never judged."""
    check_direction(direction)
    if not math.isfinite(value):
        return None
    best: tuple[int, float] | None = None
    for n, curve in curves:
        if n > params or len(curve) < epoch or not math.isfinite(curve[epoch - 1]):
            continue
        v = float(curve[epoch - 1])
        if best is None or (v > best[1] if direction == "maximize" else v < best[1]):
            best = (n, v)
    if best is None:
        return None
    gap = best[1] - value if direction == "maximize" else value - best[1]
    return best if gap > margin * abs(best[1]) else None


class Pruner:
    """`none`: never stops a trial."""

    def observe(self, params: int, curve: Sequence[float], family: str = "") -> None:
        """A finished (complete or pruned) trial's first-seed validation curve."""

    def check(self, params: int, epoch: int, value: float, family: str = "") -> str | None:
        """Why a running trial of `family` should stop after `epoch`, or None to go on."""
        return None


DEFAULT_GRACE = 1 / 3  # the grace period, as a fraction of the epochs (`--prune-grace`)


def grace_epochs(epochs: int, fraction: float = DEFAULT_GRACE) -> int:
    """The first epoch at which a trial may be stopped: ceil(fraction * epochs), at least 1."""
    return max(1, math.ceil(epochs * fraction - 1e-9))


class ParetoPruner(Pruner):
    def __init__(
        self,
        direction: str,
        epochs: int,
        grace: int | None = None,
        margin: float = DEFAULT_MARGIN,
        unit: str = "parameters",
    ) -> None:
        """`unit`: what the sizes count, for the reason's text (the study's budget measure)."""
        self.direction, self.margin, self.epochs, self.unit = check_direction(direction), margin, epochs, unit
        self.grace = grace if grace is not None else grace_epochs(epochs)
        self.curves: dict[str, list[tuple[int, list[float]]]] = {}  # family -> finished trials' curves

    def observe(self, params: int, curve: Sequence[float], family: str = "") -> None:
        if curve:
            self.curves.setdefault(family, []).append((params, [float(v) for v in curve]))

    def check(self, params: int, epoch: int, value: float, family: str = "") -> str | None:
        if epoch < self.grace or epoch >= self.epochs:  # never after the last epoch: it saves nothing
            return None
        hit = dominated_at(params, epoch, value, self.curves.get(family, ()), self.direction, self.margin)
        if hit is None:
            return None
        return stop_reason(
            epoch,
            self.epochs,
            f"validation {value:.4g}, while a trial{f' of {family}' if family else ''} "
            f"with {hit[0]:,} {self.unit} (no more than its {params:,}) had {hit[1]:.4g} at that epoch",
        )


def rung_epochs(epochs: int, first: int = 1, eta: int = 3) -> tuple[int, ...]:
    """The rungs of successive halving: first, first * eta, first * eta^2, ... below `epochs`
    (a trial is never judged after its last epoch). 30 epochs: (1, 3, 9, 27)."""
    if first < 1 or eta < 2:
        raise ValueError(f"rungs need first >= 1 and eta >= 2, got {first}, {eta}")
    out, r = [], first
    while r < epochs:
        out.append(r)
        r *= eta
    return tuple(out)


def beaten(a: tuple[int, float], b: tuple[int, float], direction: str) -> bool:
    """Whether point b = (params, value) beats point a: no more parameters and a strictly
    better value (margin 0: at a rung only the rank matters)."""
    return b[0] <= a[0] and (b[1] > a[1] if direction == "maximize" else b[1] < a[1])


def nondominated_ranks(points: Sequence[tuple[int, float]], direction: str) -> list[int]:
    """Non-dominated sorting of (params, value) points under `beaten`: 1 for the points no
    other beats, 2 for those beaten only by rank-1 points, ... (rank(i) = 1 + the largest
    rank among the points that beat i). O(n log n): in order of params, best value first,
    each point takes the first level whose best value so far does not beat it."""
    sign = 1.0 if check_direction(direction) == "maximize" else -1.0
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -sign * points[i][1]))
    levels: list[float] = []  # -(best signed value) of each rank so far: ascending, for bisect
    ranks = [0] * len(points)
    for i in order:
        key = -sign * points[i][1]
        # levels[k - 1] < key: that level's best strictly beats the point (it came first, so
        # it has no more params); levels[k] >= key: no point of level k beats it
        k = bisect.bisect_left(levels, key)
        if k == len(levels):
            levels.append(key)
        else:
            levels[k] = key
        ranks[i] = k + 1
    return ranks


def rung_verdict(
    params: int, value: float, rung: Sequence[tuple[int, float]], direction: str, eta: int = 3
) -> tuple[int, int, tuple[int, float]] | None:
    """Asynchronous successive halving at one rung with the parameter axis (MO-ASHA's
    non-dominated sorting; Schmucker et al. 2021, as Syne Tune's MOASHA): the trial
    (`params`, `value`) continues when fewer than max(1, n // eta) of the n points
    (`rung`: the (params, value) of the other trials of its family at this epoch, plus its
    own) rank ahead of it. A trial no other beats (rank 1) always continues, so the judges
    of a stop are always trials with no more parameters (search/engine/pruners.py's module
    rule). Returns None to continue, else (how many rank ahead, the quota, the best
    point that beats it). Non-finite values are not ranked and never judged."""
    if not math.isfinite(value):
        return None
    pts = [(int(n), float(v)) for n, v in rung if math.isfinite(v)] + [(int(params), float(value))]
    ranks = nondominated_ranks(pts, direction)
    mine = ranks[-1]
    ahead = sum(r < mine for r in ranks[:-1])
    quota = max(1, len(pts) // eta)
    if ahead < quota:
        return None
    beaters = [p for p in pts[:-1] if beaten((params, value), p, direction)]
    best = max(beaters, key=lambda p: p[1]) if direction == "maximize" else min(beaters, key=lambda p: p[1])
    return ahead, quota, best


DEFAULT_ETA = 3


class RungPruner(Pruner):
    """`rungs`: successive-halving rungs at epochs first, first * eta, ... (1, 3, 9, 27 of
    30 by default), judged by `rung_verdict` against the finished (complete or pruned)
    trials of the trial's family that reached the rung. Continuing a promoted trial is the
    trial itself training on (the stopping variant of ASHA, as Optuna's
    SuccessiveHalvingPruner): nothing is paused, checkpointed or re-trained, so a
    promotion costs nothing and every rung's value is the trial's stored epoch."""

    def __init__(
        self, direction: str, epochs: int, first: int = 1, eta: int = DEFAULT_ETA, unit: str = "parameters"
    ) -> None:
        self.direction, self.epochs, self.eta, self.unit = check_direction(direction), epochs, eta, unit
        self.rungs = frozenset(rung_epochs(epochs, first, eta))
        self.curves: dict[str, list[tuple[int, list[float]]]] = {}

    def observe(self, params: int, curve: Sequence[float], family: str = "") -> None:
        if curve:
            self.curves.setdefault(family, []).append((params, [float(v) for v in curve]))

    def check(self, params: int, epoch: int, value: float, family: str = "") -> str | None:
        if epoch not in self.rungs:
            return None
        rung = [(n, c[epoch - 1]) for n, c in self.curves.get(family, ()) if len(c) >= epoch]
        hit = rung_verdict(params, value, rung, self.direction, self.eta)
        if hit is None:
            return None
        ahead, quota, (n, v) = hit
        return stop_reason(
            epoch,
            self.epochs,
            f"at the rung of epoch {epoch}, {ahead} of the {len(rung) + 1} trials"
            f"{f' of {family}' if family else ''} there rank ahead of it (the top "
            f"{quota} continue); a trial with {n:,} {self.unit} (no more than its "
            f"{params:,}) had {v:.4g} against its {value:.4g}",
        )


DEFAULT_MIN_COMPLETE = 5  # trials of a family trained to the end before `checked-rungs` trusts any rung
DEFAULT_KEEP = 0.99  # the share of those trials' front hypervolume a rung must keep to judge


def rung_keeps(
    rung: int, curves: Sequence[tuple[int, Sequence[float]]], epochs: int, direction: str, eta: int = DEFAULT_ETA
) -> float | None:
    """What the rung at epoch `rung` would cost this family's front, judged on its finished
    trials (`curves`: (params, validation by epoch), a stopped one up to its stop): the
    share of the front hypervolume of the trials that trained all `epochs` (on (log10
    params, last value), as the pages and the replay measure a front) kept by the front
    trials the rung would not have stopped, each judged as `rung_verdict` judges, against
    every other finished trial at that epoch. Counting only front trials as survivors makes
    it a lower bound (a stopped front trial's place may be partly held by one behind it).
    None when no trial trained to the end. One ranking: O(n log n) for n finished trials."""
    check_direction(direction)
    finished = [(int(n), [float(v) for v in c]) for n, c in curves if len(c) >= rung]
    ends = [
        (i, n, c[epochs - 1])
        for i, (n, c) in enumerate(finished)
        if len(c) >= epochs and n > 0 and math.isfinite(c[epochs - 1])
    ]
    if not ends:
        return None
    dirs = ["minimize", direction]
    pts = np.array([[math.log10(n), v] for _, n, v in ends])
    front = pareto_mask(pts, dirs)
    ranked = [i for i, (_, c) in enumerate(finished) if math.isfinite(c[rung - 1])]  # NaN is never ranked
    rank = dict(
        zip(ranked, nondominated_ranks([(finished[i][0], finished[i][1][rung - 1]) for i in ranked], direction))
    )
    ordered = sorted(rank.values())
    quota = max(1, len(ranked) // eta)
    # rung_verdict's rule, each trial among all the others: it continues while fewer than
    # `quota` rank ahead of it (lower ranks); a NaN at the rung is never judged
    survives = np.array(
        [on and (i not in rank or bisect.bisect_left(ordered, rank[i]) < quota) for (i, _, _), on in zip(ends, front)],
        dtype=bool,
    )
    return hypervolume_share(pts, survives, dirs)


def rung_trusted(
    rung: int,
    curves: Sequence[tuple[int, Sequence[float]]],
    epochs: int,
    direction: str,
    eta: int = DEFAULT_ETA,
    min_complete: int = DEFAULT_MIN_COMPLETE,
    keep: float = DEFAULT_KEEP,
) -> bool:
    """Whether the rung at epoch `rung` ranks this family's trials well enough to stop any:
    at least `min_complete` of its trials trained to the end, and replayed on its finished
    trials the rung keeps at least `keep` of their front's hypervolume (`rung_keeps`). A
    family whose first epochs rank its trials poorly (HanNet on digits: docs/benchmarks.md
    §14 "Rungs") thus keeps its first rungs closed; one whose epochs rank them well opens
    them after a few trials."""
    complete = sum(len(c) >= epochs and math.isfinite(c[epochs - 1]) for _, c in curves)
    if complete < max(1, min_complete):
        return False
    kept = rung_keeps(rung, curves, epochs, direction, eta)
    return kept is not None and kept >= keep


class CheckedRungPruner(RungPruner):
    """`checked-rungs`: at a rung that `rung_trusted` holds for the trial's family (replayed
    on the family's own finished trials, it keeps `keep` of their front's hypervolume), the
    rung's rank rule; at every other epoch, and at a rung still closed, the Pareto rule
    after its grace period (`ParetoPruner`: a finished trial of the family with no more
    parameters clearly better at that epoch). So a family whose first epochs rank its
    trials well is judged from the first epoch, and one whose first epochs mislead (HanNet
    on digits) is judged as `pareto` judges it. The check is made again after every
    finished trial (a rung may close again), from the same curves the pruner observes, so a
    resumed study decides as the first run did."""

    def __init__(
        self,
        direction: str,
        epochs: int,
        first: int = 1,
        eta: int = DEFAULT_ETA,
        unit: str = "parameters",
        min_complete: int = DEFAULT_MIN_COMPLETE,
        keep: float = DEFAULT_KEEP,
    ) -> None:
        super().__init__(direction, epochs, first, eta, unit)
        self.min_complete, self.keep = min_complete, keep
        self.pareto = ParetoPruner(direction, epochs, unit=unit)
        self.pareto.curves = self.curves  # one record of the finished trials' curves judges by both rules
        self._trust: dict[tuple[str, int], tuple[int, bool]] = {}  # (family, rung) -> (n observed, trusted)

    def trusted(self, family: str, rung: int) -> bool:
        curves = self.curves.get(family, [])
        seen = self._trust.get((family, rung))
        if seen is None or seen[0] != len(curves):  # only a new finished trial changes the answer
            seen = (
                len(curves),
                rung_trusted(rung, curves, self.epochs, self.direction, self.eta, self.min_complete, self.keep),
            )
            self._trust[(family, rung)] = seen
        return seen[1]

    def check(self, params: int, epoch: int, value: float, family: str = "") -> str | None:
        if epoch in self.rungs and self.trusted(family, epoch):
            return super().check(params, epoch, value, family)
        return self.pareto.check(params, epoch, value, family)


PrunerFactory = Callable[[str, int, str, float | None], Pruner]  # (direction, epochs, unit, grace) -> Pruner
PRUNERS: Registry[PrunerFactory] = Registry("pruner")
PRUNERS.add("none", lambda direction, epochs, unit, grace: Pruner())
PRUNERS.add(
    "pareto",
    lambda direction, epochs, unit, grace: ParetoPruner(
        direction, epochs, grace_epochs(epochs, DEFAULT_GRACE if grace is None else grace), unit=unit
    ),
)
# rungs: the first rung is the first epoch unless --prune-grace says otherwise
PRUNERS.add(
    "rungs",
    lambda direction, epochs, unit, grace: RungPruner(
        direction, epochs, 1 if grace is None else grace_epochs(epochs, grace), unit=unit
    ),
)
PRUNERS.add(
    "checked-rungs",
    lambda direction, epochs, unit, grace: CheckedRungPruner(
        direction, epochs, 1 if grace is None else grace_epochs(epochs, grace), unit=unit
    ),
)
DEFAULT_PRUNER = "pareto"


def make_pruner(name: str, direction: str, epochs: int, unit: str = "parameters", grace: float | None = None) -> Pruner:
    """`grace`: the first epoch at which a trial may be stopped, as a fraction of the
    epochs (`--prune-grace`); None: the pruner's own default (pareto: 1/3; rungs: the
    first epoch)."""
    return PRUNERS.get(name)(direction, epochs, unit, grace)
