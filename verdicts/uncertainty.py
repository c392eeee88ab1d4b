"""How sure a front read at a budget is: the statistical core of `search compare` (and of
the front's other readers). Pure functions on arrays.

A family's value at budget B is the best mean metric among its complete configurations
with at most B parameters. Two kinds of luck move that value when the same search is run
again:

- **seed noise**: a configuration's mean over R runs is m ± s/sqrt(R); picking the best of
  several noisy configurations biases the pick upwards (the winner's curse);
- **search luck**: which configurations the search happened to try at or below B. Another
  search tries others; if one good configuration carries the value, a search that missed
  it reports the next one.

`front_draws` redraws both (method "trials", the default): each bootstrap draw resamples
the family's configurations with replacement (the search's luck: a configuration found
once is missed in about 37% of draws) and redraws every drawn configuration's mean from
m + s/sqrt(R) * t(R - 1) (seed noise), then redoes the selection at every budget. The
resamples of a maximum can show that this search was lucky, never that it was unlucky,
so the "trials" interval is made symmetric about the estimate (`interval`'s centre).
Configurations `fixed` by the search's design (each family's smallest model, which every
search with corners trains: verdicts/candidates.py `smallest_by_design`) are in every
resample: another search would have them too.
Method "seed" redraws the seed noise only (the intervals of earlier versions, percentile
intervals): it says how sure the value of *these* configurations is, not how a second
search would come out.

verdicts/thin.py says when a family's value at a budget cannot be read at all ("too thin
to tell"): too few configurations near it, or a training setting of its front never tried
there.

`pooled` combines replicate searches (the same question searched K times, `search run
--search-repeats K`): the value is the mean over the searches of each one's value, and
its interval is the Student t interval of that mean, from the spread between them, the
direct measure of how much a search's answer moves when the search is run again.

Shapes: params (k,), means (k,), stds (k,) (NaN with one run), runs (k,) int,
budgets (b,); draws come back as (d, b) arrays, NaN where a draw holds no configuration
within the budget.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
from scipy import special, stats

from core.limits import DEFAULT_ESTIMATE, DEFAULT_FORM, INTERVAL_FORMS  # their home: the CLI states them too
from verdicts.front_reading import estimate_at
from verdicts.subsampling import subsample_draws

INTERVAL_METHODS = ("trials", "seed", "subsample")
# Whether a method's intervals are made symmetric about the estimate (`interval`'s centre):
# measured in docs/benchmarks.md, "Verdicts that survive a second search".
SYMMETRIC = {"trials": True, "seed": False, "subsample": False}
DEFAULT_METHOD = "trials"
DEFAULT_WINDOW = 3.0  # "near a budget B": at least B / window parameters, at most B (measured with
# DEFAULT_MIN_NEAR: docs/benchmarks.md, "Verdicts that survive a second search")

METHOD_TEXT = {
    "trials": "bootstrap over the search's configurations (resampled with replacement: which ones a search "
    "finds) and over seed noise (each mean redrawn from mean + std/sqrt(runs) * t(runs - 1)), "
    "each family's value per budget read again in every draw; symmetric about the estimate",
    "seed": "parametric bootstrap over seed noise only: each configuration's mean redrawn from "
    "mean + std/sqrt(runs) * t(runs - 1), each family's value per budget read again in every draw "
    "(says nothing of which configurations another search would find)",
    "subsample": "m-out-of-k subsampling of the search's configurations (m = k/2, without replacement: "
    "which ones a search finds), each family's value per budget read again in every draw, its deviation "
    "from the estimate scaled by (m/k)^0.5 (the frontier estimate's rate), plus seed noise (each mean "
    "redrawn from mean + std/sqrt(runs) * t(df)); a basic interval",
}
SHORT_TEXT = {  # the method in a few words: `search compare`'s line under its answer
    "trials": "bootstrap over the search's configurations and their seed noise",
    "seed": "bootstrap over seed noise only",
    "subsample": "m-out-of-k subsampling of the search's configurations, and seed noise",
}
POOLED_SHORT = "Student t over the replicate searches' values"
NOISE_TEXT = {
    "pooled": "; a configuration's std is its family's, pooled over every configuration run twice or more "
    "(seed checks included), with the pooled degrees of freedom",
    "near": "; a configuration's std is pooled over the 3 configurations of its family run twice or more "
    "that scored nearest it",
    "own": "; a configuration's std is its own runs' (none with one run)",
    "trend": "; a configuration's std is read at its mean from the regression of the log variance on the mean "
    "over every configuration run twice or more (every family's)",
}
ESTIMATE_TEXT = {
    "best": "",
    "fit": "; a family's value at a budget is the local linear fit of its front's corners against log "
    "parameters within a factor 3 either side (tricube weights), kept between the best within the "
    "budget and the front's next corner above it; the trial shown is the best within the budget",
}
FIXED_TEXT = "; each family's smallest model, which the search trained as a corner, in every resample"
POOLED_TEXT = (
    "replicate searches: the mean over the searches of each one's value, with the Student t "
    "interval of that mean from the spread between the searches"
)


def check_method(method: str) -> str:
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r}; known: {', '.join(INTERVAL_METHODS)}")
    return method


def stream(seed: int, name: str) -> np.random.Generator:
    """A random stream that depends on the seed and a name only (not on call order)."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def degrees(runs: np.ndarray, dof: np.ndarray | None) -> np.ndarray:
    """(k,) the degrees of freedom of each configuration's std: its own, runs - 1, unless
    `dof` gives them (a pooled std's: `pooled_noise`)."""
    return np.asarray(runs) - 1 if dof is None else np.asarray(dof)


def pooled_noise(stds: np.ndarray, runs: np.ndarray) -> tuple[float, int] | None:
    """(s, df): the pooled seed std of configurations run R_i >= 2 times with stds s_i,
    s^2 = sum (R_i - 1) s_i^2 / df with df = sum (R_i - 1) (one-way analysis of variance's
    within-group estimate: the seed noise taken as the same for every configuration of a
    family); None when no configuration has two runs."""
    stds, runs = np.asarray(stds, dtype=float), np.asarray(runs)
    ok = (runs >= 2) & np.isfinite(stds)
    if not ok.any():
        return None
    df = int(np.sum(runs[ok] - 1))
    return float(math.sqrt(np.sum((runs[ok] - 1) * stds[ok] ** 2) / df)), df


NOISE_NEIGHBOURS = 3  # configurations run twice or more whose seed noise a configuration's is pooled from


def nearest_noise(
    means: np.ndarray, stds: np.ndarray, runs: np.ndarray, neighbours: int = NOISE_NEIGHBOURS
) -> tuple[np.ndarray, np.ndarray] | None:
    """(s, df), each (k,): every configuration's seed std pooled (as `pooled_noise`) over
    the `neighbours` configurations run twice or more whose means are nearest its own, and
    its degrees of freedom. Seed noise depends on how well a model trains (a model that
    trains badly varies more between seeds, and a bounded metric such as accuracy varies
    less near its bound), so a configuration borrows the noise of those that scored like
    it, not of the whole family. None when no configuration has two runs."""
    means, stds, runs = np.asarray(means, dtype=float), np.asarray(stds, dtype=float), np.asarray(runs)
    ok = (runs >= 2) & np.isfinite(stds)
    if not ok.any():
        return None
    m, s, r = means[ok], stds[ok], runs[ok]
    n = min(neighbours, len(m))
    near = np.argsort(np.abs(means[:, None] - m[None, :]), axis=1, kind="stable")[:, :n]  # (k, n)
    df = np.sum(r[near] - 1, axis=1)
    var = np.sum((r[near] - 1) * s[near] ** 2, axis=1) / df
    return np.sqrt(var), df


def trend_noise(means: np.ndarray, stds: np.ndarray, runs: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(s, df): the seed std at each mean of `at` (k,), from how the seed noise of the
    configurations run twice or more changes with their mean: the regression of log s_i^2
    on m_i, each log s_i^2 less its bias E[log(chi2_nu / nu)] = psi(nu/2) + log(2/nu) and
    weighted by the inverse of its variance psi'(nu/2), nu_i = R_i - 1 (the log-variance
    regression of Harvey 1976, Econometrica 44); s(m)^2 = exp(a + b m), m clipped to the
    range of the checked means (no extrapolation past it); df = sum nu_i - 2. A metric with
    a bound (accuracy) varies less near it, and a model that trains badly more between
    seeds: the trend reads both, where one pooled std would give the best configurations
    the noise of the worst. Configurations with s_i = 0 (identical runs) are left out (log
    0); None with fewer than three left, or fewer than two distinct means."""
    means, stds, runs = np.asarray(means, dtype=float), np.asarray(stds, dtype=float), np.asarray(runs)
    ok = (runs >= 2) & np.isfinite(stds) & (stds > 0) & np.isfinite(means)
    if ok.sum() < 3 or len(np.unique(means[ok])) < 2:
        return None
    nu = (runs[ok] - 1).astype(float)
    y = np.log(stds[ok] ** 2) - (special.digamma(nu / 2) + np.log(2 / nu))
    w = 1.0 / special.polygamma(1, nu / 2)
    x = means[ok]
    b, a = np.polyfit(x, y, 1, w=np.sqrt(w))
    m = np.clip(np.asarray(at, dtype=float), x.min(), x.max())
    return np.sqrt(np.exp(a + b * m)), int(nu.sum()) - 2


def seed_noise(
    means: np.ndarray,
    stds: np.ndarray,
    runs: np.ndarray,
    numbers: np.ndarray,
    seed: int,
    draws: int,
    name: str | None = None,
    dof: np.ndarray | None = None,
) -> np.ndarray:
    """(draws, k) redrawn means: m + s/sqrt(R) * t(df), df = R - 1 unless `dof` gives it
    (a pooled std's); a configuration with df 0 (one run of its own) or no finite std stays
    at m. Each configuration's draws come from its own stream (seed, trial number), so a
    result does not depend on the order of the configurations; with more than EXACT_UP_TO
    configurations and a `name`, from one stream (seed, name) in trial-number order
    instead (one vectorised draw: a large study's verdicts stay fast)."""
    means = np.asarray(means, dtype=float)
    k = len(means)
    runs = np.asarray(runs)
    stds = np.asarray(stds, dtype=float)
    df = degrees(runs, dof)
    noisy = (df >= 1) & np.isfinite(stds)
    if not noisy.any():  # nothing to redraw (single runs): every draw is the means themselves
        return np.broadcast_to(means, (draws, k)).copy()
    if name is not None and k > EXACT_UP_TO:
        rows, order = _noise_rows(means, stds, runs, numbers, noisy, seed, draws, name, df)
        out = np.empty((draws, k))
        out[:, order] = rows.T  # back from trial-number order to the configurations' order
        return out
    noise = np.zeros((k, draws))  # one row per configuration: contiguous writes
    for j in range(k):
        if noisy[j]:
            rng = np.random.default_rng([seed, int(numbers[j])])
            noise[j] = rng.standard_t(df[j], size=draws) * (stds[j] / np.sqrt(runs[j]))
    return means[None, :] + noise.T


def _noise_rows(
    means: np.ndarray,
    stds: np.ndarray,
    runs: np.ndarray,
    numbers: np.ndarray,
    noisy: np.ndarray,
    seed: int,
    draws: int,
    name: str,
    dof: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`seed_noise`'s one vectorised draw, transposed: (k, draws) redrawn means, one row per
    configuration in trial-number order, and that order (row r is configuration order[r]);
    dof: each configuration's degrees of freedom (`degrees`)."""
    k = len(means)
    order = np.argsort(np.asarray(numbers), kind="stable")
    df = np.where(noisy, dof, 1)[order]
    # one degree of freedom for all (the same runs everywhere): the scalar call, the same draws
    rows = stream(seed, "noise:" + name).standard_t(df[0] if np.all(df == df[0]) else df[:, None], size=(k, draws))
    rows *= np.where(noisy, stds / np.sqrt(np.maximum(runs, 1)), 0.0)[order][:, None]
    rows += means[order][:, None]
    return rows, order


EXACT_UP_TO = 256  # configurations up to which a resample is the exact multinomial one


def resample_mask(k: int, draws: int, rng: np.random.Generator, fixed: np.ndarray | None = None) -> np.ndarray:
    """(draws, k) bool: which of k configurations a bootstrap resample (k drawn with
    replacement) contains, the `fixed` ones (k,) in every resample. Beyond EXACT_UP_TO
    configurations each is in a resample independently with its exact chance
    1 - (1 - 1/k)^k (the Poisson bootstrap's approximation: the same marginals, a fraction
    of the cost)."""
    if k == 0:
        return np.zeros((draws, 0), dtype=bool)
    if k > EXACT_UP_TO:
        out = rng.random((draws, k)) < 1.0 - (1.0 - 1.0 / k) ** k
    else:
        out = rng.multinomial(k, np.full(k, 1.0 / k), size=draws) > 0
    if fixed is not None:
        out[:, np.asarray(fixed, dtype=bool)] = True
    return out


WORK = 4_000_000  # draws x configurations a family's bootstrap may cost
MIN_DRAWS = 400


def draws_for(k: int, draws: int) -> int:
    """The draws a family of k configurations gets: `draws`, fewer for a large family so
    that the work stays within WORK, and never fewer than MIN_DRAWS (a 10,000-trial study's
    verdicts take 400 draws: about 10 in each 2.5% tail)."""
    return max(1, min(draws, max(MIN_DRAWS, WORK // max(k, 1))))


def front_draws(
    params: np.ndarray,
    means: np.ndarray,
    stds: np.ndarray,
    runs: np.ndarray,
    numbers: np.ndarray,
    budgets,
    sign: float,
    *,
    method: str = DEFAULT_METHOD,
    seed: int = 0,
    draws: int = 2000,
    name: str = "",
    dof: np.ndarray | None = None,
    estimate: str = DEFAULT_ESTIMATE,
    fixed: np.ndarray | None = None,
) -> np.ndarray:
    """(n, b) bootstrap draws of the family's value at each budget, n = draws_for(k,
    draws) (see the module docstring for the methods); `name` (the family) picks the
    resampling stream; `dof` the stds' degrees of freedom where they are not runs - 1;
    `estimate` how each draw reads the value (`estimate_at`); `fixed` (k,) bool: the
    configurations methods "trials" and "subsample" keep in every resample."""
    check_method(method)
    params = np.asarray(params, dtype=float)
    budgets = np.asarray(budgets, dtype=float)
    k = len(params)
    draws = draws_for(k, draws)
    means, stds, runs = np.asarray(means, dtype=float), np.asarray(stds, dtype=float), np.asarray(runs)
    df = degrees(runs, dof)
    noisy = (df >= 1) & np.isfinite(stds)
    if name is not None and k > EXACT_UP_TO and noisy.any() and method != "subsample" and estimate == "best":
        rows, order = _noise_rows(means, stds, runs, numbers, noisy, seed, draws, name, df)
        include = resample_mask(k, draws, stream(seed, name), fixed) if method == "trials" else None
        return _best_within_rows(rows, order, params, budgets, sign, include)
    values = seed_noise(means, stds, runs, numbers, seed, draws, name, dof)
    if method == "subsample":
        return subsample_draws(values, means, params, budgets, sign, stream(seed, name), estimate=estimate, fixed=fixed)
    include = resample_mask(k, draws, stream(seed, name), fixed) if method == "trials" else None
    return estimate_at(estimate, values, params, budgets, sign, include)


def _best_within_rows(
    rows: np.ndarray,
    order: np.ndarray,
    params: np.ndarray,
    budgets: np.ndarray,
    sign: float,
    include: np.ndarray | None,
) -> np.ndarray:
    """`best_within` of draws held as `_noise_rows` gives them ((k, d), a row per
    configuration, row r configuration order[r]): the configurations between consecutive
    budgets are taken as whole rows and reduced, so the (d, k) draws are never transposed
    or gathered column by column (a large family's verdicts: a third of their time)."""
    k, d = rows.shape
    out = np.full((d, len(budgets)), np.nan)
    row_of = np.empty(k, dtype=np.intp)
    row_of[order] = np.arange(k)
    by_size = np.argsort(params, kind="stable")
    ends = np.searchsorted(params[by_size], budgets, side="right")
    cuts = np.unique(ends[ends > 0])
    if len(cuts) == 0:
        return out
    inc_rows = None if include is None else np.ascontiguousarray(include.T)  # (k, d), configuration order
    best = np.empty((len(cuts), d))
    start = 0
    for i, end in enumerate(cuts):
        configs = by_size[start:end]
        block = rows[row_of[configs]]
        if sign != 1.0:
            block *= sign
        if inc_rows is not None:
            np.copyto(block, -np.inf, where=~inc_rows[configs])
        best[i] = block.max(axis=0)
        start = end
    running = np.maximum.accumulate(best, axis=0)
    for i, end in enumerate(ends):
        if end == 0:
            continue
        b = running[np.searchsorted(cuts, end)]
        out[:, i] = np.where(np.isfinite(b), sign * b, np.nan)
    return out


FORM_TEXT = {
    "percentile": "",
    "normal": "; the interval is the estimate plus or minus z times the draws' standard deviation "
    "(the normal bootstrap interval)",
}
UNTRIED_TEXT = "; a family whose front trains with a learning rate it never tried near a budget is too thin there"


def check_form(form: str) -> str:
    """`form`, if it is one of INTERVAL_FORMS (else ValueError)."""
    if form not in INTERVAL_FORMS:
        raise ValueError(f"unknown interval form {form!r}; known: {', '.join(INTERVAL_FORMS)}")
    return form


def interval(
    draws: np.ndarray, confidence: float, centre: float | None = None, form: str = DEFAULT_FORM
) -> tuple[float, float] | None:
    """The central `confidence` percentile interval of 1-D bootstrap draws; NaN draws (no
    configuration within the budget in that resample) count as unknown: when more of them
    than the interval may leave out on one side, there is no interval (None).

    With `centre` (the estimate itself), the interval is made symmetric about it: its
    half-width is the larger of the percentile interval's two distances from the centre.
    A front read at a budget is a maximum, whose resamples never exceed what was found:
    the percentile interval reaches down (this search may have been lucky) but hardly up
    (it may as well have been unlucky and missed a better configuration, which no resample
    can show); the symmetric interval carries the same spread both ways.

    `form` "normal": the normal bootstrap interval (Efron & Tibshirani 1993, "An
    Introduction to the Bootstrap", Sec. 13.2), centre ± z se with se the draws' standard
    deviation (the centre the draws' median where none is given): a maximum's resamples
    have a long lower tail (those that miss the best configurations), which sets the
    percentile's distance and counts less in the standard deviation (docs/benchmarks.md
    §30)."""
    check_form(form)
    draws = np.asarray(draws, dtype=float)
    tail = (1 - confidence) / 2
    finite = draws[np.isfinite(draws)]
    if len(finite) == 0 or (len(draws) - len(finite)) / len(draws) > tail:
        return None
    if form == "normal":
        mid = float(np.median(finite)) if centre is None else centre
        half = float(stats.norm.ppf(1 - tail) * np.std(finite, ddof=1)) if len(finite) > 1 else 0.0
        return mid - half, mid + half
    lo, hi = (float(x) for x in np.percentile(finite, [tail * 100, (1 - tail) * 100]))
    if centre is None:
        return lo, hi
    half = max(centre - lo, hi - centre, 0.0)
    return centre - half, centre + half


def t_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float] | None:
    """(mean, low, high): the Student t interval of the mean of replicate values (NaN values
    dropped); None with fewer than two."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return None
    mean = float(v.mean())
    half = float(stats.t.ppf((1 + confidence) / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return mean, mean - half, mean + half
