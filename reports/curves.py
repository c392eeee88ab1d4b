"""Per-epoch learning curves of one trial: pure data from `Store.epochs` rows.

Input rows (one per run and epoch): repeat, seed, epoch, train_loss, the validation
metrics by name, elapsed_s (NaN where not finite). `learning_curves` groups them by run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunCurve:
    """One run (seed) of a trial: values per epoch, in epoch order; NaN where missing."""

    repeat: int
    seed: int
    epochs: list[int]
    train_loss: list[float]
    metric: list[float]


@dataclass(frozen=True)
class LearningCurves:
    metric: str
    runs: list[RunCurve] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(r.epochs for r in self.runs)


def learning_curves(rows: list[dict[str, Any]], metric: str) -> LearningCurves:
    """Group epoch rows by run (repeat), each in epoch order."""
    by_run: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_run.setdefault(int(r["repeat"]), []).append(r)
    runs = []
    for repeat in sorted(by_run):
        got = sorted(by_run[repeat], key=lambda r: int(r["epoch"]))
        runs.append(
            RunCurve(
                repeat=repeat,
                seed=int(got[0]["seed"]),
                epochs=[int(r["epoch"]) for r in got],
                train_loss=[_number(r.get("train_loss")) for r in got],
                metric=[_number(r.get(metric)) for r in got],
            )
        )
    return LearningCurves(metric, runs)


def _number(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x
