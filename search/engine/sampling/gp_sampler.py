"""Optuna's GPSampler with its proposals' torch calls dispatched directly on the CPU.

Optuna (5.0, 5.1) computes each proposal inside `with torch.device("cpu")`, so that a
process whose default device is a GPU still fits the GP on the CPU. That context is a
torch function mode, Python code that every torch call passes through while it is active;
a proposal makes about 10^4 small torch calls (the acquisition function scored one point
at a time by the local searches), and the mode took about a fifth of the proposal's time
(docs/results/speed.md, "The GP's proposal without a torch function mode"). Where the
default device already is the CPU the mode changes nothing but the time, so `GPSampler`
here runs Optuna's proposal with torch function handling off (`torch._C.DisableTorchFunction`,
which also turns the mode off): the same proposals, tested proposal for proposal against
Optuna's (tests/search/engine/test_gp_sampler.py). With another default device it is
Optuna's own.
"""

from __future__ import annotations

from typing import Any

import optuna
import torch


def default_device_is_cpu() -> bool:
    """Whether torch creates tensors on the CPU when no device is named."""
    return torch.get_default_device().type == "cpu"


class GPSampler(optuna.samplers.GPSampler):
    """`optuna.samplers.GPSampler`, whose proposals skip torch's function modes where the
    default device is the CPU (module doc)."""

    def sample_relative(self, study, trial, search_space) -> dict[str, Any]:
        if not default_device_is_cpu():
            return super().sample_relative(study, trial, search_space)
        with torch._C.DisableTorchFunction():
            return super().sample_relative(study, trial, search_space)
