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

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

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


def json_column(values: list[Any]) -> list[Any]:
    """Decoded JSON of a column: text (what SQLite returns) parsed in one call for the
    whole column; values a driver decoded already (PostgreSQL) kept; NULL -> None."""
    if all(isinstance(v, str) or v is None for v in values):
        return json.loads("[" + ",".join("null" if v is None else v for v in values) + "]")
    return [json.loads(v) if isinstance(v, str) else v for v in values]


def build_frame(columns: dict[str, list[Any]], metrics: Sequence[tuple[int, str, Any, Any]]) -> pd.DataFrame:
    """Build the frame from the fixed columns (each a list in number order; `config` and
    `seeds` JSON text or decoded, the times text or datetimes) and the metric rows
    (number, name, mean, std; None when missing) in number and stored order."""
    n = len(columns["number"])
    columns = dict(columns)
    columns["config"] = [{} if c is None else c for c in json_column(columns["config"])]
    columns["seeds"] = [[] if c is None else c for c in json_column(columns["seeds"])]
    columns["params"] = [int(p) for p in columns["params"]]
    data: dict[str, pd.Series] = {}
    for col in HEAD_COLUMNS:
        data[col] = pd.Series(columns[col], dtype=_DTYPES[col])
    parts = list(zip(*metrics)) or [[], [], [], []]  # four columns of plain values (not row objects)
    m = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in zip(("number", "name", "mean", "std"), parts)})
    numbers = pd.Index(columns["number"])
    for name, sub in m.groupby("name", sort=False):  # names in order of first appearance
        col = metric_column(str(name))
        for suffix, part in (("", "mean"), ("_std", "std")):
            values = pd.to_numeric(sub[part], errors="coerce").astype("float64").to_numpy()
            data[col + suffix] = pd.Series(values, index=sub["number"].to_numpy()).reindex(numbers).to_numpy(
                dtype="float64", na_value=math.nan) if n else pd.Series([], dtype="float64")
    for col in TAIL_COLUMNS:
        data[col] = pd.Series(columns[col], dtype=_DTYPES[col])
    for col in ("started_at", "finished_at"):
        data[col] = pd.to_datetime(data[col], utc=True, format="mixed").astype(_TIME)
    return pd.DataFrame(data)
