"""How a family's front varies between replicate searches: the empirical attainment
function (EAF; Grunert da Fonseca, Fonseca & Hall 2001), computed by moocore.

Each replicate search gives a family a set of points (log10 parameters, metric). The
k%-attainment surface is the boundary of the region of the objective space that at least
k% of the searches reach (a point is reached when a search has a configuration with no
more parameters and a value at least as good). The 50% surface is the family's median
front; between the 25% and 75% surfaces lies the middle half of the searches' outcomes,
the multi-objective field's picture of run-to-run variability, beside the verdicts' bands.

Shapes: `points` is a list (one per search) of (n_i, 2) arrays of (log10 params, value);
a surface comes back as a (m, 2) array of its corner points sorted by parameters, its
values in the metric's own direction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.directions import check_direction

PERCENTILES = (25.0, 50.0, 75.0)


def attainment_surfaces(
    points: Sequence[np.ndarray], direction: str, percentiles: Sequence[float] = PERCENTILES
) -> dict[float, np.ndarray]:
    """Per percentile, the attainment surface of the searches' `points` (module doc);
    moocore minimises every objective, so a maximised metric is negated in and out. A
    search with no point counts as reaching nothing."""
    import moocore

    sign = 1.0 if check_direction(direction) == "minimize" else -1.0
    sets = [np.asarray(p, dtype=float).reshape(-1, 2) for p in points]
    sizes = [len(p) for p in sets]
    out = {float(q): np.zeros((0, 2)) for q in percentiles}
    if not any(sizes):
        return out
    # moocore counts the sets it is given: a percentile of all the searches, empty ones included,
    # is asked as the share of the non-empty ones that it takes
    given = sum(1 for n in sizes if n)
    data = np.vstack([p * [1.0, sign] for p in sets if len(p)])
    labels = np.concatenate([np.full(n, i + 1) for i, n in enumerate(n for n in sizes if n)])
    for q in percentiles:
        need = int(np.ceil(q / 100.0 * len(sets) - 1e-9))  # searches that must reach a point
        if need > given:
            continue
        share = 100.0 * max(need, 1) / given
        surf = moocore.eaf(data, sets=labels, percentiles=[share])
        xy = surf[:, :2] * [1.0, sign]
        out[float(q)] = xy[np.argsort(xy[:, 0], kind="stable")]
    return out


def attained(points: Sequence[np.ndarray], x: float, y: float, direction: str) -> int:
    """How many searches reach (x, y): a point with x' <= x and y' at least as good as y
    (the brute-force definition the surfaces are tested against)."""
    better = (lambda a, b: a >= b) if check_direction(direction) == "maximize" else (lambda a, b: a <= b)
    return sum(
        bool(np.any((p[:, 0] <= x + 1e-12) & better(p[:, 1], y)))
        for p in (np.asarray(p).reshape(-1, 2) for p in points)
    )


def family_points(candidates_per_search: Sequence[dict], family: str) -> list[np.ndarray]:
    """Each search's (log10 params, value) points of `family` (verdicts/compare.py
    `Candidates`; an empty array where the search has none)."""
    out = []
    for cands in candidates_per_search:
        c = cands.get(family)
        out.append(np.zeros((0, 2)) if c is None else np.column_stack([np.log10(c.params), c.means]))
    return out


def step_values(surface: np.ndarray, xs: np.ndarray, direction: str) -> np.ndarray:
    """(len(xs),) the surface read as a step function at `xs`: the best value among its
    points with at most that many (log10) parameters; NaN before its first point."""
    out = np.full(len(xs), np.nan)
    if len(surface) == 0:
        return out
    sign = 1.0 if check_direction(direction) == "maximize" else -1.0
    running = sign * np.maximum.accumulate(sign * surface[:, 1])
    idx = np.searchsorted(surface[:, 0], xs, side="right") - 1
    ok = idx >= 0
    out[ok] = running[idx[ok]]
    return out
