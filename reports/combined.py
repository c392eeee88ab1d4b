"""Several studies of one question read as one: whether they compare (same task, metric
and direction) and their trials in one frame. Several trials of one configuration read as
one (`recomputed`, `merge_runs`) are verdicts/repeats.py's."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd

from core.errors import UserError
from storage.records import StudyRecord

_MOVED = ("merge_runs", "recomputed")  # now in verdicts/repeats.py


def __getattr__(name: str) -> Any:
    """`reports.combined.merge_runs` and `.recomputed`, deprecated: they moved to verdicts.repeats."""
    if name in _MOVED:
        warnings.warn(f"reports.combined.{name} moved to verdicts.repeats.{name}", DeprecationWarning, stacklevel=2)
        from verdicts import repeats

        return getattr(repeats, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
