"""Optuna's GPSampler, its proposals made with fewer Python and arithmetic steps.

What it proposes does not change (up to rounding: tests/search/engine/test_gp_sampler.py
compares the proposals key by key over a study); what a proposal costs does
(docs/results/speed.md, "The GP's proposal, lighter"):

- Optuna (5.0, 5.1) makes each proposal inside `with torch.device("cpu")`, so that a
  process whose default device is a GPU still fits the GP on the CPU. That context is a
  torch function mode, Python code that every torch call passes through while it is
  active; a proposal makes about 10^4 small torch calls, and the mode took about a fifth
  of its time. Where the default device already is the CPU the mode changes nothing else,
  so the proposal runs with torch function handling off (`torch._C.DisableTorchFunction`,
  which also turns the mode off). With another default device Optuna's context stays.
- Two of Optuna's functions are swapped for ours while the proposal runs
  (gp_acquisition.py): the acquisition function's arithmetic, and the line searches over
  integer and categorical keys scored in batches.
"""

from __future__ import annotations

from typing import Any

import optuna
import torch

from search.engine.sampling.gp_acquisition import swapped


def default_device_is_cpu() -> bool:
    """Whether torch creates tensors on the CPU when no device is named."""
    return torch.get_default_device().type == "cpu"


class GPSampler(optuna.samplers.GPSampler):
    """`optuna.samplers.GPSampler`, whose proposals skip torch's function modes where the
    default device is the CPU and use gp_acquisition.py's functions (module doc)."""

    def sample_relative(self, study, trial, search_space) -> dict[str, Any]:
        with swapped():
            if not default_device_is_cpu():
                return super().sample_relative(study, trial, search_space)
            with torch._C.DisableTorchFunction():
                return super().sample_relative(study, trial, search_space)
