"""The points a trials frame holds for fronts and verdicts: a trial's config as a dict
(`parse_config`), a column read with a default (`column`) or as floats (`floats`), and the
rows that take part in fronts (`complete_points`: complete, a finite metric, a finite
positive size). Pure pandas/numpy; the fronts and tables of reports/ read them from here.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd


def parse_config(value: Any) -> dict[str, Any]:
    """A trial's config as a dict (accepts a dict, a JSON string, or nothing)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip():
        try:
            out = json.loads(value)
        except ValueError:
            return {}
        return out if isinstance(out, dict) else {}
    return {}


def column(df: pd.DataFrame, name: str, default: Any = np.nan) -> pd.Series:
    if name in df.columns:
        return df[name]
    return pd.Series([default] * len(df), index=df.index, dtype=object if default is None else None)


def floats(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def complete_points(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows that take part in fronts: complete, finite metric, finite params > 0.

    Returns a frame with columns number, family, params (float), value, std, config,
    plus the original index, in trial-number order.
    """
    if df is None or len(df) == 0 or "status" not in df.columns or metric not in df.columns:
        return pd.DataFrame(
            {
                "number": pd.Series(dtype=int),
                "family": pd.Series(dtype=object),
                "params": pd.Series(dtype=float),
                "value": pd.Series(dtype=float),
                "std": pd.Series(dtype=float),
                "config": pd.Series(dtype=object),
            }
        )
    params = floats(column(df, "params"))
    value = floats(df[metric])
    std = floats(column(df, f"{metric}_std"))
    ok = (df["status"].astype(str) == "complete").to_numpy() & np.isfinite(value) & np.isfinite(params) & (params > 0)
    out = pd.DataFrame(
        {
            "number": pd.to_numeric(column(df, "number"), errors="coerce").to_numpy()[ok],
            "family": column(df, "family", "").astype(str).to_numpy()[ok],
            "params": params[ok],
            "value": value[ok],
            "std": std[ok],
            "config": [parse_config(c) for c in column(df, "config", None).to_numpy()[ok]],
        },
        index=df.index[ok],
    )
    return out.sort_values("number", kind="stable")
