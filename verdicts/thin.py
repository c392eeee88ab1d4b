"""When a family's value at a budget cannot be read ("too thin to tell"), whatever its
interval: pure functions on a family's configurations.

`thin_at`: too few configurations near a budget (within a factor `window` below it) for
the value there to mean much: a search that tried nothing near B reads the front at some
smaller model, and no interval repairs that. `untried_at` (`search compare --untried`): a
training setting of the family's front never tried near the budget: a search that found
its best models at one learning rate and trained nothing near B with it has not searched
B (docs/benchmarks.md §32).

Shapes: params (k,), means (k,), configs k dicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.limits import DEFAULT_MIN_NEAR
from verdicts.uncertainty import DEFAULT_WINDOW


@dataclass(frozen=True)
class Thin:
    """Too few of a family's configurations near a budget to read its front there."""

    near: int  # configurations with budget / window <= params <= budget
    needed: int  # the minimum asked for
    more_trials: int | None  # about how many more trials of the family would put `needed` there
    low: float  # the window: [low, budget]
    budget: float
    kind: str = "window"  # "window": too few near the budget; "resampled": too few at or below it for the
    # bootstrap to read (its resamples too often hold none); "one": the value rests on one configuration
    # far above the rest (`rests_on_one`); "untried": a training setting of the family's front was never
    # tried near the budget (`untried_at`)
    gap: float | None = None  # "one": how far the value falls without that configuration, in the metric's units
    untried: tuple[dict, ...] = ()  # "untried": the front's training settings tried nowhere near the budget


def thin_at(
    params: np.ndarray, budget: float, *, window: float = DEFAULT_WINDOW, min_near: int = DEFAULT_MIN_NEAR
) -> Thin | None:
    """A `Thin` when fewer than `min_near` configurations lie in [budget / window, budget],
    else None. `more_trials` assumes new trials spread log-uniformly over the family's
    sizes up to the budget, as a search's size targets do: the window's share of that log
    range is the chance that one lands in it (None when the family has no model yet)."""
    params = np.asarray(params, dtype=float)
    low = budget / window
    near = int(np.sum((params >= low) & (params <= budget)))
    if near >= min_near:
        return None
    if len(params) == 0 or params.min() > budget:
        return Thin(near, min_near, None, low, budget)
    smallest = float(params.min())
    span = math.log(budget / smallest) if budget > smallest else 0.0
    share = 1.0 if span <= math.log(window) else math.log(window) / span
    return Thin(near, min_near, math.ceil((min_near - near) / share), low, budget)


def training_setting(config: dict) -> tuple:
    """A configuration's searched training hyper-parameters (core.trials TRAINING_KEYS), as
    a hashable key."""
    from core.trials import TRAINING_KEYS

    return tuple((k, config[k]) for k in TRAINING_KEYS if k in config)


def untried_at(
    params: np.ndarray,
    means: np.ndarray,
    configs: list[dict],
    budget: float,
    sign: float,
    *,
    window: float = DEFAULT_WINDOW,
) -> Thin | None:
    """A `Thin` ("untried") when a training setting (learning rate, ...) of one of the
    family's front configurations, at any size, was never tried in [budget / window, budget];
    else None. A search that found its best models at one learning rate and trained
    nothing near B with it has not searched B: its value there is the best of the settings
    that lose elsewhere. Shapes: params (k,), means (k,), configs k dicts."""
    from core.pareto import pareto_mask

    params = np.asarray(params, dtype=float)
    means = np.asarray(means, dtype=float)
    ok = np.isfinite(means)
    if not ok.any():
        return None
    idx = np.flatnonzero(ok)
    on = pareto_mask(np.column_stack([params[idx], means[idx]]), ["minimize", "maximize" if sign > 0 else "minimize"])
    front = {training_setting(configs[i]) for i in idx[on]}
    low = budget / window
    near = (params >= low) & (params <= budget)
    tried = {training_setting(configs[i]) for i in np.flatnonzero(near)}
    missing = sorted(front - tried)
    if not missing or not any(missing):
        return None
    return Thin(int(near.sum()), 0, None, low, budget, kind="untried", untried=tuple(dict(m) for m in missing))
