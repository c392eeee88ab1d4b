"""The trials DataFrame: the one tabular contract used by reports and the CLI.

One row per trial (every status), ordered by `number`, with columns
    study, number, status, family, params, config, <key dims: DIM_COLUMNS>, seeds,
    <m>, <m>_std for each stored metric m (NaN std when only one run),
    n_runs, objective, note, error, device, started_at, finished_at, duration_s.
`number`/`params` are int64; the integer key dims and `n_runs` (complete runs) nullable
Int64, the float key dims (`mlp_ratio`) float64; metrics, `objective`, `duration_s` float64 (NaN when
missing); `started_at`,
`finished_at` datetime64[us, UTC] (NaT when missing); text, `config` and `seeds` are
object columns (None when missing), the same under pandas 2 and 3. A metric whose name
would clash with a fixed column is prefixed with `metric_`.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from storage.schema import DIM_COLUMNS, FLOAT_DIM_COLUMNS, INT_DIM_COLUMNS

HEAD_COLUMNS: tuple[str, ...] = ("study", "number", "status", "family", "params", "config", *DIM_COLUMNS, "seeds")
TAIL_COLUMNS: tuple[str, ...] = (
    "n_runs",
    "objective",
    "note",
    "error",
    "device",
    "started_at",
    "finished_at",
    "duration_s",
)
FIXED_COLUMNS: tuple[str, ...] = HEAD_COLUMNS + TAIL_COLUMNS

_TEXT = ("study", "status", "family", "config", "seeds", "note", "error", "device")
_DTYPES: dict[str, str] = {
    **{c: "object" for c in _TEXT},
    "number": "int64",
    "params": "int64",
    **{d: "Int64" for d in INT_DIM_COLUMNS},
    **{d: "float64" for d in FLOAT_DIM_COLUMNS},
    "n_runs": "Int64",
    "objective": "float64",
    "duration_s": "float64",
    "started_at": "object",
    "finished_at": "object",
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


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a large frame is read and built: the read
    makes hundreds of thousands of rows, tuples and dicts, none in a cycle, and each one
    counts towards the collector's next pass over every live object (at 100,000 trials
    1.7 s of a 3.2 s read). Nothing is leaked: cycles made meanwhile are collected once
    it is back on. Left off when it was off already (another read in another thread)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _nullable_ints(values: list[Any]) -> pd.Series:
    """A nullable Int64 column of ints and None, built from one float array and a mask
    (pandas' element-by-element coercion costs 15 ms per 100,000 values and column)."""
    try:
        floats = np.array(values, dtype="float64")  # None -> NaN
    except (TypeError, ValueError):
        return pd.Series(values, dtype="Int64")
    missing = np.isnan(floats)
    ints = np.where(missing, 0, floats).astype("int64")
    if np.any(ints != np.where(missing, 0, floats)):  # not whole numbers: pandas says why
        return pd.Series(values, dtype="Int64")
    return pd.Series(pd.arrays.IntegerArray(ints, missing))


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
        data[col] = (
            _nullable_ints(columns[col]) if _DTYPES[col] == "Int64" else pd.Series(columns[col], dtype=_DTYPES[col])
        )
    if metrics:
        numbers, names, means, stds = zip(*metrics)  # four columns of plain values (not row objects)
        codes, uniques = pd.factorize(pd.Series(names, dtype=object), sort=False)  # names in order of first appearance
        where = pd.Index(columns["number"]).get_indexer(pd.Index(numbers))
        known = where >= 0
        for suffix, part in (("", means), ("_std", stds)):
            values = pd.to_numeric(pd.Series(part, dtype=object), errors="coerce").to_numpy(
                dtype="float64", na_value=math.nan
            )
            table = np.full((len(uniques), n), math.nan)
            table[codes[known], where[known]] = values[known]
            for i, name in enumerate(uniques):
                data[metric_column(str(name)) + suffix] = table[i]
        for name in uniques:  # mean, std, mean, std... as before
            col = metric_column(str(name))
            data[col], data[col + "_std"] = data.pop(col), data.pop(col + "_std")
    for col in TAIL_COLUMNS:
        data[col] = (
            _nullable_ints(columns[col]) if _DTYPES[col] == "Int64" else pd.Series(columns[col], dtype=_DTYPES[col])
        )
    for col in ("started_at", "finished_at"):
        data[col] = pd.to_datetime(data[col], utc=True, format="mixed").astype(_TIME)
    return pd.DataFrame(data)


def with_config_columns(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with a column for each configuration key that is not a column yet (a user's
    family's keys, `lr`, ...: the fixed key columns `DIM_COLUMNS` hold the built-in
    families' shapes), after the key columns, in order of first appearance; a key named like
    a column already there gets `config.` before its name. A trial without the key (another
    family's, or a conditional key absent) has None. `Study.trials()` and `search trials
    --format csv` show it so."""
    if df.empty or "config" not in df.columns:
        return df
    configs = [c if isinstance(c, dict) else {} for c in df["config"]]
    keys: dict[str, None] = {}
    for c in configs:
        keys.update(dict.fromkeys(c))
    new = {k for k in keys if k not in DIM_COLUMNS}
    if not new:
        return df
    at = list(df.columns).index("seeds") if "seeds" in df.columns else len(df.columns)
    out = df.copy()
    for i, key in enumerate(k for k in keys if k in new):
        name = f"config.{key}" if key in out.columns else key
        out.insert(at + i, name, pd.Series([c.get(key) for c in configs], index=df.index, dtype=object))
    return out
