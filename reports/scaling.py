"""The front at a budget nobody searched: a saturating power law fitted to a family's front,
read at larger budgets, with bootstrap intervals (`search predict`). Pure functions.

The law is error(N) = E + A * N^(-alpha) (N: parameters), fitted to the family's front on
the metric's *error scale* (`ERROR_SCALES`: a loss as it is, PSNR through its MSE
10^(-PSNR/10), accuracy and SSIM through 1 - value), by scipy's `least_squares` on the
log of the error (every point weighs the same whatever its size), with E >= 0, A > 0 and
0 < alpha <= 3. The front is the family's Pareto-optimal configurations in (parameters,
error): each is smaller than every configuration that is better.

The interval comes from the statistical core of `search compare` (verdicts/uncertainty.py):
each bootstrap draw resamples the family's configurations with replacement (which ones a
search finds) and redraws every drawn configuration's mean from its seeds (seed noise),
takes the front of the draw, refits the law and reads it at the targets. The 90%
percentile interval of those readings carries the noise, the search's luck and the fit's
own uncertainty; the difference between families and the chance that each one wins are
taken draw by draw.

A fit is not trusted (`trust` says why, and no number is given) with fewer than
MIN_FRONT front points, with front points spanning less than a factor MIN_SPAN in
parameters, or when more than a tenth of the draws cannot be fitted.

Shapes: params (k,), means (k,), stds (k,), runs (k,), numbers (k,) per family; targets
(t,); draws come back as (d, t) arrays of the metric, NaN where a draw could not be fitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from verdicts.uncertainty import resample_mask, seed_noise, stream

MIN_FRONT = 4  # front points a fit needs
MIN_SPAN = 10.0  # the front's largest / smallest parameter count a fit needs
MAX_FAILED = 0.1  # share of bootstrap draws allowed to fail the fit
ALPHA_MAX = 3.0


@dataclass(frozen=True)
class ErrorScale:
    """How a metric maps to an error that falls towards E as models grow, and back."""

    name: str
    to_error: Callable[[np.ndarray], np.ndarray]
    from_error: Callable[[np.ndarray], np.ndarray]


IDENTITY = ErrorScale("the metric itself", lambda v: np.asarray(v, dtype=float), lambda e: np.asarray(e, dtype=float))
ERROR_SCALES: dict[str, ErrorScale] = {
    "psnr": ErrorScale(
        "MSE = 10^(-PSNR/10)",
        lambda v: 10.0 ** (-np.asarray(v, dtype=float) / 10.0),
        lambda e: -10.0 * np.log10(np.asarray(e, dtype=float)),
    ),
    "accuracy": ErrorScale(
        "error rate = 1 - accuracy",
        lambda v: 1.0 - np.asarray(v, dtype=float),
        lambda e: 1.0 - np.asarray(e, dtype=float),
    ),
    "ssim": ErrorScale(
        "1 - SSIM", lambda v: 1.0 - np.asarray(v, dtype=float), lambda e: 1.0 - np.asarray(e, dtype=float)
    ),
}


def error_scale(metric: str, direction: str) -> ErrorScale:
    """The error scale of a metric: a minimised metric as it is, else `ERROR_SCALES`'.
    ValueError for a maximised metric with no known error scale."""
    if direction == "minimize":
        return IDENTITY
    if metric in ERROR_SCALES:
        return ERROR_SCALES[metric]
    raise ValueError(f"no error scale for the maximised metric {metric!r}; known: {', '.join(ERROR_SCALES)}")


def front_mask(params: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """(k,) bool: the configurations on the (min params, min error) front; finite errors
    only; of equal points the first. One sort and a running minimum (vectorised: the
    pages refit every bootstrap draw's front)."""
    params, errors = np.asarray(params, dtype=float), np.asarray(errors, dtype=float)
    out = np.zeros(len(params), dtype=bool)
    ok = np.flatnonzero(np.isfinite(errors) & np.isfinite(params))
    if len(ok) == 0:
        return out
    order = ok[np.lexsort((ok, errors[ok], params[ok]))]  # by params, then error, then index
    e = errors[order]
    before = np.concatenate(([np.inf], np.minimum.accumulate(e)[:-1]))  # best error of every smaller point
    out[order[e < before]] = True
    return out


def draw_fronts(params: np.ndarray, keep: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """(d, k) bool: per bootstrap draw d, the front (`front_mask`) of the configurations
    it keeps (keep[d]) with its redrawn errors (errors[d]). The configurations are sorted
    by size once; with no two of the same size, a draw's front is a running minimum in
    that order (ties fall back to `front_mask`, which orders them by error)."""
    params = np.asarray(params, dtype=float)
    keep, errors = np.atleast_2d(keep), np.atleast_2d(np.asarray(errors, dtype=float))
    out = np.zeros(keep.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(params))
    order = ok[np.argsort(params[ok], kind="stable")]
    tied = bool(np.any(np.diff(params[order]) == 0))
    for d in range(keep.shape[0]):
        if tied:
            out[d] = keep[d] & front_mask(np.where(keep[d], params, np.nan), errors[d])
            continue
        sel = order[keep[d][order] & np.isfinite(errors[d][order])]
        e = errors[d][sel]
        if len(e):
            before = np.concatenate(([np.inf], np.minimum.accumulate(e)[:-1]))
            out[d, sel[e < before]] = True
    return out


@dataclass(frozen=True)
class Law:
    """error(N) = E + A * N^(-alpha)."""

    E: float
    A: float
    alpha: float

    def __call__(self, n) -> np.ndarray:
        return self.E + self.A * np.asarray(n, dtype=float) ** (-self.alpha)


def fit_law(params: np.ndarray, errors: np.ndarray) -> Law | None:
    """The least-squares law through (params, errors) on the log of the error (None when
    the points are too few, not positive, or the solver fails)."""
    n, e = np.asarray(params, dtype=float), np.asarray(errors, dtype=float)
    ok = np.isfinite(n) & np.isfinite(e) & (n > 0) & (e > 0)
    n, e = n[ok], e[ok]
    if len(n) < 3:
        return None
    n0 = float(n.min())
    x = n / n0  # conditioning: the law in units of the smallest model
    log_e = np.log(e)

    def residuals(p):
        floor, log_a, alpha = p
        return np.log(floor + np.exp(log_a) * x ** (-alpha)) - log_e

    log_x = np.log(x)

    def jacobian(p):  # d residual / d (floor, log_a, alpha): analytic, so no finite differences
        floor, log_a, alpha = p
        power = np.exp(log_a) * x ** (-alpha)
        f = floor + power
        return np.column_stack([1.0 / f, power / f, -log_x * power / f])

    e_min = float(e.min())
    start = [0.5 * e_min, math.log(max(float(e.max()) - 0.5 * e_min, 1e-12)), 0.5]
    try:
        res = least_squares(residuals, start, jac=jacobian, bounds=([0.0, -50.0, 1e-3], [e_min, 50.0, ALPHA_MAX]))
    except (ValueError, FloatingPointError):
        return None
    if not res.success or not np.all(np.isfinite(res.x)):
        return None
    floor, log_a, alpha = (float(v) for v in res.x)
    return Law(floor, math.exp(log_a) * n0**alpha, alpha)


@dataclass(frozen=True)
class Prediction:
    """One family's law and its readings at the targets (metric scale)."""

    family: str
    law: Law | None  # fitted on every configuration's mean
    values: np.ndarray  # (t,) the law read at the targets, metric scale (NaN: not trusted)
    low: np.ndarray  # (t,) interval
    high: np.ndarray
    draws: np.ndarray  # (d, t) bootstrap readings, metric scale
    front_points: int
    span: float  # largest / smallest front parameter count
    trust: str | None  # None: trusted; else why not


def predict_family(
    family: str,
    params,
    means,
    stds,
    runs,
    numbers,
    targets,
    scale: ErrorScale,
    *,
    confidence: float = 0.9,
    draws: int = 400,
    seed: int = 0,
    skip_untrusted: bool = False,
) -> Prediction:
    """The law fitted to a family's front and read at `targets`, with its interval.
    `skip_untrusted`: no bootstrap refits when the front alone already fails the trust
    rules (the pages; benchmarks/verdicts/predict_calibration.py wants the draws of every fit)."""
    params, means = np.asarray(params, dtype=float), np.asarray(means, dtype=float)
    targets = np.asarray(targets, dtype=float)
    errors = scale.to_error(means)
    mask = front_mask(params, errors)
    law = fit_law(params[mask], errors[mask])
    span = float(params[mask].max() / params[mask].min()) if mask.any() else 0.0
    values = scale.from_error(law(targets)) if law is not None else np.full(len(targets), np.nan)
    if skip_untrusted and (mask.sum() < MIN_FRONT or span < MIN_SPAN):
        draws = 0  # not trusted whatever the draws say: no refits (the pages call this for every family)
    # a large family's seed noise in one vectorised draw (its own stream: seed_noise's `name`)
    noisy = scale.to_error(seed_noise(means, stds, runs, numbers, seed, draws, name="predict:" + family))
    keep = resample_mask(len(params), draws, stream(seed, family))
    out = np.full((draws, len(targets)), np.nan)
    fronts = draw_fronts(params, keep, noisy)
    for d in range(draws):
        m = fronts[d]
        if m.sum() < 3:
            continue
        fit = fit_law(params[m], noisy[d][m])
        if fit is not None:
            out[d] = scale.from_error(fit(targets))
    failed = float(np.mean(~np.isfinite(out[:, 0]))) if len(targets) and draws else 0.0
    trust = None
    if mask.sum() < MIN_FRONT:
        trust = f"{int(mask.sum())} front points (a fit needs {MIN_FRONT})"
    elif span < MIN_SPAN:
        trust = f"the front spans a factor {span:.3g} in parameters (a fit needs {MIN_SPAN:g})"
    elif law is None:
        trust = "the law cannot be fitted to the front"
    elif failed > MAX_FAILED:
        trust = f"{failed:.0%} of the bootstrap fits fail (at most {MAX_FAILED:.0%} allowed)"
    tail = (1 - confidence) / 2 * 100
    if trust is None:
        low, high = np.nanpercentile(out, tail, axis=0), np.nanpercentile(out, 100 - tail, axis=0)
    else:
        values = np.full(len(targets), np.nan)
        low = high = np.full(len(targets), np.nan)
    return Prediction(family, law, values, low, high, out, int(mask.sum()), span, trust)


@dataclass(frozen=True)
class Race:
    """At one target: each trusted family's chance to be best, and the leader's margin."""

    target: float
    p_win: dict[str, float]
    leader: str | None
    runner_up: str | None
    margin: float | None  # leader minus runner-up in the better direction (predicted)
    low: float | None
    high: float | None


def race(predictions: list[Prediction], targets, sign: float, confidence: float = 0.9) -> list[Race]:
    """Draw by draw, which trusted family is best at each target (sign +1: a larger metric
    is better), and the leader's margin over the runner-up with its interval."""
    trusted = [p for p in predictions if p.trust is None]
    out = []
    for i, target in enumerate(np.asarray(targets, dtype=float)):
        if not trusted:
            out.append(Race(float(target), {}, None, None, None, None, None))
            continue
        stack = np.column_stack([p.draws[:, i] for p in trusted])  # (d, f)
        ok = np.all(np.isfinite(stack), axis=1)
        wins = np.argmax(sign * stack[ok], axis=1) if ok.any() else np.zeros(0, dtype=int)
        p_win = {p.family: float(np.mean(wins == j)) if len(wins) else float("nan") for j, p in enumerate(trusted)}
        ranked = sorted(trusted, key=lambda p: -sign * p.values[i])
        if len(ranked) < 2:
            out.append(Race(float(target), p_win, ranked[0].family, None, None, None, None))
            continue
        a, b = ranked[0], ranked[1]
        diff = sign * (a.draws[:, i] - b.draws[:, i])
        diff = diff[np.isfinite(diff)]
        tail = (1 - confidence) / 2 * 100
        lo, hi = (float(x) for x in np.percentile(diff, [tail, 100 - tail])) if len(diff) else (None, None)
        out.append(Race(float(target), p_win, a.family, b.family, float(sign * (a.values[i] - b.values[i])), lo, hi))
    return out


def predict_study(
    df,
    metric: str,
    direction: str,
    targets,
    families: list[str] | None = None,
    *,
    confidence: float = 0.9,
    draws: int = 400,
    seed: int = 0,
) -> tuple[list[Prediction], list[Race]]:
    """Every family of a trials frame (storage's) fitted and read at `targets`; ValueError
    when the metric has no error scale."""
    from verdicts.candidates import candidates

    scale = error_scale(metric, direction)
    preds = [
        predict_family(
            f,
            c.params,
            c.means,
            c.stds,
            c.runs,
            c.numbers,
            targets,
            scale,
            confidence=confidence,
            draws=draws,
            seed=seed,
        )
        for f, c in candidates(df, metric, families).items()
    ]
    return preds, race(preds, targets, 1.0 if direction == "maximize" else -1.0, confidence)


def predictions_frame(predictions: list[Prediction], races: list[Race], targets, metric: str):
    """One row per target and family: the predicted metric, its interval, the chance to be
    best, the law and why a fit is not trusted (a pandas frame: the Python answer of
    `search predict`)."""
    import pandas as pd

    rows = []
    for i, target in enumerate(np.asarray(targets, dtype=float)):
        for p in predictions:
            law = p.law
            rows.append(
                {
                    "budget": target,
                    "family": p.family,
                    metric: p.values[i],
                    "low": p.low[i],
                    "high": p.high[i],
                    "p_best": races[i].p_win.get(p.family, np.nan),
                    "E": law.E if law else np.nan,
                    "A": law.A if law else np.nan,
                    "alpha": law.alpha if law else np.nan,
                    "front_points": p.front_points,
                    "span": p.span,
                    "trust": p.trust or "",
                }
            )
    return pd.DataFrame(rows)
