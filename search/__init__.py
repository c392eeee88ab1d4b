"""Pareto-frontier architecture search for neural-network shapes.

    import search

    study = search.run(space="hourglass,conventional", task="digits-denoise", budget="100K", trials=40)
    study.trials()                      # a pandas DataFrame, one row per trial
    study.compare().to_dict()           # which family wins at each budget, with intervals
    model = study.load_model(3)         # trial 3's trained module, eval mode
    study = search.open("digits-denoise-hourglass+conventional", storage="search.db")

Your own model and data (docs/how-to/own-model-and-data.md):

    @search.family("my-cnn", space={"width": {"low": 4, "high": 64, "log": True}, "depth": {"low": 1, "high": 4}})
    def build(config, io): ...          # -> torch.nn.Module

    search.array_task("my-data", data={"train": (x, y), "val": (x, y), "test": (x, y)},
                      metrics={"accuracy": "maximize"})

    @search.task("my-loop", metrics={"score": "maximize"}, inputs=4, outputs=2)
    def train(model, settings, report): ...   # report(epoch, {...}) each epoch; return test metrics

Everything is imported when first used, so `import search` and `search --help` stay
light (no torch).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# public name -> (module, attribute), imported on first use
_LAZY = {
    "run": ("search.api.study", "run"),
    "open": ("search.api.study", "open"),
    "Study": ("search.api.study", "Study"),
    "family": ("search.plugins.families", "family"),
    "array_task": ("search.plugins.tasks", "array_task"),
    "task": ("search.plugins.tasks", "task"),
    "Metric": ("tasks.own", "Metric"),
    "load_plugins": ("search.plugins.discovery", "load_plugins"),
    "UserError": ("core.errors", "UserError"),
}
__all__ = ["load_model", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'search' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


def load_model(
    study: str,
    trial: int,
    *,
    storage: str | None = None,
    seed: int = 0,
    artifacts: str | None = None,
    device: str = "cpu",
    retraining: int = 0,
) -> Any:
    """The trained model of a trial (search/artifacts/load.py: `load_model`; `retraining`
    k: a run of the trial's retraining k), imported only when called so that
    `search --help` does not load torch."""
    from search.artifacts.load import load_model as load

    return load(study, trial, storage=storage, seed=seed, artifacts=artifacts, device=device, retraining=retraining)
