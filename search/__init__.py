"""Pareto-frontier architecture search for neural-network shapes.

    from search import load_model
    model = load_model("my-study", 3, storage="search.db")  # trial 3's trained module, eval mode
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_model(study: str, trial: int, *, storage: str | None = None, seed: int = 0,
               artifacts: str | None = None, device: str = "cpu", retraining: int = 0) -> Any:
    """The trained model of a trial (search/artifacts/load.py: `load_model`; `retraining`
    k: a run of the trial's retraining k), imported only when called so that
    `search --help` does not load torch."""
    from search.artifacts.load import load_model as load

    return load(study, trial, storage=storage, seed=seed, artifacts=artifacts, device=device, retraining=retraining)
