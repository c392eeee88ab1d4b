"""How a family's value at a budget is read from its configurations: the best within the
budget, or the front's fit (`estimate_at`), and whether that value rests on one
configuration far above the rest (`rests_on_one`). Pure functions on arrays.

Shapes: values (d, k) (rows: bootstrap draws), params (k,), budgets (b,), include (d, k)
bool or None; results (d, b), NaN where a row holds no configuration within a budget.
"""

from __future__ import annotations

import math

import numpy as np

from core.limits import ESTIMATES
from verdicts.front_fit import front_fit


def best_within(
    values: np.ndarray, params: np.ndarray, budgets: np.ndarray, sign: float, include: np.ndarray | None = None
) -> np.ndarray:
    """(d, b): per row of values (d, k), the best (sign: +1 maximise, -1 minimise) among the
    included configurations with params <= budget; NaN where there is none. One running
    maximum over the configurations in order of size."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    params = np.asarray(params, dtype=float)
    out = np.full((values.shape[0], len(budgets)), np.nan)
    if values.shape[1] == 0:
        return out
    order = np.argsort(params, kind="stable")
    ends = np.searchsorted(params[order], np.asarray(budgets, dtype=float), side="right")
    cuts = np.unique(ends[ends > 0])  # the distinct prefixes asked for
    if len(cuts) == 0:
        return out
    order = order[: cuts[-1]]  # configurations above the largest budget never count
    scored = values[:, order]
    if sign != 1.0:
        scored *= sign
    if include is not None:
        np.copyto(scored, -np.inf, where=~include[:, order])
    # the best of each slice between consecutive prefixes, then a running maximum over the slices
    running = np.maximum.accumulate(np.maximum.reduceat(scored, np.concatenate(([0], cuts[:-1])), axis=1), axis=1)
    for i, end in enumerate(ends):
        if end == 0:
            continue
        best = running[:, np.searchsorted(cuts, end)]
        out[:, i] = np.where(np.isfinite(best), sign * best, np.nan)
    return out


def estimate_at(
    estimate: str,
    values: np.ndarray,
    params: np.ndarray,
    budgets: np.ndarray,
    sign: float,
    include: np.ndarray | None = None,
) -> np.ndarray:
    """(d, b): a family's value at each budget by `estimate` (one of ESTIMATES): "best",
    its best configuration within the budget (`best_within`), or "fit", the front's local
    linear fit (verdicts/front_fit.py)."""
    if estimate == "best":
        return best_within(values, params, budgets, sign, include)
    if estimate == "fit":
        return front_fit(values, params, budgets, sign, include)
    raise ValueError(f"unknown estimate {estimate!r}; known: {', '.join(ESTIMATES)}")


def rests_on_one(
    estimate: str,
    means: np.ndarray,
    params: np.ndarray,
    budget: float,
    sign: float,
    best: int,
    noise: float,
    max_gap: float,
) -> float | None:
    """How far a family's value at `budget` falls when its best configuration within it
    (index `best`) is left out, when that is more than `max_gap` seed-noise stds (`noise`):
    the value then rests on one configuration far above the rest, and the bootstrap, which
    leaves it out of about a third of its resamples, gives an interval as wide as that gap
    however little a second search moves the answer (measured: docs/benchmarks.md §24). None when it
    does not (or when the noise is unknown); inf when no other configuration lies within the
    budget."""
    if not (np.isfinite(noise) and noise > 0):
        return None
    keep = np.ones(len(params), dtype=bool)
    keep[best] = False
    at = np.array([float(budget)])
    full = estimate_at(estimate, means[None, :], params, at, sign)[0, 0]
    rest = estimate_at(estimate, means[None, keep], params[keep], at, sign)[0, 0]
    if not np.isfinite(rest):
        return math.inf
    gap = float(sign * (full - rest))
    return gap if gap > max_gap * noise else None
