"""Which Optuna sampler drew a trial, through the samplers that choose one of two per trial
(HandOver: `gp` hands a long study to TPE; CostAware: `auto` hands cheap trials to TPE)."""

from __future__ import annotations

from typing import Any

NAMES = {"GPSampler": "the GP", "TPESampler": "TPE", "RandomSampler": "random", "NSGAIISampler": "NSGA-II"}
PAIRED = "the GP, second of a pair"  # a trial the GP proposed with the one before from one fit


def drawn_by(sampler: Any, number: int) -> str:
    """The name of the Optuna sampler that drew trial `number`: through the samplers that
    choose one of two per trial (HandOver, CostAware: their `drew`) down to the one that
    drew it ("the GP", "TPE", else its class name; PAIRED for the second of two trials the
    GP proposed from one fit, gp_sampler.py)."""
    while hasattr(sampler, "drew"):
        sampler = sampler.drew(number)
    if getattr(sampler, "second_of_pair", lambda _: False)(number):
        return PAIRED
    return NAMES.get(type(sampler).__name__, type(sampler).__name__)
