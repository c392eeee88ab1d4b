"""Two-objective fronts and hypervolume histories in O(n log n): one sort and one sweep.

The inputs are already in minimisation form (every objective minimised) and finite; the
public functions of `core.pareto` validate, flip maximised objectives and drop the
non-finite rows before calling these. The brute-force `core.pareto.pareto_mask_brute`
and `core.pareto.hypervolume_2d` on every prefix are their test oracles.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np


def sweep_mask(y: np.ndarray) -> np.ndarray:
    """Non-dominated rows of finite two-objective points, both minimised.

    Args:
        y: (n, 2) finite float values, every objective minimised.

    Returns:
        (n,) bool. ``mask[i]`` is True when no row is at least as good in both objectives
        and strictly better in one, and no earlier row (smaller index) equals row ``i``:
        exactly the rule of `core.pareto.pareto_mask_brute`.

    Sorted by (objective 0, objective 1, row index), only the first row of each run of
    equal objective-0 values can be on the front (the later ones are worse in objective 1
    or later duplicates), and it is when its objective 1 is below every value seen before
    its run (the rows with a strictly smaller objective 0). Cost O(n log n).
    """
    n = y.shape[0]
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    order = np.lexsort((np.arange(n), y[:, 1], y[:, 0]))
    x0, x1 = y[order, 0], y[order, 1]
    first_of_run = np.ones(n, dtype=bool)
    first_of_run[1:] = x0[1:] != x0[:-1]
    best_before = np.empty(n)
    best_before[0] = np.inf
    best_before[1:] = np.minimum.accumulate(x1[:-1])
    mask[order] = first_of_run & (x1 < best_before)
    return mask


def sweep_history(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Hypervolume of the first k rows, k = 1..n, two objectives both minimised.

    Args:
        y: (n, 2) float values in the order they were found (every objective minimised);
            rows with a non-finite value or not strictly below ``ref`` in both objectives
            add nothing.
        ref: (2,) finite reference point, minimised like ``y``.

    Returns:
        (n,) float, non-decreasing: ``out[k-1]`` is the area dominated by ``y[:k]`` and
        bounded by ``ref`` (`core.pareto.hypervolume_2d` of the prefix).

    The running front is kept as two lists sorted by objective 0 (objective 1 strictly
    decreasing along them). A new point is placed by bisection; when nothing on the front
    weakly dominates it, the area it adds is summed over the steps of the staircase it
    covers (each term a width times a height, both >= 0, so the history never decreases)
    and the points it dominates, a contiguous run after it, are removed. Each point is
    inserted and removed at most once: O(log f) comparisons per point plus list moves.
    """
    r0, r1 = float(ref[0]), float(ref[1])
    xs: list[float] = []  # front, objective 0 ascending
    ys: list[float] = []  # front, objective 1 strictly descending
    out = np.zeros(y.shape[0], dtype=float)
    hv = 0.0
    for k, (px, py) in enumerate(y.tolist()):
        if px < r0 and py < r1 and math.isfinite(px) and math.isfinite(py):
            pos = bisect_left(xs, px)  # xs[:pos] < px <= xs[pos:]
            level = ys[pos - 1] if pos else r1  # the staircase's height just left of px
            weakly_dominated = level <= py or (pos < len(xs) and xs[pos] == px and ys[pos] <= py)
            if not weakly_dominated:
                added, at, j = 0.0, px, pos
                while j < len(xs) and ys[j] >= py:  # front points the new one dominates
                    added += (xs[j] - at) * (level - py)
                    at, level = xs[j], ys[j]
                    j += 1
                added += ((xs[j] if j < len(xs) else r0) - at) * (level - py)
                xs[pos:j] = [px]
                ys[pos:j] = [py]
                hv += added
        out[k] = hv
    return out
