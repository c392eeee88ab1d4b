"""Each family's whole front as one number: its hypervolume in (log10 params, metric)
against one reference, with a bootstrap interval, and the two largest fronts' difference
(`search compare`'s front line). Pure functions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.directions import check_direction
from core.pareto import default_reference, hypervolume_2d
from verdicts.candidates import Candidates, redraw_means
from verdicts.compare import DEFAULT_CONFIDENCE
from verdicts.uncertainty import DEFAULT_METHOD, SYMMETRIC, check_method, interval, resample_mask, stream


@dataclass(frozen=True)
class FrontVolume:
    family: str
    value: float  # hypervolume of the family's front (log10 params, metric)
    low: float | None
    high: float | None
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)  # (d,) bootstrap volumes
    symmetric: bool = False  # intervals symmetric about the value (verdicts/uncertainty.py)


def front_volumes(
    cands: dict[str, Candidates],
    direction: str,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    draws: int = 400,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
) -> tuple[list[FrontVolume], np.ndarray | None]:
    """Each family's front hypervolume in (log10 params, metric) against one reference
    (from all families' points), with a bootstrap interval when every configuration of the
    family has repeats (verdicts/uncertainty.py's `method`: "trials" also resamples the
    configurations). Returns the volumes and the reference."""
    dirs = ["minimize", check_direction(direction)]
    pts = {f: np.column_stack([np.log10(c.params), c.means]) for f, c in cands.items() if len(c.means)}
    if not pts:
        return [], None
    ref = default_reference(np.vstack(list(pts.values())), dirs)
    out = []
    for fam, c in cands.items():
        if fam not in pts:
            continue
        value = hypervolume_2d(pts[fam], dirs, ref)  # dominated points add nothing
        lo = hi = vols = None
        if c.known_noise(np.ones(len(c.means), dtype=bool)):
            x = np.log10(c.params)
            rows = redraw_means(c, seed, draws)
            keep = (
                resample_mask(len(x), draws, stream(seed, fam), c.fixed)
                if check_method(method) == "trials"
                else np.ones(rows.shape, dtype=bool)
            )
            vols = np.array([hypervolume_2d(np.column_stack([x[k], row[k]]), dirs, ref) for row, k in zip(rows, keep)])
            lo, hi = interval(vols, confidence, float(value) if SYMMETRIC[method] else None)
        out.append(FrontVolume(fam, float(value), lo, hi, vols, SYMMETRIC[method]))
    return out, ref


@dataclass(frozen=True)
class FrontDifference:
    first: str  # the family with the larger front hypervolume
    second: str
    difference: float  # first minus second
    low: float | None  # its interval (None: a family has single-run configurations)
    high: float | None


def front_difference(volumes: list[FrontVolume], *, confidence: float = DEFAULT_CONFIDENCE) -> FrontDifference | None:
    """The two largest fronts' hypervolume difference (`front_volumes`' results), with an
    interval taken draw by draw from their bootstrap volumes."""
    if len(volumes) < 2:
        return None
    first, second = sorted(volumes, key=lambda f: -f.value)[:2]
    diff = first.value - second.value
    if first.draws is None or second.draws is None:
        return FrontDifference(first.family, second.family, diff, None, None)
    lo, hi = interval(first.draws - second.draws, confidence, diff if first.symmetric else None)
    return FrontDifference(first.family, second.family, diff, lo, hi)
