"""A family's complete configurations as arrays (`Candidates`), read from a trials frame:
what every verdict, interval and front reading starts from. Pure functions.

A trial that repeats an earlier one exactly (the same study, family, configuration and
seeds: a search run with `--revisit train` retrains a configuration it proposes again) is
one configuration, not two: it adds no evidence, and counting it twice would make a level
look less thin and its resamples surer than they are (docs/benchmarks.md §19, "Answering
revisits"). The trials of one configuration with other seeds (seed checks) are merged into
one configuration with all their runs.

Shapes: a frame as `storage.frames` builds it (columns family, number, params, status,
config, the metric `m`, `m_std`, n_runs); a `Candidates`' arrays are (k,).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.limits import CORNER_SIZES, NOISE_MODELS
from verdicts.points import complete_points, parse_config
from verdicts.repeats import merge_runs, recomputed
from verdicts.uncertainty import degrees, nearest_noise, pooled_noise, seed_noise, trend_noise

# A configuration's seed noise (core/limits.py NOISE_MODELS): "pooled", the family's pooled
# std over every configuration run twice or more (`Candidates.pooled`), so that a one-seed
# search with seed checks has intervals and a configuration with two runs is not read with
# one degree of freedom; "near", pooled over the configurations that scored nearest it
# (`Candidates.near`); "own", each configuration's own std (R - 1 degrees of freedom;
# none with one run); or "trend", read at its mean from every family's checked
# configurations (`trended`).


@dataclass(frozen=True)
class Candidates:
    """The complete configurations of one family: arrays of shape (k,)."""

    family: str
    numbers: np.ndarray  # int trial numbers
    params: np.ndarray  # float parameter counts
    means: np.ndarray  # float mean metric over runs
    stds: np.ndarray  # float sample std (NaN with one run)
    runs: np.ndarray  # int number of complete runs
    configs: list[dict[str, Any]]
    dof: np.ndarray | None = None  # the stds' degrees of freedom where not runs - 1 (a pooled std: `pooled`)
    fixed: np.ndarray | None = None  # (k,) bool: configurations every search of these settings has (the
    # family's smallest model, a corner: `smallest_by_design`), in every bootstrap resample; None: none

    def known_noise(self, mask: np.ndarray) -> bool:
        """Every selected configuration's std is known: finite, with at least one degree of
        freedom (two runs of its own, or the family's pooled noise)."""
        df = degrees(self.runs, self.dof)
        return bool(np.all((df[mask] >= 1) & np.isfinite(self.stds[mask])))

    def pooled(self) -> Candidates:
        """The same configurations, each with the family's pooled seed std and its degrees
        of freedom (`pooled_noise`); as they are when no configuration has two runs."""
        noise = pooled_noise(self.stds, self.runs)
        if noise is None:
            return self
        s, df = noise
        k = len(self.params)
        return dataclasses.replace(self, stds=np.full(k, s), dof=np.full(k, df))

    def near(self) -> Candidates:
        """The same configurations, each with the seed std pooled over the configurations
        run twice or more that scored nearest it (`nearest_noise`); as they are when none
        has two runs."""
        noise = nearest_noise(self.means, self.stds, self.runs)
        if noise is None:
            return self
        s, df = noise
        return dataclasses.replace(self, stds=s, dof=df)


def smallest_by_design(settings: dict[str, Any] | None) -> bool:
    """Whether a study of these stored settings trained each family's smallest model by
    construction: its sampler draws sizes (`--spread size`, any sampler but the grid, which
    visits no corners) and its corners (`--corners`, core/limits.py CORNER_SIZES) include
    the smallest model. Then every
    search of the question has that model, and every target size below the family's next
    shape lands on it again, so which of its configurations (learning rates) a search
    trained is not the luck of which configurations it found: the bootstrap keeps them
    (docs/benchmarks.md §29). False for a study that stored no settings."""
    s = settings or {}
    drawn = s.get("spread") == "size" and s.get("sampler") != "grid"
    return drawn and "smallest" in CORNER_SIZES.get(s.get("corners"), ())


def candidates(
    df: pd.DataFrame, metric: str, families: list[str] | None = None, *, smallest_fixed: bool = False
) -> dict[str, Candidates]:
    """Per family (sorted by name, or in `families` order) its complete configurations,
    each once: `recomputed` rows dropped, and the trials of one configuration with other
    seeds (a seed check, search/engine/seed_checks.py) merged into one (`merge_runs`; only in a frame
    with the trials' seeds). `smallest_fixed` (`smallest_by_design` of the study's
    settings): the configurations of each family's smallest model (the fewest parameters
    of any of its trials, whatever their status) are `fixed`."""
    pts = complete_points(df, metric)
    if len(pts):
        pts = pts.loc[~recomputed(df.loc[pts.index])]
    runs = (
        pd.to_numeric(df.loc[pts.index, "n_runs"], errors="coerce").fillna(1).to_numpy(dtype=int)
        if "n_runs" in df.columns and len(pts)
        else np.ones(len(pts), dtype=int)
    )
    pts = pts.assign(runs=runs)
    if "seeds" in df.columns:  # without seeds nothing says two trials' runs were not the same computation
        pts = merge_runs(pts, df.loc[pts.index, "study"] if "study" in df.columns else None)
    names = families or sorted(pts["family"].unique())
    out = {}
    for fam in names:
        sub = pts[pts["family"] == fam]
        fixed = None
        if smallest_fixed and len(sub):
            tried = pd.to_numeric(df.loc[df["family"] == fam, "params"], errors="coerce")
            fixed = sub["params"].to_numpy(dtype=float) == float(tried.min())
        out[fam] = Candidates(
            fam,
            sub["number"].to_numpy(dtype=int),
            sub["params"].to_numpy(dtype=float),
            sub["value"].to_numpy(dtype=float),
            sub["std"].to_numpy(dtype=float),
            sub["runs"].to_numpy(dtype=int),
            [parse_config(c) for c in sub["config"]],
            fixed=fixed,
        )
    return out


def with_noise(cands: dict[str, Candidates], noise: str) -> dict[str, Candidates]:
    """The candidates with the seed noise `noise` (one of NOISE_MODELS) reads them with."""
    if noise not in NOISE_MODELS:
        raise ValueError(f"unknown noise model {noise!r}; known: {', '.join(NOISE_MODELS)}")
    if noise == "near":
        return {fam: c.near() for fam, c in cands.items()}
    if noise == "trend":
        return trended(cands)
    return {fam: c.pooled() for fam, c in cands.items()} if noise == "pooled" else cands


def trended(cands: dict[str, Candidates]) -> dict[str, Candidates]:
    """The candidates with each configuration's std read from the trend of seed noise with
    the mean over every family's configurations run twice or more (`trend_noise`: the
    metric's noise is the question's, not a family's); as they are without such a trend."""
    fams = list(cands.values())
    if not fams:
        return cands
    means = np.concatenate([c.means for c in fams])
    fit = trend_noise(means, np.concatenate([c.stds for c in fams]), np.concatenate([c.runs for c in fams]), means)
    if fit is None:
        return cands
    s, df = fit
    ends = np.cumsum([len(c.means) for c in fams])
    return {
        fam: dataclasses.replace(c, stds=part, dof=np.full(len(part), df))
        for (fam, c), part in zip(cands.items(), np.split(s, ends[:-1]), strict=True)
    }


def log_levels(params: np.ndarray, n: int) -> list[float]:
    """n log-spaced budgets from the smallest of `params` (k,) to the largest (rounded; fewer
    where two round alike): the budgets `search compare` reads when none are given."""
    params = np.asarray(params, dtype=float)
    if len(params) == 0:
        return []
    lo, hi = float(params.min()), float(params.max())
    if n <= 1 or lo == hi:
        return [hi]
    return sorted({float(round(v)) for v in np.geomspace(lo, hi, n)})


def default_levels(cands: dict[str, Candidates], n: int) -> list[float]:
    """`log_levels` over every family's complete configurations."""
    return log_levels(np.concatenate([c.params for c in cands.values()]) if cands else np.zeros(0), n)


def redraw_means(c: Candidates, seed: int, draws: int) -> np.ndarray:
    """(draws, k) redrawn means: m + s/sqrt(R) * t(R-1) (verdicts/uncertainty.py)."""
    return seed_noise(c.means, c.stds, c.runs, c.numbers, seed, draws, dof=c.dof)
