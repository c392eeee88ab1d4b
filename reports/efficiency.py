"""Search efficiency: how much of the best known front a search found, after how many
trials and how much training compute. Pure functions on trials frames (issue 11's
benchmark uses them).

Objectives: log10 parameters (minimised) and the metric in the study's direction. One
reference point for every search of a setting (`union_reference`: `default_reference` of
the union of all their complete trials), and one denominator: the hypervolume of the
union's front (`union_hypervolume`), so fractions of different searches compare.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.directions import check_direction
from core.statuses import FINISHED_STATUSES
from reports.fronts import complete_points
from reports.pareto import default_reference, hypervolume_2d, hypervolume_history


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
    return pd.DataFrame({"number": done["number"].astype(int).to_numpy(), "trials": np.arange(1, len(done) + 1),
                         "compute_s": np.cumsum(seconds), "fraction": fraction})


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
