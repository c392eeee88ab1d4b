"""Ray Tune, for real (issue 29): a study run by `tune.Tuner` (`search run --executor
tune`), and the product's searcher and trainable in a user's own Tune script.

- `executor.py`: `TuneExecutor`, the executor "tune" (registered in `EXECUTORS` when
  imported): the options `--executor tune` takes, and the hand-off the study loop
  submits a trial to;
- `driver.py`: `run_tune_study` (the study loop started, then Tune's Tuner with the
  study as searcher and scheduler), where Tune's experiment folder goes;
- `searcher.py`: `StudySearcher`, the study loop as a Tune `Searcher` (proposals within
  the budget, retries, every trial recorded in the database);
- `scheduler.py`: `ParetoScheduler`, the study's Pareto pruner as a Tune scheduler;
- `trainable.py`: `train_trial`, the product's trainer as a Tune function trainable
  (a `tune.report` per epoch). Ray workers import only this module;
- `api.py`, the public API for a user's own Tune script: `budgeted_searcher` (the
  study as `TuneConfig(search_alg=...)`, with the product's families or the user's own
  through `count_params`), `product_trainable` (the product's trainer for Tune's own
  searchers and schedulers), `TuneInputError` (bad input, a ValueError); the searcher it
  returns is `budgeted.py`'s, a user's family `user_family.py`'s.

Ray is imported only when a study runs on Tune; the names below are imported on first
use, so that a worker importing the trainable does not import the study loop.
"""

from __future__ import annotations

from typing import Any

_HOMES = {
    "experiment_dir": "driver",
    "run_tune_study": "driver",
    "tune_dir": "driver",
    "BudgetedSearcher": "budgeted",
    "budgeted_searcher": "api",
    "product_trainable": "api",
    "TuneInputError": "trainable",
    "TuneExecutor": "executor",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"search.tune.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'search.tune' has no attribute {name!r}")
