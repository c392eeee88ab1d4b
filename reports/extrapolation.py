"""The fronts beyond the searched budget as the pages draw them: each family's saturating
law (reports/scaling.py) read on a grid from its largest trial to the furthest target,
with its bootstrap interval, and read at each target (`search report --predict-at`, the
compare page's `predict_at`). Pure functions; figures.py draws the result.

With no target the curve reaches DEFAULT_REACH times the search budget: far enough to
show where the fronts are heading, near enough that the law is not read where nothing
supports it. The pages must stay fast (issue 33): each bootstrap refit is a least-squares
solve of 5 to 15 ms whatever the study's size, so a page spends PAGE_FITS of them over its
families (20 to 40 each, instead of `search predict`'s 400): the band is a picture of the
uncertainty, `search predict` gives its numbers. A family whose fit is not trusted gets no curve but a line saying why.

Shapes: a curve's x, value, low, high are (g,) on the grid; at, at_low, at_high (t,) at
the targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.scaling import error_scale, predict_family

PAGE_FITS = 80  # bootstrap refits a page may spend over all its families (`search predict`: 400 each)
PAGE_DRAWS = (20, 40)  # a family's share of them: at least, at most
GRID_POINTS = 24  # budgets a curve is read at
DEFAULT_REACH = 10.0  # no target: the curve goes to this many times the search budget
CONFIDENCE = 0.9


@dataclass(frozen=True)
class Curve:
    """One trusted family's law read past its largest trial (metric scale)."""

    family: str
    x: np.ndarray  # (g,) budgets, ascending, from the largest trial to the furthest target
    value: np.ndarray  # (g,)
    low: np.ndarray  # (g,) interval (NaN where too many draws failed)
    high: np.ndarray
    targets: np.ndarray  # (t,) the asked budgets (empty without --predict-at)
    at: np.ndarray  # (t,) value at each target
    at_low: np.ndarray
    at_high: np.ndarray


@dataclass(frozen=True)
class Extrapolation:
    """What a page draws beyond the search: trusted curves, and why the others have none."""

    curves: tuple[Curve, ...]
    untrusted: tuple[tuple[str, str], ...]  # (family, why)
    reach: float  # the grid's end
    targets: tuple[float, ...]
    draws: int
    confidence: float = CONFIDENCE
    note: str | None = None  # why nothing is extrapolated at all (e.g. no error scale)

    @property
    def empty(self) -> bool:
        return not self.curves and not self.untrusted and self.note is None


def page_draws(families: int, fits: int = PAGE_FITS) -> int:
    """Each family's bootstrap draws on a page of `families` families."""
    return min(PAGE_DRAWS[1], max(PAGE_DRAWS[0], fits // max(families, 1)))


def extrapolate(
    df: pd.DataFrame,
    metric: str,
    direction: str,
    budget: float,
    targets: Sequence[float] = (),
    *,
    draws: int | None = None,
    seed: int = 0,
) -> Extrapolation:
    """Every family of a trials frame (storage's, or `combined_frame`'s) extended past its
    largest trial to max(targets) (DEFAULT_REACH * budget without targets), with `draws`
    bootstrap refits each (default `page_draws`)."""
    from verdicts.candidates import candidates

    targets = tuple(sorted(float(t) for t in targets))
    reach = targets[-1] if targets else DEFAULT_REACH * float(budget)
    cands = candidates(df, metric)
    draws = page_draws(len(cands)) if draws is None else draws
    try:
        scale = error_scale(metric, direction)
    except ValueError as e:
        return Extrapolation((), (), reach, targets, draws, note=str(e))
    curves, untrusted = [], []
    for fam, c in cands.items():
        if len(c.params) == 0:
            continue
        start = float(c.params.max())
        grid = np.geomspace(start, max(reach, start * 1.01), GRID_POINTS)
        points = np.concatenate([grid, targets])
        p = predict_family(
            fam,
            c.params,
            c.means,
            c.stds,
            c.runs,
            c.numbers,
            points,
            scale,
            confidence=CONFIDENCE,
            draws=draws,
            seed=seed,
            skip_untrusted=True,
        )
        if p.trust is not None:
            untrusted.append((fam, p.trust))
            continue
        g = len(grid)
        curves.append(
            Curve(
                fam, grid, p.values[:g], p.low[:g], p.high[:g], np.asarray(targets), p.values[g:], p.low[g:], p.high[g:]
            )
        )
    return Extrapolation(tuple(curves), tuple(untrusted), reach, targets, draws)


def extrapolation_note(ext: Extrapolation, metric: str) -> str:
    """The sentence under a figure with curves: what the dashed lines and bands are, and
    one clause per family left out (plain text; the page escapes it)."""
    from core.budget import format_count

    if ext.note is not None:
        return f"Not extrapolated beyond the search: {ext.note}."
    parts = []
    if ext.curves:
        at = (
            f"; markers at {', '.join(format_count(t) for t in ext.targets)}"
            if ext.targets
            else f" ({DEFAULT_REACH:g} times the search budget; search report --predict-at sets the budgets)"
        )
        parts.append(
            f"Dashed: each family's law error(N) = E + A * N^(-alpha) fitted to its front, read up to "
            f"{format_count(ext.reach)}{at}; band: {ext.confidence:.0%} interval from {ext.draws} "
            f"bootstrap refits ('search predict' gives the numbers and the configuration to train)."
        )
    for fam, why in ext.untrusted:
        parts.append(f"{fam}: not extrapolated, {why}.")
    return " ".join(parts)
