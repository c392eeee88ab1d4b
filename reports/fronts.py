"""Front and hypervolume data of a trials frame: pure pandas/numpy, what tests check.

Input: a DataFrame of trials as produced by storage (`storage.frames`), one row per trial
ordered by ``number``, with columns ``number``, ``status``, ``family``, ``params``,
``config`` (dict), per metric ``m`` its mean ``m`` and std ``m_std`` (NaN for a single
run), and more. Only ``status == "complete"`` rows with a finite metric and a positive
finite parameter count take part in fronts and hypervolumes. The figures
(reports/figures.py) are drawn from the data objects built here (`FrontData`,
`HypervolumeData`), as in Optuna's ``visualization/_pareto_front.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from core.directions import check_direction
from core.pareto import default_reference, hypervolume_history, pareto_mask
from reports.formatting import family_colors, hover_text
from verdicts.points import complete_points


@dataclass(frozen=True)
class FamilyFront:
    """One family's complete trials and its own Pareto front.

    All arrays have shape (k,) for the family's k complete points, in trial order;
    ``front_index`` (f,) indexes the family-front members sorted by params ascending.
    """

    family: str
    color: str
    numbers: np.ndarray  # (k,) int trial numbers
    params: np.ndarray  # (k,) float parameter counts
    values: np.ndarray  # (k,) float metric means
    stds: np.ndarray  # (k,) float metric stds, NaN for single runs
    configs: list[dict[str, Any]]  # (k,) configs
    metric: str
    on_front: np.ndarray  # (k,) bool, on this family's front
    on_overall_front: np.ndarray  # (k,) bool, on the all-families front
    front_index: np.ndarray  # (f,) int, family front sorted by params

    def hover_at(self, i: int) -> str:
        """The hover text of point i."""
        return hover_text(
            self.numbers[i], self.family, self.configs[i], self.params[i], self.metric, self.values[i], self.stds[i]
        )

    @cached_property
    def hover(self) -> list[str]:
        """(k,) hover texts (made when first asked: a big figure asks only the front's)."""
        return [self.hover_at(i) for i in range(len(self.numbers))]

    @property
    def front_numbers(self) -> np.ndarray:
        return self.numbers[self.front_index]

    @property
    def front_params(self) -> np.ndarray:
        return self.params[self.front_index]

    @property
    def front_values(self) -> np.ndarray:
        return self.values[self.front_index]

    @property
    def front_stds(self) -> np.ndarray:
        return self.stds[self.front_index]


@dataclass(frozen=True)
class FrontData:
    """Everything the Pareto figure needs; families sorted by name."""

    metric: str
    direction: str
    families: list[FamilyFront] = field(default_factory=list)
    overall_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    # (o,) trial numbers on the all-families front, sorted by params ascending
    n_excluded: int = 0  # complete trials left out (non-finite metric or params)

    @property
    def empty(self) -> bool:
        return not self.families

    def family(self, name: str) -> FamilyFront:
        for f in self.families:
            if f.family == name:
                return f
        raise KeyError(f"no complete trials of family {name!r}; have {[f.family for f in self.families]}")

    @property
    def max_params(self) -> float:
        return max((float(f.params.max()) for f in self.families), default=float("nan"))


def front_data(df: pd.DataFrame, metric: str, direction: str) -> FrontData:
    """Per-family points and fronts (objectives: params minimised, metric in `direction`)."""
    check_direction(direction)
    pts = complete_points(df, metric)
    n_complete = (
        int((df["status"].astype(str) == "complete").sum())
        if (df is not None and len(df) and "status" in df.columns)
        else 0
    )
    n_excluded = n_complete - len(pts)
    if len(pts) == 0:
        return FrontData(metric=metric, direction=direction, n_excluded=n_excluded)

    dirs = ["minimize", direction]
    objectives = pts[["params", "value"]].to_numpy(dtype=float)
    overall = pareto_mask(objectives, dirs)
    pts = pts.assign(overall=overall)
    overall_rows = pts[overall].sort_values(["params", "number"], kind="stable")
    colors = family_colors(pts["family"])

    families = []
    for fam in sorted(pts["family"].unique()):
        sub = pts[pts["family"] == fam]
        obj = sub[["params", "value"]].to_numpy(dtype=float)
        on_front = pareto_mask(obj, dirs)
        idx = np.flatnonzero(on_front)
        idx = idx[np.argsort(obj[idx, 0], kind="stable")]
        families.append(
            FamilyFront(
                family=fam,
                color=colors[fam],
                numbers=sub["number"].to_numpy(dtype=int),
                params=sub["params"].to_numpy(dtype=float),
                values=sub["value"].to_numpy(dtype=float),
                stds=sub["std"].to_numpy(dtype=float),
                configs=sub["config"].tolist(),
                metric=metric,
                on_front=on_front,
                on_overall_front=sub["overall"].to_numpy(dtype=bool),
                front_index=idx,
            )
        )
    return FrontData(
        metric=metric,
        direction=direction,
        families=families,
        overall_numbers=overall_rows["number"].to_numpy(dtype=int),
        n_excluded=n_excluded,
    )


def hypervolume_points(df: pd.DataFrame, metric: str, *, log_params: bool = True) -> pd.DataFrame:
    """Complete points with objective columns ``x`` (params, log10 when log_params) and ``y``."""
    pts = complete_points(df, metric)
    x = np.log10(pts["params"].to_numpy(dtype=float)) if log_params else pts["params"].to_numpy(dtype=float)
    return pts.assign(x=x, y=pts["value"].to_numpy(dtype=float))


def hypervolume_reference(
    df: pd.DataFrame, metric: str, direction: str, *, log_params: bool = True
) -> np.ndarray | None:
    """The study's fixed reference: `default_reference` of all its complete points."""
    check_direction(direction)
    pts = hypervolume_points(df, metric, log_params=log_params)
    if len(pts) == 0:
        return None
    return default_reference(pts[["x", "y"]].to_numpy(dtype=float), ["minimize", direction])


def hypervolume_data(
    df: pd.DataFrame,
    metric: str,
    direction: str,
    family: str | None = None,
    *,
    log_params: bool = True,
    reference: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Hypervolume after each complete trial, in trial-number order.

    Objectives: params (minimised; log10 of params when ``log_params``, since counts span
    decades) and the metric in ``direction``. The reference is fixed for the whole study
    (`hypervolume_reference`: computed from all complete points of every family), so the
    per-family and overall curves are comparable.

    Returns:
        numbers (k,) int trial numbers and hv (k,) float non-decreasing hypervolume of the
        complete trials up to and including that one (of ``family`` only when given).
    """
    check_direction(direction)
    pts = hypervolume_points(df, metric, log_params=log_params)
    if reference is None:
        if len(pts) == 0:
            return np.zeros(0, dtype=int), np.zeros(0, dtype=float)
        reference = default_reference(pts[["x", "y"]].to_numpy(dtype=float), ["minimize", direction])
    if family is not None:
        pts = pts[pts["family"] == family]
    hv = hypervolume_history(pts[["x", "y"]].to_numpy(dtype=float).reshape(-1, 2), ["minimize", direction], reference)
    return pts["number"].to_numpy(dtype=int), hv


@dataclass(frozen=True)
class HypervolumeSeries:
    """Hypervolume after each complete trial of one family (or of all families).

    ``numbers`` (k,) int trial numbers in order; ``values`` (k,) float, non-decreasing.
    """

    name: str
    color: str
    numbers: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class HypervolumeData:
    """Everything the hypervolume figure needs: one series per family (sorted by name)
    and one over all families, against one fixed reference point (None when the study
    has no complete trial)."""

    metric: str
    direction: str
    log_params: bool
    reference: np.ndarray | None
    families: list[HypervolumeSeries] = field(default_factory=list)
    overall: HypervolumeSeries | None = None

    @property
    def empty(self) -> bool:
        return self.reference is None

    def family(self, name: str) -> HypervolumeSeries:
        for s in self.families:
            if s.name == name:
                return s
        raise KeyError(f"no complete trials of family {name!r}; have {[s.name for s in self.families]}")


def hypervolume_curves(df: pd.DataFrame, metric: str, direction: str, *, log_params: bool = True) -> HypervolumeData:
    """Per-family and overall hypervolume series of a trials frame (what `hypervolume_data`
    gives for each, from one pass over the frame)."""
    check_direction(direction)
    pts = hypervolume_points(df, metric, log_params=log_params)
    if len(pts) == 0:
        return HypervolumeData(metric, direction, log_params, None)
    dirs = ["minimize", direction]
    objectives = pts[["x", "y"]].to_numpy(dtype=float).reshape(-1, 2)
    ref = default_reference(objectives, dirs)
    numbers = pts["number"].to_numpy(dtype=int)
    family = pts["family"].to_numpy()
    colors = family_colors(family)
    series = []
    for fam in sorted(set(family)):
        mine = family == fam
        series.append(
            HypervolumeSeries(fam, colors[fam], numbers[mine], hypervolume_history(objectives[mine], dirs, ref))
        )
    overall = HypervolumeSeries("all families", "black", numbers, hypervolume_history(objectives, dirs, ref))
    return HypervolumeData(metric, direction, log_params, ref, series, overall)
