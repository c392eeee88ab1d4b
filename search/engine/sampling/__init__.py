"""Samplers: where a study's next configuration comes from.

A sampler (`Sampler`) proposes configurations within the budget (`Proposal`) or says why
one may not train (`Rejection`), and learns from the finished trials. `SAMPLERS` maps the
names `--sampler` takes to factories, and `make_sampler` builds a study's sampler from its
settings. The modules:

    base.py            Sampler, Proposal, Rejection, config_key
    samplers.py        SAMPLERS, make_sampler: Optuna's samplers by name, and the grid
    optuna_sampler.py  OptunaSampler: a multi-objective Optuna study aimed at sizes, families in
                       turns; the loop of ask and tell over the policies below, one file each:
    size_axis.py       SizeAxis: each family's range of target sizes (smallest model to budget)
    turns.py           Turns: which family proposes next (--share)
    corners.py         Corners: what a new study visits first (--corners)
    targets.py         Targets: ramped start sizes (--start ramp) and aimed sizes (--decide)
    revisits.py        Revisits: a proposal of a configuration already trained (--revisit)
    grid.py            GridSampler: a paper-style grid of every family's values
    policies.py        the settings of a search (spread, share, scope, corners, start, revisit,
                       shape draw, size scale): their names, defaults and rules (no Optuna)
    optuna_draw.py     how an Optuna trial draws a configuration's widths and depth
    handover.py        `gp` hands a long study over to TPE
    gp_sampler.py      GPSampler: Optuna's GP, lighter proposals; two trials from one fit while
                       its proposals cost more than the trials (gp_acquisition.py: its arithmetic)
    cost_aware.py      CostMeter: a proposal's cost beside the trials'; `auto`: the GP while
                       its proposals cost little beside the trials, TPE otherwise
    drawn.py           which of those samplers drew a trial (the summary line's counts)

Optuna is imported only when a sampler is built (`OptunaSampler`, `GridSampler` and
`SIZE_PARAM` load on first use), so the command line can check a name without it.
"""

from __future__ import annotations

from typing import Any

from search.engine.sampling.base import UNPRUNED_NOTE, ParamCounter, Proposal, Rejection, Sampler, config_key
from search.engine.sampling.samplers import GP_TRIALS, SAMPLERS, SamplerFactory, make_sampler

_LAZY = {"OptunaSampler": "optuna_sampler", "SIZE_PARAM": "optuna_sampler", "GridSampler": "grid"}

__all__ = [
    "GP_TRIALS",
    "SAMPLERS",
    "SIZE_PARAM",
    "UNPRUNED_NOTE",
    "GridSampler",
    "OptunaSampler",
    "ParamCounter",
    "Proposal",
    "Rejection",
    "Sampler",
    "SamplerFactory",
    "config_key",
    "make_sampler",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"search.engine.sampling.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
