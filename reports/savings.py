"""How much training early stopping saved a study (issue 25 item 3): a pure function on
the trials frame, for the `search run` summary and the study page.

A trial the pruner stopped after epoch k of E (its reason says so: core/stops.py) trained
k epochs of its first run in `duration_s` seconds, and none of its other runs (the pruner
stops a trial's remaining seeds too). Run to the end, it would have cost about
duration_s * E / k per run, times its R runs (R = its seeds). Every other finished trial
cost what it cost. So

    spent = sum of duration_s over the finished trials
    full  = spent + sum over the pruned trials of duration_s * (E * R / k - 1)
    saved = 1 - spent / full

The per-epoch time of a pruned trial stands for its later epochs (the first epoch's extra
cost, e.g. compiling, makes the estimate a little high). Pruned trials whose reason has
no "of E" (recorded before the reasons said it) are counted, not estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.statuses import FINISHED_STATUSES
from core.stops import stopped_at
from reports.formatting import format_duration


@dataclass(frozen=True)
class Savings:
    pruned: int  # trials the pruner stopped
    estimated: int  # of them, those whose reason says where they stopped (their E)
    spent_s: float  # training seconds of the finished trials
    full_s: float  # the estimate had every trial run to the end

    @property
    def saved(self) -> float:
        """The share of `full_s` not trained, in [0, 1)."""
        return 1.0 - self.spent_s / self.full_s if self.full_s > 0 else 0.0


def early_stopping_savings(df: pd.DataFrame) -> Savings | None:
    """The study's `Savings`, or None when no trial was pruned.

    df: the trials frame (`storage.frames`): status, duration_s, error (a pruned trial's
    reason), seeds (the runs it was to train)."""
    if df is None or len(df) == 0 or "status" not in df.columns:
        return None
    status = df["status"].astype(str)
    done = df[status.isin(FINISHED_STATUSES)]
    pruned = done[done["status"].astype(str) == "pruned"]
    if len(pruned) == 0:
        return None

    def col(name: str, frame: pd.DataFrame) -> pd.Series:  # a frame built without the column: all missing
        return frame[name] if name in frame.columns else pd.Series([None] * len(frame), index=frame.index)

    seconds = pd.to_numeric(col("duration_s", done), errors="coerce").fillna(0.0)
    spent = float(seconds.sum())
    extra, estimated = 0.0, 0
    for error, seeds, d in zip(col("error", pruned), col("seeds", pruned), seconds[pruned.index]):
        where = stopped_at(error if isinstance(error, str) else None)
        if where is None:
            continue
        epoch, epochs = where
        runs = max(1, len(seeds) if isinstance(seeds, (list, tuple)) else 1)
        extra += float(d) * (epochs * runs / epoch - 1.0)
        estimated += 1
    return Savings(len(pruned), estimated, spent, spent + extra)


def savings_line(s: Savings) -> str:
    """One sentence for the console and the page."""
    line = (
        f"early stopping: {s.pruned} trial(s) stopped by the pruner; {format_duration(s.spent_s)} of "
        f"training against an estimated {format_duration(s.full_s)} with every trial run to the end "
        f"({100 * s.saved:.0f}% saved)"
    )
    if s.estimated < s.pruned:
        line += f"; {s.pruned - s.estimated} stopped trial(s) do not say at which epoch and are not estimated"
    return line
