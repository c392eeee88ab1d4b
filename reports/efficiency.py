"""Search efficiency: how much of the best known front a search found, after how many
trials and how much training compute. Pure functions on trials frames (issue 11's
benchmark uses them).

Objectives: log10 parameters (minimised) and the metric in the study's direction. One
reference point for every search of a setting (`union_reference`: `default_reference` of
the union of all their complete trials), and one denominator: the hypervolume of the
union's front (`union_hypervolume`), so fractions of different searches compare.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.directions import check_direction
from core.pareto import default_reference, hypervolume_2d, hypervolume_history
from core.statuses import FINISHED_STATUSES
from verdicts.points import complete_points


def _objectives(df: pd.DataFrame, metric: str) -> tuple[np.ndarray, pd.DataFrame]:
    pts = complete_points(df, metric)
    return np.column_stack([np.log10(pts["params"].to_numpy(dtype=float)), pts["value"].to_numpy(dtype=float)]), pts


def union_reference(frames: Sequence[pd.DataFrame], metric: str, direction: str) -> np.ndarray:
    """The fixed reference point of a setting: slightly worse than every complete trial of
    every search (ValueError when there is none)."""
    dirs = ["minimize", check_direction(direction)]
    pts = np.vstack([_objectives(df, metric)[0].reshape(-1, 2) for df in frames])
    return default_reference(pts, dirs)


def union_hypervolume(frames: Sequence[pd.DataFrame], metric: str, direction: str, reference: np.ndarray) -> float:
    """Hypervolume of the union of all searches' complete trials (the best front known)."""
    pts = np.vstack([_objectives(df, metric)[0].reshape(-1, 2) for df in frames])
    return hypervolume_2d(pts, ["minimize", check_direction(direction)], reference)


def fraction_curve(df: pd.DataFrame, metric: str, direction: str, reference: np.ndarray, best: float) -> pd.DataFrame:
    """After each finished trial (in number order, every status counts as a trial and its
    duration as compute): trials, compute_s (summed trial seconds) and the fraction of
    `best` that the complete trials so far dominate.

    Columns: number, trials (1..n), compute_s, fraction (non-decreasing, in [0, 1] when
    `best` is the union's hypervolume)."""
    if best <= 0:
        raise ValueError(f"the best hypervolume must be positive, got {best}")
    done = df[df["status"].astype(str).isin(FINISHED_STATUSES)].sort_values("number")
    seconds = pd.to_numeric(done.get("duration_s"), errors="coerce").fillna(0.0).to_numpy(dtype=float)
    objectives, pts = _objectives(done, metric)
    hv = hypervolume_history(objectives.reshape(-1, 2), ["minimize", check_direction(direction)], reference)
    by_number = dict(zip(pts["number"].astype(int), hv))
    fraction, last = [], 0.0
    for n in done["number"].astype(int):
        last = by_number.get(n, last)
        fraction.append(last / best)
    return pd.DataFrame(
        {
            "number": done["number"].astype(int).to_numpy(),
            "trials": np.arange(1, len(done) + 1),
            "compute_s": np.cumsum(seconds),
            "fraction": fraction,
        }
    )


def fraction_at(curve: pd.DataFrame, *, trials: int | None = None, compute_s: float | None = None) -> float:
    """The fraction reached within `trials` trials or `compute_s` seconds (0 before any)."""
    if trials is not None:
        got = curve[curve["trials"] <= trials]
    elif compute_s is not None:
        got = curve[curve["compute_s"] <= compute_s]
    else:
        raise ValueError("give trials or compute_s")
    return float(got["fraction"].iloc[-1]) if len(got) else 0.0


def ks_uniform(values: Sequence[float], low: float, high: float) -> float:
    """Kolmogorov-Smirnov statistic of `values` (n,) against the uniform law on [low,
    high]: the largest distance between their empirical CDF and the uniform CDF (0: a
    perfect spread; 1: all on one end). How evenly a search spread its models over the
    log-parameter axis, with low = log10 of the smallest model and high = log10 budget.
    Values outside [low, high] count at the nearer end. ValueError on no values or
    high <= low."""
    if not len(values):
        raise ValueError("no values")
    if not high > low:
        raise ValueError(f"need high > low, got {low}..{high}")
    u = np.clip((np.sort(np.asarray(values, dtype=float)) - low) / (high - low), 0.0, 1.0)
    n = len(u)
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - u), np.max(u - (i - 1) / n)))


def work_to_reach(curve: pd.DataFrame | Mapping[str, Sequence], work: Mapping[int, float], goal: float) -> float:
    """The training work a search had spent when its fraction first reached `goal`: the
    summed `work` (trial number -> work, e.g. params x epochs trained; a trial not in it
    counts 0) of its finished trials in the order of `curve` (`fraction_curve`'s frame, or
    its columns as lists), up to and
    including the first whose fraction is at least `goal`. inf when it never did."""
    spent = 0.0
    for n, f in zip(curve["number"], curve["fraction"]):
        spent += float(work.get(int(n), 0.0))
        if f >= goal - 1e-12:
            return spent
    return math.inf


def fraction_at_work(curve: pd.DataFrame | Mapping[str, Sequence], work: Mapping[int, float], budget: float) -> float:
    """The fraction a search had reached when it had spent at most `budget` of training
    work: that of the last of its finished trials, in the order of `curve`
    (`fraction_curve`'s frame, or its columns as lists), whose summed `work` (trial number
    -> work; a trial not in it counts 0) up to and including it is within `budget`; 0
    before any. A search compared with another at equal compute: `budget` is the other's
    whole work. The trial running when the budget runs out counts for nothing."""
    reached = 0.0
    spent = 0.0
    for n, f in zip(curve["number"], curve["fraction"]):
        spent += float(work.get(int(n), 0.0))
        if spent > budget + 1e-9 * max(1.0, abs(budget)):
            break
        reached = float(f)
    return reached


def random_orders(n: int, orders: int, seed: int = 0) -> np.ndarray:
    """`orders` random permutations of range(n), seeded: (orders, n) positions."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n) for _ in range(orders)]) if orders else np.zeros((0, n), dtype=int)


def random_order_fractions(
    frame: pd.DataFrame,
    metric: str,
    direction: str,
    reference: np.ndarray,
    best: float,
    work: Mapping[int, float],
    budgets: Sequence[float],
    orders: np.ndarray,
) -> np.ndarray:
    """What random points of a fully trained grid reach at equal training work (issue 25:
    "never worse than 40 random grid points at equal training compute"): the grid's
    finished trials (`frame`) taken in each of `orders` (`random_orders(len(finished),
    k)`; row i puts the j-th finished trial, in number order, at position orders[i, j]),
    each order cut where its summed `work` (trial number -> work) first exceeds a budget
    (`fraction_at_work`), as a fraction of `best`. No training: every grid point's
    outcome is known, so any order of it is a random search over the grid.

    Returns: (len(budgets), len(orders)) fractions."""
    done = frame[frame["status"].astype(str).isin(FINISHED_STATUSES)].sort_values("number")
    numbers = done["number"].astype(int).to_numpy()
    out = np.zeros((len(budgets), len(orders)))
    for i, order in enumerate(orders):
        if sorted(order) != list(range(len(numbers))):
            raise ValueError(f"order {i} is not a permutation of the grid's {len(numbers)} finished trials")
        shuffled = done.assign(number=np.asarray(order, dtype=int))
        moved = {int(p): float(work.get(int(n), 0.0)) for n, p in zip(numbers, order)}
        curve = fraction_curve(shuffled, metric, direction, reference, best)
        for b, budget in enumerate(budgets):
            out[b, i] = fraction_at_work(curve, moved, float(budget))
    return out


def least_work(
    points: np.ndarray, costs: Sequence[float], directions: Sequence[str], reference: np.ndarray, goal: float
) -> float:
    """The least summed cost of a subset of `points` whose hypervolume (`hypervolume_2d`
    against `reference`) reaches `goal`: what a search that knew every outcome beforehand
    would have had to train to find that much of the front. inf when all the points
    together fall short; 0.0 for a goal <= 0.

    Args:
        points: (n, 2) objective values; costs: (n,) non-negative (e.g. params x epochs).
        directions, reference: as for `hypervolume_2d`.

    Exact: a cheapest subset is a staircase (each point better in the second objective
    than every chosen point before it in the first; any other point adds no area and can
    be dropped), and a point weakly dominated by one that costs no more is never needed
    (`cheapest_undominated` drops those first, in O(n log n)).
    Dynamic programming over the staircases ending at each point, sorted by the first
    objective, keeping for each the (cost, area) pairs no other pair beats in both.
    With costs growing with the first objective (parameters) only the front remains,
    so this is fast; tests/reports/test_efficiency.py checks it against every subset.
    """
    if goal <= 0:
        return 0.0
    signs = np.array([1.0 if check_direction(d) == "minimize" else -1.0 for d in directions])
    y = np.asarray(points, dtype=float).reshape(-1, 2) * signs  # both minimised from here
    r = np.asarray(reference, dtype=float).reshape(2) * signs
    c = np.asarray(costs, dtype=float).reshape(-1)
    if c.shape != (y.shape[0],) or (c < 0).any() or not np.isfinite(c).all():
        raise ValueError(f"costs must be {y.shape[0]} finite non-negative values")
    keep = np.isfinite(y).all(axis=1) & (y[:, 0] < r[0]) & (y[:, 1] < r[1])
    y, c = y[keep], c[keep]
    needed = cheapest_undominated(y, c)
    y, c = y[needed], c[needed]
    order = np.lexsort((y[:, 1], y[:, 0]))
    y, c = y[order], c[order]
    best, target = math.inf, goal * (1 - 1e-12)
    # per point: the staircases ending there still worth extending, (cost, area): those
    # short of the goal and cheaper than the best found (a step costs >= 0 and adds area)
    pairs: list[list[tuple[float, float]]] = []
    for j in range(len(y)):
        gain = r[0] - y[j, 0]
        cand = [(c[j], gain * (r[1] - y[j, 1]))]
        for i in range(j):
            if y[i, 0] < y[j, 0] and y[i, 1] > y[j, 1]:
                cand += [(ci + c[j], ai + gain * (y[i, 1] - y[j, 1])) for ci, ai in pairs[i] if ci + c[j] < best]
        cand.sort(key=lambda t: (t[0], -t[1]))
        kept, top = [], -math.inf
        for ci, ai in cand:
            if ai > top:
                kept.append((ci, ai))
                top = ai
        best = min([best] + [ci for ci, ai in kept if ai >= target])
        pairs.append([(ci, ai) for ci, ai in kept if ai < target and ci < best])
    return best


def cheapest_undominated(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The indices, ascending, of the points (both objectives minimised) that no other
    point weakly dominates at no more cost: i is dropped when some j != i has
    y[j] <= y[i] in both objectives and c[j] <= c[i]; of identical copies (same objectives,
    same cost) the first is kept.

    Args:
        y: (n, 2) finite objective values, both minimised; c: (n,) costs.

    O(n log n): in the order (cost, y0, y1, index) every point that may drop i comes before
    it, and every point before it with y0 and y1 no larger costs no more, so a sweep in
    that order asks, for each point, whether an earlier one has y0 <= its y0 and y1 <= its
    y1: the least y1 of the earlier points with y0 at most its own, a prefix minimum
    (a Fenwick tree over the ranks of y0)."""
    y = np.asarray(y, dtype=float).reshape(-1, 2)
    c = np.asarray(c, dtype=float).reshape(-1)
    n = len(y)
    order = np.lexsort((np.arange(n), y[:, 1], y[:, 0], c))
    xs = np.unique(y[:, 0])
    rank = np.searchsorted(xs, y[:, 0]) + 1  # 1-based ranks of y0 (equal values share one)
    tree = [math.inf] * (len(xs) + 1)  # tree[k]: least y1 over a block of ranks ending at k
    kept = []
    for i in order:
        least, k = math.inf, int(rank[i])
        while k > 0:  # the least y1 among earlier points with y0 <= y[i, 0]
            least = min(least, tree[k])
            k -= k & -k
        if not least <= y[i, 1]:
            kept.append(i)
        k = int(rank[i])
        while k <= len(xs):
            tree[k] = min(tree[k], y[i, 1])
            k += k & -k
    return np.sort(np.asarray(kept, dtype=int))
