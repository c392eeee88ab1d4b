"""Several studies of one question read as one: whether they compare (same task, metric
and direction), their trials in one frame, and each trial's objective recomputed from
its metrics; and several trials of one configuration read as one (`recomputed`: an exact
repeat; `merge_runs`: other seeds of it)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.errors import UserError
from core.pooling import pool_runs
from reports.formatting import parse_config
from storage.records import StudyRecord


def check_comparable(records: Sequence[StudyRecord]) -> None:
    """UserError unless the studies share task, metric, direction and parameter convention
    (their fronts and values would not be comparable otherwise)."""
    first = records[0]
    for rec in records[1:]:
        for name in ("task", "metric", "direction"):
            if getattr(rec, name) != getattr(first, name):
                raise UserError(
                    f"studies {first.name!r} and {rec.name!r} differ in {name} "
                    f"({getattr(first, name)} vs {getattr(rec, name)}): they cannot be compared"
                )
        measures = [(r.settings or {}).get("budget_of", "params") for r in (first, rec)]
        if measures[0] != measures[1]:
            raise UserError(
                f"studies {first.name!r} and {rec.name!r} are budgeted in {measures[0]} and "
                f"{measures[1]}: they cannot be compared"
            )
        conv = [(r.settings or {}).get("param_convention") for r in (first, rec)]
        if None not in conv and conv[0] != conv[1]:
            raise UserError(
                f"studies {first.name!r} and {rec.name!r} count parameters differently "
                f"({conv[0]} vs {conv[1]}): they cannot be compared"
            )


def combined_frame(studies: Sequence[tuple[StudyRecord, pd.DataFrame]], *, label_shared: bool = True) -> pd.DataFrame:
    """Comparable studies' trials in one frame (`check_comparable` first): `number` made
    unique across studies, `study` and `trial` keep each row's origin, and a family that
    several of the studies searched is labelled "study: family" (unless `label_shared` is
    False: replicate searches of one question keep the family names)."""
    records = [rec for rec, _ in studies]
    check_comparable(records)
    shared = {
        f
        for f in {f for r in records for f in r.families}
        if label_shared and sum(f in r.families for r in records) > 1
    }
    parts = []
    for rec, df in studies:
        fam = df["family"].astype(str)
        parts.append(
            df.assign(family=fam.where(~fam.isin(shared), rec.name + ": " + fam), study=rec.name, trial=df["number"])
        )
    nonempty = [p for p in parts if len(p)] or parts[:1]
    out = pd.concat(nonempty, ignore_index=True)
    return out.assign(number=range(len(out)))


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
