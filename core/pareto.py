"""Pure Pareto math on arrays: non-dominated masks and 2-D hypervolume.

Everything here is plain numpy (no pandas, no plotting), in the style of BoTorch's
``utils/multi_objective/pareto.py``. Two-objective fronts and hypervolume histories are one
sort and one sweep (`core.pareto_sweep`); the brute-force mask stays as their oracle. Each objective has a
direction, ``"minimize"`` or
``"maximize"``; internally every objective is turned into a minimisation by flipping the
sign of the maximised ones.

Conventions:

* A row with any non-finite value (NaN, +-inf) is never on the front and contributes
  nothing to a hypervolume.
* Exact duplicates: only the first occurrence can be on the front.
* For the search tool, objective 0 is the parameter count (minimize) and objective 1
  the study's metric (its own direction).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.directions import DIRECTIONS
from core.pareto_sweep import sweep_history, sweep_mask

# Upper bound on the number of booleans materialised at once by `pareto_mask_brute`.
_CHUNK_ELEMENTS = 4_000_000


def _signs(directions: Sequence[str], m: int) -> np.ndarray:
    """(m,) array: +1 for "minimize", -1 for "maximize"."""
    if isinstance(directions, str):
        raise ValueError(f"directions must be a sequence of {DIRECTIONS}, not a string")
    directions = list(directions)
    if len(directions) != m:
        raise ValueError(f"got {len(directions)} directions for {m} objectives")
    bad = [d for d in directions if d not in DIRECTIONS]
    if bad:
        raise ValueError(f"unknown direction(s) {bad!r}; use 'minimize' or 'maximize'")
    return np.array([1.0 if d == "minimize" else -1.0 for d in directions])


def _as_points(points: np.ndarray, m: int | None = None) -> np.ndarray:
    """Validate ``points`` as a float (n, m) array (a (0,) array counts as (0, m))."""
    y = np.asarray(points, dtype=float)
    if y.ndim == 1 and y.size == 0:
        y = y.reshape(0, m or 0)
    if y.ndim != 2:
        raise ValueError(f"points must be a 2-D array (n, m), got shape {y.shape}")
    if m is not None and y.shape[1] != m:
        raise ValueError(f"points must have {m} columns, got shape {y.shape}")
    return y


def pareto_mask(points: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """Boolean mask of the non-dominated rows of ``points``.

    Args:
        points: (n, m) objective values, one row per candidate.
        directions: (m,) ``"minimize"`` or ``"maximize"`` per objective.

    Returns:
        (n,) bool, the rule of `pareto_mask_brute`: ``mask[i]`` is True when no other
        finite row is at least as good in every objective and strictly better in one, row
        ``i`` is all finite, and no earlier row is an exact duplicate of it.

    Cost O(n log n) for two objectives (`core.pareto_sweep.sweep_mask`), O(n^2 m)
    otherwise.
    """
    y = _as_points(points)
    n, m = y.shape
    if m != 2:
        return pareto_mask_brute(y, directions)
    y = y * _signs(directions, m)
    mask = np.zeros(n, dtype=bool)
    finite = np.isfinite(y).all(axis=1)
    mask[finite] = sweep_mask(y[finite])
    return mask


def pareto_mask_brute(points: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """Boolean mask of the non-dominated rows of ``points``.

    Args:
        points: (n, m) objective values, one row per candidate.
        directions: (m,) ``"minimize"`` or ``"maximize"`` per objective.

    Returns:
        (n,) bool. ``mask[i]`` is True when no other finite row is at least as good in
        every objective and strictly better in one, row ``i`` is all finite, and no
        earlier row is an exact duplicate of it.

    Cost O(n^2 m) time, computed in chunks so memory stays bounded: the rule itself,
    for any number of objectives; `pareto_mask` uses the sweep for two, and the tests
    hold the sweep against this.
    """
    y = _as_points(points)
    n, m = y.shape
    y = y * _signs(directions, m)  # now every objective is minimised
    mask = np.zeros(n, dtype=bool)
    finite = np.isfinite(y).all(axis=1)
    idx = np.flatnonzero(finite)
    if idx.size == 0:
        return mask
    yf = y[idx]  # (k, m)
    k = yf.shape[0]
    on_front = np.empty(k, dtype=bool)
    chunk = max(1, _CHUNK_ELEMENTS // max(1, k * m))
    order = np.arange(k)
    for start in range(0, k, chunk):
        rows = yf[start : start + chunk]  # (c, m)
        le = (yf[None, :, :] <= rows[:, None, :]).all(axis=-1)  # (c, k): j weakly better than i
        lt = (yf[None, :, :] < rows[:, None, :]).any(axis=-1)  # (c, k): j strictly better somewhere
        dominated = (le & lt).any(axis=1)
        # exact duplicate of an earlier row: equal in all objectives (le and not lt) with j < i
        earlier = order[None, :] < order[start : start + chunk, None]
        duplicate = (le & ~lt & earlier).any(axis=1)
        on_front[start : start + chunk] = ~(dominated | duplicate)
    mask[idx] = on_front
    return mask


def hypervolume_2d(points: np.ndarray, directions: Sequence[str], reference: np.ndarray) -> float:
    """Area dominated by ``points`` and bounded by ``reference`` (two objectives).

    Args:
        points: (n, 2) objective values.
        directions: (2,) ``"minimize"`` or ``"maximize"`` per objective.
        reference: (2,) reference point, in the same units and directions as ``points``.

    Returns:
        The area (float, >= 0) of the union of the boxes spanned by each point and the
        reference. Points that are not strictly better than the reference in both
        objectives, and non-finite points, contribute nothing. 0.0 for n = 0.

    Cost O(n log n).
    """
    y = _as_points(points, 2)
    s = _signs(directions, 2)
    r = np.asarray(reference, dtype=float).reshape(-1)
    if r.shape != (2,):
        raise ValueError(f"reference must have shape (2,), got {np.shape(reference)}")
    if not np.isfinite(r).all():
        raise ValueError(f"reference must be finite, got {r}")
    y = y * s
    r = r * s
    keep = np.isfinite(y).all(axis=1) & (y[:, 0] < r[0]) & (y[:, 1] < r[1])
    y = y[keep]
    if y.shape[0] == 0:
        return 0.0
    # sort by objective 0, ties by objective 1 (both ascending, i.e. best first)
    y = y[np.lexsort((y[:, 1], y[:, 0]))]
    # best objective-1 value among the points strictly before each one (bounded by r1)
    prev_best = np.minimum.accumulate(np.concatenate(([r[1]], y[:-1, 1])))
    prev_best = np.minimum(prev_best, r[1])
    # each point improving on everything left of it adds a slab from its x to r0
    gain = np.maximum(prev_best - y[:, 1], 0.0)
    return float(np.sum((r[0] - y[:, 0]) * gain))


def hypervolume_history(points: np.ndarray, directions: Sequence[str], reference: np.ndarray) -> np.ndarray:
    """Hypervolume of the first k points, for k = 1..n (two objectives).

    Args:
        points: (n, 2) objective values in the order they were found.
        directions: (2,) ``"minimize"`` or ``"maximize"`` per objective.
        reference: (2,) finite reference point.

    Returns:
        (n,) float, non-decreasing; ``out[k-1] == hypervolume_2d(points[:k], ...)`` (up to
        rounding).

    Cost O(n log n) in comparisons (`core.pareto_sweep.sweep_history`: the running
    front in sorted lists, the area each new point adds).
    """
    y = _as_points(points, 2)
    s = _signs(directions, 2)
    r = np.asarray(reference, dtype=float).reshape(-1)
    if r.shape != (2,):
        raise ValueError(f"reference must have shape (2,), got {np.shape(reference)}")
    if not np.isfinite(r).all():
        raise ValueError(f"reference must be finite, got {r}")
    return sweep_history(y * s, r * s)


def default_reference(points: np.ndarray, directions: Sequence[str], pad: float = 0.1) -> np.ndarray:
    """A reference point slightly worse than every finite point.

    Per objective: the worst finite value (largest when minimised, smallest when
    maximised), moved further in the worse direction by ``pad`` (10%) of that objective's
    range (max - min). When the range is 0 (one point, or all equal) the pad is ``pad``
    times the absolute worst value, or ``pad`` itself when that is 0. Every finite point
    is therefore strictly better than the reference in each objective, so each one can
    contribute to the hypervolume.

    Args:
        points: (n, m) objective values.
        directions: (m,) ``"minimize"`` or ``"maximize"`` per objective.
        pad: fraction of the range to add.

    Returns:
        (m,) float reference point. Raises ValueError when no row is finite.
    """
    y = _as_points(points)
    s = _signs(directions, y.shape[1])
    y = y[np.isfinite(y).all(axis=1)] * s
    if y.shape[0] == 0:
        raise ValueError("default_reference needs at least one finite point")
    worst = y.max(axis=0)
    span = worst - y.min(axis=0)
    fallback = np.where(np.abs(worst) > 0, pad * np.abs(worst), pad)
    margin = np.where(span > 0, pad * span, fallback)
    return (worst + margin) * s


def hypervolume_share(points: np.ndarray, kept: np.ndarray, directions: Sequence[str]) -> float:
    """The hypervolume of ``points[kept]`` as a share of that of all ``points``, both
    against the ``default_reference`` of all the points (two objectives): what a subset
    keeps of a front. 1.0 when the whole is 0 (nothing to lose).

    Args:
        points: (n, 2) objective values, n >= 1 with at least one finite row.
        kept: (n,) booleans.
        directions: (2,) ``"minimize"`` or ``"maximize"`` per objective.
    """
    ref = default_reference(points, directions)
    whole = hypervolume_2d(points, directions, ref)
    return float(hypervolume_2d(points[np.asarray(kept, dtype=bool)], directions, ref) / whole) if whole > 0 else 1.0
