"""The trials DataFrame: the one tabular contract used by reports and the CLI.

One row per trial (every status), ordered by `number`, with columns
    study, number, status, family, params, config, <key dims: DIM_COLUMNS>, seeds,
    <m>, <m>_std for each stored metric m (NaN std when only one run),
    n_runs, objective, note, error, device, started_at, finished_at, duration_s.
`number`/`params` are int64; the integer key dims and `n_runs` (complete runs) nullable
Int64, the float key dims (`mlp_ratio`) float64; metrics, `objective`, `duration_s` float64 (NaN when missing); `started_at`,
`finished_at` datetime64[us, UTC] (NaT when missing); text, `config` and `seeds` are
object columns (None when missing), the same under pandas 2 and 3. A metric whose name
would clash with a fixed column is prefixed with `metric_`.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from storage.convert import Metric
from storage.schema import DIM_COLUMNS, FLOAT_DIM_COLUMNS, INT_DIM_COLUMNS

HEAD_COLUMNS: tuple[str, ...] = (
    "study", "number", "status", "family", "params", "config", *DIM_COLUMNS, "seeds",
)
TAIL_COLUMNS: tuple[str, ...] = (
    "n_runs", "objective", "note", "error", "device", "started_at", "finished_at",
    "duration_s",
)
FIXED_COLUMNS: tuple[str, ...] = HEAD_COLUMNS + TAIL_COLUMNS

_TEXT = ("study", "status", "family", "config", "seeds", "note", "error", "device")
_DTYPES: dict[str, str] = {
    **{c: "object" for c in _TEXT}, "number": "int64", "params": "int64",
    **{d: "Int64" for d in INT_DIM_COLUMNS}, **{d: "float64" for d in FLOAT_DIM_COLUMNS},
    "n_runs": "Int64", "objective": "float64",
    "duration_s": "float64", "started_at": "object", "finished_at": "object",
}
_TIME = "datetime64[us, UTC]"


def metric_column(name: str) -> str:
    """The frame column holding metric `name`'s mean (`_std` appended for the std)."""
    return f"metric_{name}" if name in FIXED_COLUMNS else name


def metric_columns(df: pd.DataFrame) -> list[str]:
    """The metric (mean) columns of a trials frame, in frame order: every column `m` with
    an `m_std` twin that is not a fixed column. The one rule for "which columns are metrics"."""
    cols = set(df.columns)
    return [c for c in df.columns if f"{c}_std" in cols and c not in FIXED_COLUMNS]


def _part(metric: Metric | None, i: int) -> float:
    """Mean (i=0) or std (i=1) of a metric as a float, NaN when missing."""
    value = None if metric is None else metric[i]
    return math.nan if value is None else float(value)


def build_frame(
    rows: list[dict[str, Any]],
    metrics: dict[int, dict[str, Metric]],
) -> pd.DataFrame:
    """Build the frame from fixed-column dicts (in number order) and metrics by number."""
    names: list[str] = []
    for number in sorted(metrics):
        names += [m for m in metrics[number] if m not in names]
    data: dict[str, pd.Series] = {}

    def column(col: str, values: list[Any], dtype: str) -> None:
        data[col] = pd.Series(values, dtype=dtype)

    for col in HEAD_COLUMNS:
        column(col, [r[col] for r in rows], _DTYPES[col])
    for m in names:
        col = metric_column(m)
        got = [metrics.get(r["number"], {}).get(m) for r in rows]
        column(col, [_part(g, 0) for g in got], "float64")
        column(f"{col}_std", [_part(g, 1) for g in got], "float64")
    for col in TAIL_COLUMNS:
        column(col, [r[col] for r in rows], _DTYPES[col])
    for col in ("started_at", "finished_at"):
        data[col] = pd.to_datetime(data[col], utc=True).astype(_TIME)
    return pd.DataFrame(data)
