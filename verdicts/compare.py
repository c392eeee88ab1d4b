"""Which shape wins at each budget, and how sure that is: pure statistics on a family's
configurations (verdicts/candidates.py's `Candidates`, read from a trials frame).

For a budget level B, a family's value is read from its front at B: by default its best
configuration within B, or the front's local linear fit around B (`estimate="fit"`,
verdicts/front_fit.py); the configuration shown is the best within B either way. Its
uncertainty comes from the search's luck and from seed noise (verdicts/uncertainty.py):
picking the best of many noisy configurations biases the value upwards (the winner's
curse), so the interval is not the chosen configuration's own: a bootstrap redraws every
candidate configuration's mean from its sampling distribution (m + s/sqrt(R) * T, T ~
Student t) and, by default, resamples which configurations the search found, and redoes
the whole reading in each draw; the difference between two families is taken draw by draw.
Where a candidate configuration's seed noise is unknown (single runs, no seed checks), the
interval is None and the verdict says "single run" instead of inventing one.

Shapes: `Candidates`' arrays are (k,); budgets a list of floats. Directions are
`core.directions`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.directions import check_direction
from core.limits import DEFAULT_ESTIMATE, DEFAULT_MIN_NEAR, DEFAULT_NOISE
from verdicts.candidates import Candidates, with_noise
from verdicts.front_reading import estimate_at, rests_on_one
from verdicts.thin import Thin, thin_at, untried_at
from verdicts.uncertainty import (
    DEFAULT_FORM,
    DEFAULT_METHOD,
    DEFAULT_WINDOW,
    SYMMETRIC,
    draws_for,
    front_draws,
    interval,
    t_interval,
)

DEFAULT_CONFIDENCE = 0.95
DEFAULT_DRAWS = 2000


def _sign(direction: str) -> float:
    return 1.0 if check_direction(direction) == "maximize" else -1.0


def percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central `confidence` percentile interval of bootstrap draws."""
    lo, hi = np.percentile(draws, [(1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100])
    return float(lo), float(hi)


@dataclass(frozen=True)
class FamilyAtLevel:
    family: str
    value: float | None  # the family's value within the budget, by the estimate read (None: no model that small)
    low: float | None  # its interval (None: unknown: single runs, or too thin)
    high: float | None
    number: int | None  # the trial that reaches it
    params: float | None
    config: dict[str, Any] = field(default_factory=dict)
    runs: int = 0
    thin: Thin | None = None  # too few configurations near the budget to read it there
    searches: int = 1  # replicate searches the value is the mean of
    best: float | None = None  # the best configuration's mean (trial `number`), whatever the estimate


@dataclass(frozen=True)
class Verdict:
    budget: float
    families: list[FamilyAtLevel]
    winner: str | None  # None: no family has a model this small
    runner_up: str | None
    margin: float | None  # winner minus runner-up, in the better direction (>= 0)
    margin_low: float | None  # interval of that difference (None: unknown)
    margin_high: float | None
    status: str  # one of STATUSES
    equivalence: float | None = None  # D of `--margin D`: "equivalent" when the interval lies inside (-D, D)

    @property
    def text(self) -> str:
        if self.winner is None:
            return "no model this small"
        if self.status == "only one family":
            return f"only {self.winner} has a model within this budget"
        gap = f"{self.winner} ahead of {self.runner_up} by {self.margin:.4g}"
        if self.status == "too thin":
            return "too thin to tell: " + "; ".join(thin_text(r) for r in self.families if r.thin is not None)
        if self.status == "single run":
            return f"{gap} (single run: no interval; search with --repeats 2 or --seed-checks)"
        ci = f"interval {self.margin_low:.4g} .. {self.margin_high:.4g}"
        if self.status == "better":
            return f"{self.winner} better by {self.margin:.4g} ({ci})"
        if self.status == "equivalent":
            return f"equivalent within ±{self.equivalence:.4g} ({gap}; {ci})"
        return f"not distinguishable ({gap}; {ci})"


STATUSES = ("better", "equivalent", "not distinguishable", "too thin", "single run", "only one family", "no model")


def settled(lo: float, hi: float, equivalence: float | None) -> str:
    """The answer an interval [lo, hi] of winner minus runner-up (in the better direction)
    gives: "equivalent" when it lies inside (-D, D) for `--margin D` (the two one-sided
    tests at the interval's level: the difference is smaller than D, whichever leads),
    else "better" when it excludes 0, else "not distinguishable"."""
    if equivalence is not None and -equivalence < lo and hi < equivalence:
        return "equivalent"
    return "better" if lo > 0 else "not distinguishable"


def thin_text(r: FamilyAtLevel) -> str:
    """Why a family cannot be read at a budget, and what would fix it."""
    from core.budget import format_count

    t = r.thin
    if t.kind == "one":
        fall = "it is the only one" if math.isinf(t.gap) else f"without it the value falls by {t.gap:.4g}"
        return f"{r.family}'s value rests on one configuration (trial #{r.number}; {fall}): search more at this budget"
    if t.kind == "untried":
        what = "; ".join(
            ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in u.items()) for u in t.untried
        )
        return (
            f"{r.family}'s front trains with {what}, which it never tried between {format_count(t.low)} and "
            f"{format_count(t.budget)}: search more at this budget"
        )
    if t.kind == "resampled":
        n = f"{t.near} configuration{'s' if t.near != 1 else ''}"
        return (
            f"{r.family}'s value rests on {n} at or below {format_count(t.budget)}, which another search "
            f"would often not find: search more at this budget"
        )
    where = f"between {format_count(t.low)} and {format_count(t.budget)}"
    has = f"{r.family} has {t.near} configuration{'s' if t.near != 1 else ''} {where} ({t.needed} needed)"
    if t.more_trials is None:
        return f"{has}: search at this budget"
    return f"{has}: about {t.more_trials} more trial{'s' if t.more_trials != 1 else ''} of {r.family}"


def _settle(
    budget: float, rows: list[FamilyAtLevel], diff_of, sign: float, equivalence: float | None = None
) -> Verdict:
    """The verdict at one budget from the families' rows; diff_of(a, b) gives the interval
    of a - b, in the better direction: None when the seed noise is unknown (single runs),
    "thin" when the resamples too often hold no model within the budget."""
    present = sorted((r for r in rows if r.value is not None), key=lambda r: (-sign * r.value, r.family))
    if not present:
        return Verdict(budget, rows, None, None, None, None, None, "no model")
    if len(present) == 1:
        return Verdict(budget, rows, present[0].family, None, None, None, None, "only one family")
    win, second = present[0], present[1]
    margin = sign * (win.value - second.value)
    if win.thin is not None or second.thin is not None:
        return Verdict(budget, rows, win.family, second.family, margin, None, None, "too thin")
    iv = diff_of(win.family, second.family)
    if iv is None:
        return Verdict(budget, rows, win.family, second.family, margin, None, None, "single run")
    if iv == "thin":
        return Verdict(budget, rows, win.family, second.family, margin, None, None, "too thin")
    lo, hi = iv
    return Verdict(budget, rows, win.family, second.family, margin, lo, hi, settled(lo, hi, equivalence), equivalence)


def compare_at(
    cands: dict[str, Candidates],
    budgets: list[float],
    direction: str,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
    window: float = DEFAULT_WINDOW,
    min_near: int = DEFAULT_MIN_NEAR,
    equivalence: float | None = None,
    noise: str = DEFAULT_NOISE,
    estimate: str = DEFAULT_ESTIMATE,
    max_gap: float | None = None,
    form: str = DEFAULT_FORM,
    untried: bool = False,
) -> list[Verdict]:
    """Per budget: each family's value with its interval, and the verdict. The value is
    read by `estimate` (verdicts/front_reading.py `estimate_at`: the best configuration within
    the budget, or the front's fit), the trial shown is the best within the budget either
    way. The interval's `method` is verdicts/uncertainty.py's; a family with fewer than
    `min_near` configurations within a factor `window` below a budget is "too thin" there
    (min_near 0: never), and so is one whose value falls by more than `max_gap` seed-noise
    stds without its best configuration there (`rests_on_one`; None, the default: never;
    measured in docs/benchmarks.md §24, not the default); `equivalence`
    D answers "equivalent" where the difference's interval lies inside (-D, D) (`settled`);
    `noise` is one of NOISE_MODELS; `form` how an interval is read off the draws
    (verdicts/uncertainty.py `interval`); `untried`: a family is also "too thin" at a budget
    where a training setting of its front was never tried near it (`untried_at`)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    cands = with_noise(cands, noise)
    sign = _sign(direction)
    levels = np.asarray(budgets, dtype=float)
    boot = _LazyDraws(cands, levels, sign, method, seed, draws, estimate)
    read = {fam: estimate_at(estimate, c.means[None, :], c.params, levels, sign)[0] for fam, c in cands.items()}
    out = []
    for i, budget in enumerate(budgets):
        rows, known = [], {}
        for fam, c in cands.items():
            mask = c.params <= budget
            if not mask.any():
                rows.append(FamilyAtLevel(fam, None, None, None, None, None))
                continue
            j = int(np.flatnonzero(mask)[np.argmax(sign * c.means[mask])])
            thin = thin_at(c.params, budget, window=window, min_near=min_near) if min_near > 0 else None
            if thin is None and untried:
                thin = untried_at(c.params, c.means, c.configs, budget, sign, window=window)
            known[fam] = c.known_noise(mask)
            if thin is None and known[fam] and max_gap is not None:
                gap = rests_on_one(estimate, c.means, c.params, budget, sign, j, float(c.stds[j]), max_gap)
                if gap is not None:
                    thin = Thin(int(mask.sum()), 0, None, 0.0, budget, kind="one", gap=gap)
            value = float(read[fam][i])
            centre = value if SYMMETRIC[method] or form == "normal" else None
            iv = interval(boot[fam][:, i], confidence, centre, form) if known[fam] and thin is None else None
            if known[fam] and thin is None and iv is None:  # resamples too often hold no model this small
                thin = Thin(int(mask.sum()), 0, None, 0.0, budget, kind="resampled")
            rows.append(
                FamilyAtLevel(
                    fam,
                    value,
                    None if iv is None else iv[0],
                    None if iv is None else iv[1],
                    int(c.numbers[j]),
                    float(c.params[j]),
                    c.configs[j],
                    int(c.runs[j]),
                    thin,
                    best=float(c.means[j]),
                )
            )

        values = {r.family: r.value for r in rows}

        def diff_of(a, b, i=i, known=known, values=values):
            if not (known[a] and known[b]):
                return None
            centre = sign * (values[a] - values[b]) if SYMMETRIC[method] or form == "normal" else None
            iv = interval(sign * (boot[a][:, i] - boot[b][:, i]), confidence, centre, form)
            return "thin" if iv is None else iv

        out.append(_settle(budget, rows, diff_of, sign, equivalence))
    return out


class _LazyDraws(dict):
    """A family's bootstrap draws (`front_draws`), drawn the first time an interval asks
    for them: a family whose noise is unknown at every budget (single runs: the intervals
    are None) or too thin costs no draws. The same draws as drawing them all first (each
    family's stream depends on the seed and its name only). Every family gets the same
    number of draws, the fewest `draws_for` allows any of them (a large family gets fewer),
    so that two families' draws can be subtracted draw by draw."""

    def __init__(
        self,
        cands: dict[str, Candidates],
        levels: np.ndarray,
        sign: float,
        method: str,
        seed: int,
        draws: int,
        estimate: str = DEFAULT_ESTIMATE,
    ) -> None:
        super().__init__()
        draws = min((draws_for(len(c.params), draws) for c in cands.values()), default=draws)
        self.args = cands, levels, sign, method, seed, draws, estimate

    def __missing__(self, fam: str) -> np.ndarray:
        cands, levels, sign, method, seed, draws, estimate = self.args
        c = cands[fam]
        self[fam] = front_draws(
            c.params,
            c.means,
            c.stds,
            c.runs,
            c.numbers,
            levels,
            sign,
            method=method,
            seed=seed,
            draws=draws,
            name=fam,
            dof=c.dof,
            estimate=estimate,
            fixed=c.fixed,
        )
        return self[fam]


def compare_replicates(
    replicates: list[dict[str, Candidates]],
    budgets: list[float],
    direction: str,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    window: float = DEFAULT_WINDOW,
    min_near: int = DEFAULT_MIN_NEAR,
    equivalence: float | None = None,
    estimate: str = DEFAULT_ESTIMATE,
) -> list[Verdict]:
    """Replicate searches of one question (the same families, each search its own
    candidates): per budget, each family's value is the mean over the searches of each
    one's value (read by `estimate`, as in `compare_at`), with the t interval of that mean from the spread between the
    searches; the difference's interval comes from the searches' paired differences. A
    search that is too thin at a budget (as in `compare_at`) sits that budget out; with
    fewer than two searches left, the answer is "too thin". The trial shown is the best
    found by any search."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    sign = _sign(direction)
    families = list(dict.fromkeys(f for rep in replicates for f in rep))
    levels = np.asarray(budgets, dtype=float)
    read = [
        {fam: estimate_at(estimate, c.means[None, :], c.params, levels, sign)[0] for fam, c in rep.items()}
        for rep in replicates
    ]
    out = []
    for i, budget in enumerate(budgets):
        per: dict[str, np.ndarray] = {}
        rows = []
        for fam in families:
            vals, best, thins = np.full(len(replicates), np.nan), None, []
            for k, rep in enumerate(replicates):
                c = rep.get(fam)
                if c is None or not (c.params <= budget).any():
                    continue
                mask = c.params <= budget
                j = int(np.flatnonzero(mask)[np.argmax(sign * c.means[mask])])
                if best is None or sign * c.means[j] > sign * best[0].means[best[1]]:
                    best = (c, j)
                thin = thin_at(c.params, budget, window=window, min_near=min_near) if min_near > 0 else None
                if thin is None:
                    vals[k] = read[k][fam][i]
                else:
                    thins.append(thin)
            if best is None:
                rows.append(FamilyAtLevel(fam, None, None, None, None, None, searches=0))
                continue
            per[fam] = vals
            n = int(np.isfinite(vals).sum())
            t = t_interval(vals, confidence)
            thin = None
            if t is None:
                near = max((th.near for th in thins), default=0)
                more = [th.more_trials for th in thins if th.more_trials is not None]
                thin = Thin(near, min_near, max(more) if more else None, budget / window, budget)
            c, j = best
            value = t[0] if t is not None else float(np.nanmean(vals)) if n else float(c.means[j])
            rows.append(
                FamilyAtLevel(
                    fam,
                    value,
                    None if t is None else t[1],
                    None if t is None else t[2],
                    int(c.numbers[j]),
                    float(c.params[j]),
                    c.configs[j],
                    int(c.runs[j]),
                    thin,
                    searches=n,
                    best=float(c.means[j]),
                )
            )

        def diff_of(a, b, per=per):
            t = t_interval(sign * (per[a] - per[b]), confidence)
            return "thin" if t is None else (t[1], t[2])

        out.append(_settle(budget, rows, diff_of, sign, equivalence))
    return out
