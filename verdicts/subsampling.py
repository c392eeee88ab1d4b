"""The m-out-of-k subsampling interval of a family's value at a budget (`search compare
--interval subsample`). Pure functions on arrays.

Shapes: values (d, k) (rows: draws of seed noise), means (k,), params (k,), budgets (b,);
results (d, b).
"""

from __future__ import annotations

import numpy as np

from core.limits import DEFAULT_ESTIMATE
from verdicts.front_reading import estimate_at

SUBSAMPLE = 0.5  # "subsample": the share of a family's configurations each draw keeps (m = SUBSAMPLE x k)
FRONTIER_RATE = 0.5  # the rate n^kappa at which a best-within-budget estimate converges, kappa for one
# input (parameters) and one output (the metric): Park, Simar & Weiner (2000), Econometric Theory 16


def subsample_mask(
    k: int, draws: int, rng: np.random.Generator, share: float = SUBSAMPLE, fixed: np.ndarray | None = None
) -> np.ndarray:
    """(draws, k) bool: m = round(share x n) (at least 1, at most n - 1 for n >= 2) of the n
    configurations that are not `fixed` in each row, drawn without replacement, and the
    `fixed` ones (k,) in every row."""
    if k == 0:
        return np.zeros((draws, 0), dtype=bool)
    free = np.ones(k, dtype=bool) if fixed is None else ~np.asarray(fixed, dtype=bool)
    n = int(free.sum())
    out = np.ones((draws, k), dtype=bool)
    if n == 0:
        return out
    m = min(max(1, round(share * n)), max(n - 1, 1))
    keys = rng.random((draws, n))
    out[:, free] = keys <= np.sort(keys, axis=1)[:, m - 1 : m]
    return out


def subsample_draws(
    values: np.ndarray,
    means: np.ndarray,
    params: np.ndarray,
    budgets: np.ndarray,
    sign: float,
    rng: np.random.Generator,
    share: float = SUBSAMPLE,
    estimate: str = DEFAULT_ESTIMATE,
    fixed: np.ndarray | None = None,
) -> np.ndarray:
    """(d, b) draws whose percentile interval is the m-out-of-k subsampling interval of the
    best value within each budget (Simar & Wilson 2011, "Inference by the m out of n
    bootstrap in nonparametric frontier models", J. Productivity Analysis 36): in draw j,
    the best of a subsample S_j of m configurations, split into its search luck L_j =
    best(means, S_j) - best(means) and its seed noise N_j = best(values_j, S_j) -
    best(means, S_j); the draw is best(means) - (m/k)^kappa L_j - N_j, so that its
    percentiles give the basic interval [estimate - q_hi, estimate - q_lo] of the scaled
    deviations. The naive bootstrap of a maximum is inconsistent (Bickel & Freedman 1981):
    its resamples miss the best configuration a third of the time and the interval is as
    wide as the gap to the next one. NaN where the subsample holds no model within the
    budget. `estimate` reads every best (`estimate_at`): "fit" reads the front's fit instead.
    `fixed` (k,) bool: configurations every search has (verdicts/candidates.py
    `smallest_by_design`), in every subsample; m and k then count the others only (the
    luck is which of those a search finds)."""
    values = np.atleast_2d(values)
    d, k = values.shape
    include = subsample_mask(k, d, rng, share, fixed)
    n_fixed = 0 if fixed is None else int(np.sum(fixed))
    m = int(include[0].sum()) - n_fixed if d and k else 0  # drawn of the k - n_fixed that are not fixed
    est = estimate_at(estimate, np.asarray(means, dtype=float)[None, :], params, budgets, sign)[0]  # (b,)
    sub_plain = estimate_at(estimate, np.broadcast_to(means, (d, k)), params, budgets, sign, include)
    sub_noisy = estimate_at(estimate, values, params, budgets, sign, include)
    scale = (m / (k - n_fixed)) ** FRONTIER_RATE if m else 1.0
    return est[None, :] - scale * (sub_plain - est[None, :]) - (sub_noisy - sub_plain)
