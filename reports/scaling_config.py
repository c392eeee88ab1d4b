"""How a family's front changes shape as it grows: each shape key's trend against the
parameter count N, read at a budget nobody searched (the configuration half of `search
predict`). Pure functions.

A numeric key's trend is a power law value = c * N^b, fitted by least squares on
(log N, log value) over the family's front configurations (numpy's `polyfit`): widths
and depths of compute-optimal models follow power laws in N (Kaplan et al. 2020 fit
d_model and L so; Hoffmann et al. 2022 the same for tokens), and a power law keeps a
positive key positive wherever it is read. A key that is the same on every front point
is `fixed` (kept; reading a slope off a constant would be noise), and with fewer than
MIN_TREND_POINTS front points holding the key, or a non-positive value on one, no trend
is fitted: the largest front configuration's value is kept (`largest`).
Categorical keys (activation, learning rate, patch choices) take the value of the
largest front configuration too: the front's choice where it is nearest the target.

Turning the readings into a valid configuration within the budget (rounding, the space's
constraints, the exact count) needs the family's space and count, which live in `search`:
search/spaces/extrapolate.py.

Shapes: params (k,) and configs (k dicts) of the front points, in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

MIN_TREND_POINTS = 3  # front points a trend needs (two fix a line exactly, a third tests it)


@dataclass(frozen=True)
class Trend:
    """One key's trend over the front: value = exp(intercept) * N^slope (`power`), or one
    kept value (`fixed`, `largest`, `choice`) with `why` for the last three."""

    key: str
    kind: Literal["power", "fixed", "largest", "choice"]
    slope: float = float("nan")  # b of value ~ N^b (power only)
    intercept: float = float("nan")  # log c
    value: Any = None  # the kept value
    why: str = ""

    def at(self, n: float) -> Any:
        """The key's value read at N = n (a float for `power`, the kept value otherwise)."""
        if self.kind == "power":
            return float(np.exp(self.intercept + self.slope * np.log(n)))
        return self.value

    def describe(self) -> str:
        """One phrase for the reports: 'd_z ~ N^0.31', 'L fixed at 4 on the front'."""
        if self.kind == "power":
            return f"{self.key} ~ N^{self.slope:.2f}"
        return f"{self.key} = {self.value!r} ({self.why})"


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def key_trend(key: str, params: np.ndarray, values: Sequence[Any], min_points: int = MIN_TREND_POINTS) -> Trend:
    """A numeric key's trend over the front points that hold it (params (k,), values (k,),
    None where a point lacks the key); the largest point's value where no trend can be
    fitted (None when no point holds the key)."""
    have = [i for i, v in enumerate(values) if v is not None]  # a key a space file added later
    if not have:
        return Trend(key, "largest", value=None, why="on no front configuration")
    params, values = np.asarray(params, dtype=float)[have], [values[i] for i in have]
    largest = values[int(np.argmax(params))]
    if len(values) < min_points:
        return Trend(
            key,
            "largest",
            value=largest,
            why=f"{len(values)} front points (a trend needs {min_points}); the largest one's",
        )
    if len(set(values)) == 1:
        return Trend(key, "fixed", value=largest, why="the same on every front configuration")
    v = np.asarray(values, dtype=float)
    if not np.all(v > 0):
        return Trend(key, "largest", value=largest, why="not positive on every front point; the largest one's")
    n = np.asarray(params, dtype=float)
    slope, intercept = np.polyfit(np.log(n), np.log(v), 1)
    return Trend(key, "power", slope=float(slope), intercept=float(intercept))


def shape_trends(
    params,
    configs: Sequence[dict[str, Any]],
    numeric: Sequence[str],
    categorical: Sequence[str] = (),
    min_points: int = MIN_TREND_POINTS,
) -> dict[str, Trend]:
    """Each key's trend over the front: `numeric` keys by `key_trend` (a key holding a
    non-number on some point is treated as categorical), `categorical` keys the largest
    front configuration's value. params (k,), configs (k,), k >= 1."""
    params = np.asarray(params, dtype=float)
    if len(params) == 0:
        raise ValueError("shape_trends needs at least one front point")
    top = configs[int(np.argmax(params))]
    out: dict[str, Trend] = {}
    for key in numeric:
        values = [c.get(key) for c in configs]
        if all(v is None or _numeric(v) for v in values):
            out[key] = key_trend(key, params, values, min_points)
        else:
            out[key] = Trend(key, "choice", value=top.get(key), why="the largest front configuration's")
    for key in categorical:
        out[key] = Trend(key, "choice", value=top.get(key), why="the largest front configuration's")
    return out


def read_trends(trends: dict[str, Trend], n: float) -> dict[str, Any]:
    """Every key's value read at N = n (unrounded: floats for the fitted keys)."""
    return {k: t.at(n) for k, t in trends.items()}
