"""Ray Tune, for real: a study run by `tune.Tuner` (`search run --executor tune`).

- `driver.py`: `run_tune_study` (the study loop started, then Tune's Tuner with the
  study as searcher and scheduler), where Tune's experiment folder goes;
- `searcher.py`: `StudySearcher`, the study loop as a Tune `Searcher` (proposals within
  the budget, retries, every trial recorded in the database);
- `scheduler.py`: `ParetoScheduler`, the study's Pareto pruner as a Tune scheduler;
- `trainable.py`: `train_trial`, the product's trainer as a Tune function trainable
  (a `tune.report` per epoch). Ray workers import only this module.

Ray is imported only when a study runs on Tune; the names below are imported on first
use, so that a worker importing the trainable does not import the study loop.
"""
from __future__ import annotations

from typing import Any

__all__ = ["experiment_dir", "run_tune_study", "tune_dir"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from search.tune import driver

        return getattr(driver, name)
    raise AttributeError(f"module 'search.tune' has no attribute {name!r}")
