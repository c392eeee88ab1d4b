"""The peers of issue 30 by name: what a user would pick instead of the product's search.

    optuna-tpe     plain Optuna 5, TPESampler        (benchmarks/search_quality/peer_optuna.py)
    optuna-nsga2   plain Optuna 5, NSGAIISampler
    optuna-gp      plain Optuna 5, GPSampler
    ax             Ax's Client: Sobol, then BoTorch's qLogNEHVI (benchmarks/search_quality/peer_ax.py;
                   needs the `peers` extra: pip install -e '.[peers]')
    tune-optuna    Ray Tune's OptunaSearch, define-by-run (benchmarks/search_quality/peer_tune.py; Ray
                   is a dependency of the product)

`register()` adds them to the product's sampler registry (search/engine/sampling/samplers.py) in
the benchmark's process only, so that the product's study loop runs them: the same
trainer, task, training settings, store and trial accounting as the product's searches;
only where the next configuration comes from differs. The product never registers them.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from benchmarks.search_quality.peer_space import PeerSpace
from core.errors import UserError
from search.engine.sampling import SAMPLERS, Sampler

OPTUNA_PEERS = ("optuna-tpe", "optuna-nsga2", "optuna-gp")
TUNE_PEERS = ("tune-optuna",)
EXTRA_PEERS = ("ax",)
PEERS = OPTUNA_PEERS + TUNE_PEERS + EXTRA_PEERS
EXTRA_HINT = "pip install -e '.[peers]'"


def ax_available() -> bool:
    return importlib.util.find_spec("ax") is not None


def _optuna_peer(kind: str):
    def factory(spaces, io, budget, count, *, direction: str, seed: int, trials: int, **_: Any) -> Sampler:
        from benchmarks.search_quality.peer_optuna import SAMPLERS as OPTUNA_SAMPLERS
        from benchmarks.search_quality.peer_optuna import OptunaPeer

        return OptunaPeer(PeerSpace(spaces, io, budget, count), OPTUNA_SAMPLERS[kind](seed, trials), direction)

    return factory


def _ax_peer(spaces, io, budget, count, *, direction: str, seed: int, trials: int, **_: Any) -> Sampler:
    """Ax's own initialisation budget from 40 trials on; a quarter of fewer trials (at least
    2, so that a smoke run reaches BoTorch)."""
    check_available("ax")
    from benchmarks.search_quality.peer_ax import AxPeer

    return AxPeer(
        PeerSpace(spaces, io, budget, count),
        direction=direction,
        seed=seed,
        initialization_budget=None if trials >= 40 else max(2, trials // 4),
    )


def _tune_peer(spaces, io, budget, count, *, direction: str, seed: int, **_: Any) -> Sampler:
    from benchmarks.search_quality.peer_tune import TuneOptunaPeer

    return TuneOptunaPeer(PeerSpace(spaces, io, budget, count), direction, seed)


def check_available(name: str) -> None:
    """UserError when peer `name` needs a package that is not installed."""
    if name in EXTRA_PEERS and not ax_available():
        raise UserError(f"peer {name!r} needs Ax, which is not installed: {EXTRA_HINT}")


def register() -> None:
    """Add the peers to the product's sampler registry (once per process)."""
    for name in OPTUNA_PEERS:
        if name not in SAMPLERS:
            SAMPLERS.add(name, _optuna_peer(name.removeprefix("optuna-")))
    if "tune-optuna" not in SAMPLERS:
        SAMPLERS.add("tune-optuna", _tune_peer)
    if "ax" not in SAMPLERS:
        SAMPLERS.add("ax", _ax_peer)
