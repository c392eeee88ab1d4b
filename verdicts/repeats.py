"""Several trials of one configuration read as one: `recomputed` marks a row that repeats
an earlier one exactly (the same study, family, configuration and seeds: the same
computation), `merge_runs` pools the trials of one configuration with other seeds into one
row (`core.pooling.pool_runs`). The verdicts' configurations are read through them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from core.pooling import pool_runs
from verdicts.points import parse_config


def recomputed(df: pd.DataFrame) -> np.ndarray:
    """(len(df),) bool: the rows that repeat an earlier row (by trial number) exactly: the
    same study (if the frame has one), family, configuration and seeds. A frame without
    seeds has none (nothing says two runs were the same computation)."""
    if "seeds" not in df.columns or len(df) == 0:
        return np.zeros(len(df), dtype=bool)
    study = df["study"].astype(str) if "study" in df.columns else pd.Series("", index=df.index)
    keys = pd.Series(
        [
            json.dumps(
                [s, str(f), parse_config(c), list(seeds) if isinstance(seeds, (list, tuple)) else seeds],
                sort_keys=True,
                default=str,
            )
            for s, f, c, seeds in zip(study, df["family"], df["config"], df["seeds"])
        ],
        index=df.index,
    )
    order = (
        pd.to_numeric(df["number"], errors="coerce")
        if "number" in df.columns
        else pd.Series(range(len(df)), index=df.index)
    )
    first = keys.loc[order.sort_values(kind="stable").index].duplicated()
    return first.reindex(df.index).to_numpy(dtype=bool)


def merge_runs(pts: pd.DataFrame, study: pd.Series | None = None) -> pd.DataFrame:
    """One row per configuration (study, family, config): a configuration trained in several
    trials with other seeds becomes the first trial's row with all their runs, the
    run-weighted mean and the std of all the runs (`core.pooling.pool_runs`). pts: `complete_points` with `runs`."""
    if len(pts) == 0:
        return pts
    # only rows that share study, family and size can share a configuration: the configs
    # are compared (as JSON) for those alone, so a large study without repeats pays one
    # vectorised pass
    where = pd.DataFrame(
        {"study": study if study is not None else "", "family": pts["family"], "params": pts["params"]}
    )
    maybe = where.duplicated(keep=False).to_numpy()
    if not maybe.any():
        return pts
    labels = [str(i) for i in range(len(pts))]  # a row alone is its own group
    sub = pts[maybe]
    # set through a list, not `series[mask] = list`: pandas 3.0.x refuses a list through an
    # all-True mask of a string Series ("only integer scalar arrays can be converted ...")
    for i, s, f, c in zip(np.flatnonzero(maybe), where["study"][maybe], sub["family"], sub["config"]):
        labels[i] = json.dumps([s, f, c], sort_keys=True, default=str)
    keys = pd.Series(labels, index=pts.index)
    if not keys.duplicated().any():
        return pts
    rows = []
    for _, idx in keys.groupby(keys, sort=False).groups.items():
        part = pts.loc[idx]
        first = part.iloc[0].copy()
        if len(part) > 1:
            first["value"], first["std"], first["runs"] = pool_runs(part["runs"], part["value"], part["std"])
        rows.append(first)
    return pd.DataFrame(rows).infer_objects().sort_values("number", kind="stable")
