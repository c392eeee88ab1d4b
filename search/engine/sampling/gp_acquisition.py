"""Two parts of Optuna's GP proposal computed with fewer steps, the same numbers up to
rounding, swapped in only while the product's GPSampler proposes (gp_sampler.py):

- `log_ehvi` for Optuna's `logehvi` (optuna/_gp/acqf.py), the acquisition function of
  several objectives: the log of a mean of products rather than a log-sum-exp of sums of
  logs, equal in exact arithmetic, with one logarithm per point instead of one per sample,
  box and objective (Optuna 5.1 takes 128 samples; the boxes are those of the front's
  non-dominated region).
- `local_search_discrete_batched` for Optuna's function of that name (optuna/_gp/
  optim_mixed.py): the acquisition search's line searches over an integer or categorical
  key, one per start point, run side by side in greenlets, so that each round's points of
  all starts are scored in one call, as Optuna's own batched L-BFGS does for the floats
  (optuna/_gp/batched_lbfgsb.py); Optuna runs them one after another, scoring one point
  a call (its code marks it "TODO: Actually make it batched"). Each start's search is
  Optuna's `_local_search_discrete`, unchanged.

`swapped()` replaces each only where Optuna's function has the parameters it replaces
(Optuna 5.0 and 5.1 do), and puts Optuna's back after the block. Measured in
docs/results/speed.md, "The GP's proposal, lighter".
"""

from __future__ import annotations

import contextlib
import inspect
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna._gp.acqf as optuna_acqf
import optuna._gp.optim_mixed as optuna_optim
import torch
from greenlet import greenlet

MAX_OBJECTIVES = 8  # a product of 8 clamped terms (each at least EPS = 1e-12) stays far above float64's least value


def log_ehvi(
    Y_post: torch.Tensor,  # (..., S samples, M objectives), to be maximised
    non_dominated_box_lower_bounds: torch.Tensor,  # (B boxes, M)
    non_dominated_box_intervals: torch.Tensor,  # (B, M)
) -> torch.Tensor:  # (...,)
    """The log of the expected hypervolume improvement, as a Monte Carlo mean over the S
    posterior samples y_s (Daulton et al. 2020, eq. 1, the form Optuna's `logehvi` computes):

        log EHVI = log( (1/S) sum_s sum_b prod_m clamp(y_sm - l_bm, EPS, u_bm - l_bm) )

    Optuna takes it as logsumexp over (s, b) of sum_m log(...); the same value with one
    logarithm per point, and the product taken objective by objective (no (..., S, B, M)
    tensor). Past MAX_OBJECTIVES it is Optuna's function."""
    if Y_post.shape[-1] > MAX_OBJECTIVES:
        return OPTUNA["logehvi"](Y_post, non_dominated_box_lower_bounds, non_dominated_box_intervals)
    eps = torch.tensor(optuna_acqf._EPS, dtype=torch.float64)
    volume = None  # (..., S, B): the product over the objectives so far, one objective at a time
    for m in range(Y_post.shape[-1]):
        side = (Y_post[..., m : m + 1] - non_dominated_box_lower_bounds[:, m]).clamp_(
            min=eps, max=non_dominated_box_intervals[:, m]
        )
        volume = side if volume is None else volume.mul_(side)
    return volume.sum(dim=(-2, -1)).log() - math.log(Y_post.shape[-2])


class _Asking:
    """An acquisition function whose scoring is asked of the parent greenlet (the loop of
    `local_search_discrete_batched`), which scores every start's points at once."""

    def __init__(self, acqf) -> None:
        self.search_space = acqf.search_space

    def eval_acqf_no_grad(self, x: np.ndarray) -> np.ndarray:
        return greenlet.getcurrent().parent.switch(x)


def local_search_discrete_batched(
    acqf,
    initial_params_batched: np.ndarray,  # (N starts, D)
    initial_fvals: np.ndarray,  # (N,)
    param_idx: int,
    choices: np.ndarray,  # (C,) the key's normalised values
    xtol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # best params (N, D), their values (N,), improved (N,)
    """Optuna's `_local_search_discrete` from each start, side by side (module doc)."""
    best = initial_params_batched.copy()
    values = initial_fvals.copy()
    improved = np.zeros(len(initial_fvals), dtype=bool)
    asking = _Asking(acqf)

    def search(i: int) -> None:
        best[i], values[i], improved[i] = optuna_optim._local_search_discrete(
            asking, initial_params_batched[i], initial_fvals[i], param_idx, choices, xtol
        )

    running = [greenlet(search) for _ in range(len(initial_fvals))]
    asked = [g.switch(i) for i, g in enumerate(running)]  # each start's first points (None: done)
    while True:
        pending = [(g, np.atleast_2d(x), np.ndim(x)) for g, x in zip(running, asked, strict=True) if x is not None]
        if not pending:
            return best, values, improved
        scored = acqf.eval_acqf_no_grad(np.vstack([x for _, x, _ in pending]))
        ends = np.cumsum([len(x) for _, x, _ in pending])
        running, asked = [], []
        for (g, _, ndim), part in zip(pending, np.split(scored, ends[:-1]), strict=True):
            running.append(g)
            asked.append(g.switch(part if ndim == 2 else part[0]))


@dataclass(frozen=True)
class Swap:
    """Optuna's `module.name`, replaced by `ours` where its parameters are `params`."""

    module: Any
    name: str
    ours: Any
    params: tuple[str, ...]

    def replaceable(self) -> bool:
        real = OPTUNA.get(self.name)
        return real is not None and tuple(inspect.signature(real).parameters) == self.params


SWAPS = (
    Swap(optuna_acqf, "logehvi", log_ehvi, ("Y_post", "non_dominated_box_lower_bounds", "non_dominated_box_intervals")),
    Swap(
        optuna_optim,
        "_local_search_discrete_batched",
        local_search_discrete_batched,
        ("acqf", "initial_params_batched", "initial_fvals", "param_idx", "choices", "xtol"),
    ),
)
OPTUNA = {s.name: getattr(s.module, s.name, None) for s in SWAPS}  # Optuna's own functions


@contextlib.contextmanager
def swapped():
    """While the block runs, each replaceable function of Optuna's GP is ours (module doc)."""
    active = [s for s in SWAPS if s.replaceable()]
    for s in active:
        setattr(s.module, s.name, s.ours)
    try:
        yield
    finally:
        for s in active:
            setattr(s.module, s.name, OPTUNA[s.name])
