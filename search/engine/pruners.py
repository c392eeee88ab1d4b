"""Pareto-aware early stopping (`--pruner pareto|none`).

A running trial reports its validation metric after every epoch. With `pareto`, a trial is
stopped at epoch e (e >= the grace period) when a finished trial OF ITS FAMILY with no
more parameters had already reached a clearly better validation value at the same epoch
e: it is dominated at equal fidelity (fewer or as many parameters, better metric), so
finishing it is unlikely to add a point to its family's front. Only its own family
judges it: the pages draw one front per family, and stopping a weaker family's trials
because another family is better would thin out exactly the front being compared (the
first version, which judged across families, did so: docs/benchmarks.md §14). "Clearly": better by more than `margin` times the
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
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Callable

from core.directions import check_direction
from core.registry import Registry
from core.stops import stop_reason

DEFAULT_MARGIN = 0.01


def dominated_at(params: int, epoch: int, value: float, curves: Sequence[tuple[int, Sequence[float]]],
                 direction: str, margin: float = DEFAULT_MARGIN) -> tuple[int, float] | None:
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
    def __init__(self, direction: str, epochs: int, grace: int | None = None, margin: float = DEFAULT_MARGIN,
                 unit: str = "parameters") -> None:
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
        return stop_reason(epoch, self.epochs,
                           f"validation {value:.4g}, while a trial{f' of {family}' if family else ''} "
                           f"with {hit[0]:,} {self.unit} (no more than its {params:,}) had {hit[1]:.4g} at that epoch")


PrunerFactory = Callable[[str, int, str, int], Pruner]  # (direction, epochs, unit, grace epochs) -> Pruner
PRUNERS: Registry[PrunerFactory] = Registry("pruner")
PRUNERS.add("none", lambda direction, epochs, unit, grace: Pruner())
PRUNERS.add("pareto", lambda direction, epochs, unit, grace: ParetoPruner(direction, epochs, grace, unit=unit))
DEFAULT_PRUNER = "pareto"


def make_pruner(name: str, direction: str, epochs: int, unit: str = "parameters",
                grace: float = DEFAULT_GRACE) -> Pruner:
    """`grace`: the grace period as a fraction of the epochs."""
    return PRUNERS.get(name)(direction, epochs, unit, grace_epochs(epochs, grace))
