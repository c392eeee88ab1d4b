"""A family's value at a budget from the front's neighbouring configurations: the local
linear fit of the front against log parameters, kept monotone. Pure functions on arrays.

The best configuration within a budget B (`verdicts/front_reading.py best_within`) reads
the front as a step: the value at B is the last front configuration at or below B, and a
search that happened to try nothing just below B reads a smaller model. Every other
configuration near B is ignored. The fit reads the front as the curve it samples:

- the front's corners: configurations better than every smaller one (in order of size,
  v_j > max_{i < j} v_i, the metric signed so that larger is better);
- x_j = ln p_j - ln B, and tricube weights K_j = (1 - (|x_j| / h)^3)^3 for |x_j| < h,
  h = ln(window) (corners within a factor `window` of B on either side);
- the weighted least-squares line through the corners, a + b x, read at x = 0:
  a = (S2 T0 - S1 T1) / (S0 S2 - S1^2), S_n = sum K_j x_j^n, T_n = sum K_j x_j^n v_j
  (Cleveland 1979's local linear regression); with one corner in the window (or corners of
  one size), a = T0 / S0;
- kept monotone: the front never falls with size, so a is clipped to [F(B), F(B+)], F(B)
  the best value within B (the step) and F(B+) the front's next corner above B; with no
  corner above B (at the largest budget) the value is F(B), and it is F(B) with no corner
  in the window. NaN where no configuration lies within B.

The fit is an estimate of the front's level at B; the configuration to take home is
still the best within B, which `search compare` shows beside it.

Shapes: values (d, k) (rows: bootstrap draws), params (k,), budgets (b,), include (d, k)
bool or None; the result is (d, b).
"""

from __future__ import annotations

import math

import numpy as np

FIT_WINDOW = 3.0  # the kernel's reach: corners within a factor 3 of the budget either side


def tricube(x: np.ndarray, h: float) -> np.ndarray:
    """(1 - (|x| / h)^3)^3 inside |x| < h, else 0."""
    u = np.clip(np.abs(x) / h, 0.0, 1.0)
    return (1.0 - u**3) ** 3


def front_fit(
    values: np.ndarray,
    params: np.ndarray,
    budgets: np.ndarray,
    sign: float,
    include: np.ndarray | None = None,
    window: float = FIT_WINDOW,
) -> np.ndarray:
    """(d, b): per row of values (d, k), the front's local linear fit at each budget (see
    the module docstring); sign +1 maximise, -1 minimise; include (d, k) the configurations
    each row holds (None: all)."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    params = np.asarray(params, dtype=float)
    budgets = np.asarray(budgets, dtype=float)
    d, k = values.shape
    if k == 0 or len(budgets) == 0:
        return np.full((d, len(budgets)), np.nan)
    order = np.argsort(params, kind="stable")
    p = params[order]
    v = sign * values[:, order]
    if include is not None:
        v = np.where(include[:, order], v, -np.inf)
    before = np.concatenate([np.full((d, 1), -np.inf), np.maximum.accumulate(v, axis=1)[:, :-1]], axis=1)
    corner = np.isfinite(v) & (v > before)  # (d, k)
    c = corner.astype(float)
    cv = np.where(corner, v, 0.0)
    x = np.log(p)[:, None] - np.log(budgets)[None, :]  # (k, b)
    kern = tricube(x, math.log(window))
    s0, s1, s2 = c @ kern, c @ (kern * x), c @ (kern * x * x)
    t0, t1 = cv @ kern, cv @ (kern * x)
    det = s0 * s2 - s1 * s1
    with np.errstate(divide="ignore", invalid="ignore"):
        line = (s2 * t0 - s1 * t1) / det
        level = t0 / s0
    flat = ~(det > 1e-12 * np.maximum(s0 * s0, 1e-300))  # one corner, or corners of one size
    fit = np.where(flat, level, line)
    low, high = np.full((d, len(budgets)), -np.inf), np.full((d, len(budgets)), np.inf)
    for i, budget in enumerate(budgets):  # F(B), the best within B, and F(B+), the next corner above B
        within = int(np.searchsorted(p, budget, side="right"))
        if within:
            low[:, i] = v[:, :within].max(axis=1)
        if within < k:
            high[:, i] = np.where(corner[:, within:], v[:, within:], np.inf).min(axis=1)
    high = np.where(np.isfinite(high), high, low)
    est = np.where(s0 > 0, np.clip(fit, low, np.maximum(low, high)), low)
    return np.where(np.isfinite(low), sign * est, np.nan)
