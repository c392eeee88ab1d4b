"""The trials DataFrame: the one tabular contract used by reports and the CLI.

One row per trial (every status), ordered by `number`, with columns
    study, number, status, family, params, config, d_z, d_h, L, seeds,
    <m>, <m>_std for each stored metric m (NaN std when only one run),
    n_runs, objective, note, error, device, started_at, finished_at, duration_s.
`params`/`number` are int64; `d_z`, `d_h`, `L`, `n_runs` nullable Int64; metrics,
`objective`, `duration_s` float64; the times are UTC datetimes. A metric whose name
would clash with a fixed column is prefixed with `metric_`.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from storage.schema import DIM_COLUMNS

HEAD_COLUMNS: tuple[str, ...] = (
    "study", "number", "status", "family", "params", "config", *DIM_COLUMNS, "seeds",
)
TAIL_COLUMNS: tuple[str, ...] = (
    "n_runs", "objective", "note", "error", "device", "started_at", "finished_at",
    "duration_s",
)
FIXED_COLUMNS: tuple[str, ...] = HEAD_COLUMNS + TAIL_COLUMNS

_DTYPES: dict[str, str] = {
    "number": "int64", "params": "int64", **{d: "Int64" for d in DIM_COLUMNS},
    "n_runs": "Int64", "objective": "float64", "duration_s": "float64",
}


def metric_column(name: str) -> str:
    """The frame column holding metric `name`'s mean (`_std` appended for the std)."""
    return f"metric_{name}" if name in FIXED_COLUMNS else name


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)


def build_frame(
    rows: list[dict[str, Any]],
    metrics: dict[int, dict[str, tuple[float | None, float | None, int]]],
) -> pd.DataFrame:
    """Build the frame from fixed-column dicts (in number order) and metrics by number."""
    names: list[str] = []
    for number in sorted(metrics):
        names += [m for m in metrics[number] if m not in names]
    data: dict[str, Any] = {}
    for col in HEAD_COLUMNS:
        data[col] = [r[col] for r in rows]
    for m in names:
        col = metric_column(m)
        got = [metrics.get(r["number"], {}).get(m) for r in rows]
        data[col] = [math.nan if g is None else _nan(g[0]) for g in got]
        data[f"{col}_std"] = [math.nan if g is None else _nan(g[1]) for g in got]
    for col in TAIL_COLUMNS:
        data[col] = [r[col] for r in rows]
    frame = pd.DataFrame(data, columns=list(data))
    for col, dtype in _DTYPES.items():
        frame[col] = frame[col].astype(dtype)
    for m in names:
        col = metric_column(m)
        frame[col] = frame[col].astype("float64")
        frame[f"{col}_std"] = frame[f"{col}_std"].astype("float64")
    for col in ("started_at", "finished_at"):
        frame[col] = pd.to_datetime(frame[col], utc=True)
    for col in ("study", "status", "family", "config", "seeds", "note", "error", "device"):
        if frame.empty:
            frame[col] = frame[col].astype(object)
    return frame
