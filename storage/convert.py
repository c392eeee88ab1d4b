"""Conversions between Python values, database rows and `storage.records` dataclasses.

Floats that are not finite are stored as NULL (Float columns) or null (JSON), so every
backend accepts them and the JSON stays valid; reading gives NaN back where a number is
expected.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from storage.records import StudyRecord, TrialRecord
from storage.schema import DIM_COLUMNS, FLOAT_DIM_COLUMNS, Study, Trial

Metric = tuple[float, float | None, int]  # (mean, sample std or None, number of runs)


def now_utc() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def finite(x: Any) -> float | None:
    """A finite float, or None (NaN and inf are stored as NULL)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def jsonable(obj: Any) -> Any:
    """Plain JSON data: non-finite floats become None, tuples lists, numpy scalars Python."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if hasattr(obj, "item"):  # numpy scalar
        return jsonable(obj.item())
    return str(obj)


def dims(config: dict[str, Any]) -> dict[str, int | float | None]:
    """The key dimension columns (DIM_COLUMNS) from a config, None when absent or not a
    number of the column's kind (an integral value for the integer columns)."""
    out: dict[str, int | float | None] = {}
    for key in DIM_COLUMNS:
        v = config.get(key)
        if hasattr(v, "item"):
            v = v.item()
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if key in FLOAT_DIM_COLUMNS:
            out[key] = finite(v) if number else None
        else:
            integral = isinstance(v, int) or (isinstance(v, float) and v.is_integer())
            out[key] = int(v) if number and integral else None
    return out


def metric_tuple(mean: float | None, std: float | None, n: int) -> Metric:
    """A stored metric row as (mean, std|None, n); NULL means NaN, std is None for n <= 1."""
    return (math.nan if mean is None else mean, None if n <= 1 else (math.nan if std is None else std), n)


def study_record(s: Study) -> StudyRecord:
    """The dataclass of a study row."""
    return StudyRecord(
        name=s.name,
        task=s.task,
        families=list(s.families),
        metric=s.metric,
        direction=s.direction,
        budget=int(s.budget),
        settings=dict(s.settings or {}),
        created_at=s.created_at,
    )


def trial_record(t: Trial, metrics: dict[str, Metric]) -> TrialRecord:
    """The dataclass of a trial row with its metrics."""
    return TrialRecord(
        number=t.number,
        family=t.family,
        config=dict(t.config),
        params=int(t.params),
        status=t.status,
        seeds=list(t.seeds),
        metrics=metrics,
        optuna=t.optuna,
        note=t.note,
        error=t.error,
        traceback=t.traceback,
        device=t.device,
        started_at=t.started_at,
        finished_at=t.finished_at,
        duration_s=t.duration_s,
        owner=t.owner,
        heartbeat_at=t.heartbeat_at,
        attempt=int(t.attempt or 0),
        retry_of=t.retry_of,
    )
