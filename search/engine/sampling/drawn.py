"""Which Optuna sampler drew a trial, through the samplers that choose one of two per trial
(HandOver: `gp` hands a long study to TPE; CostAware: `auto` hands cheap trials to TPE)."""

from __future__ import annotations

from typing import Any

NAMES = {"GPSampler": "the GP", "TPESampler": "TPE", "RandomSampler": "random", "NSGAIISampler": "NSGA-II"}


def drawn_by(sampler: Any, number: int) -> str:
    """The name of the Optuna sampler that drew trial `number`: through the samplers that
    choose one of two per trial (HandOver, CostAware: their `drew`) down to the one that
    drew it ("the GP", "TPE", else its class name)."""
    while hasattr(sampler, "drew"):
        sampler = sampler.drew(number)
    return NAMES.get(type(sampler).__name__, type(sampler).__name__)
