"""Which shape wins at each budget, and how sure that is: pure statistics on trials frames.

For a budget level B, a family's value is the best mean metric among its complete
configurations with at most B parameters (the front read at B). Its uncertainty comes from
the repeats: a configuration run R >= 2 times has a mean m, a sample std s and the
t-interval m ± t(R-1) s / sqrt(R). Picking the best of many noisy configurations biases
the value upwards (the winner's curse), so the interval is not the chosen configuration's
own: a parametric bootstrap redraws every candidate configuration's mean from its
sampling distribution (m + s/sqrt(R) * T, T ~ Student t with R-1 degrees of freedom) and
redoes the whole selection in each draw; the interval is the percentile interval of the
selected value, and the difference between two families is taken draw by draw. Where a
candidate configuration has a single run, nothing is known of its noise: the interval is
None and the verdict says "single run" instead of inventing one.

Shapes: a frame as `storage.frames` builds it (columns family, number, params, status,
config, the metric `m`, `m_std`, n_runs). Directions are `core.directions`'.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.directions import check_direction
from core.errors import UserError
from reports.formatting import parse_config
from reports.fronts import complete_points
from reports.pareto import default_reference, hypervolume_2d
from storage.records import StudyRecord

DEFAULT_CONFIDENCE = 0.95
DEFAULT_DRAWS = 2000


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

    def known_noise(self, mask: np.ndarray) -> bool:
        """Every selected configuration was run at least twice with a finite std."""
        return bool(np.all((self.runs[mask] >= 2) & np.isfinite(self.stds[mask])))


def check_comparable(records: Sequence[StudyRecord]) -> None:
    """UserError unless the studies share task, metric, direction and parameter convention
    (their fronts and values would not be comparable otherwise)."""
    first = records[0]
    for rec in records[1:]:
        for name in ("task", "metric", "direction"):
            if getattr(rec, name) != getattr(first, name):
                raise UserError(f"studies {first.name!r} and {rec.name!r} differ in {name} "
                                f"({getattr(first, name)} vs {getattr(rec, name)}): they cannot be compared")
        measures = [(r.settings or {}).get("budget_of", "params") for r in (first, rec)]
        if measures[0] != measures[1]:
            raise UserError(f"studies {first.name!r} and {rec.name!r} are budgeted in {measures[0]} and "
                            f"{measures[1]}: they cannot be compared")
        conv = [(r.settings or {}).get("param_convention") for r in (first, rec)]
        if None not in conv and conv[0] != conv[1]:
            raise UserError(f"studies {first.name!r} and {rec.name!r} count parameters differently "
                            f"({conv[0]} vs {conv[1]}): they cannot be compared")


def combined_frame(studies: Sequence[tuple[StudyRecord, pd.DataFrame]]) -> pd.DataFrame:
    """Comparable studies' trials in one frame (`check_comparable` first): `number` made
    unique across studies, `study` and `trial` keep each row's origin, and a family that
    several of the studies searched is labelled "study: family"."""
    records = [rec for rec, _ in studies]
    check_comparable(records)
    shared = {f for f in {f for r in records for f in r.families}
              if sum(f in r.families for r in records) > 1}
    parts = []
    for rec, df in studies:
        fam = df["family"].astype(str)
        parts.append(df.assign(family=fam.where(~fam.isin(shared), rec.name + ": " + fam), study=rec.name,
                               trial=df["number"]))
    nonempty = [p for p in parts if len(p)] or parts[:1]
    out = pd.concat(nonempty, ignore_index=True)
    return out.assign(number=range(len(out)))


def candidates(df: pd.DataFrame, metric: str, families: list[str] | None = None) -> dict[str, Candidates]:
    """Per family (sorted by name, or in `families` order) its complete configurations."""
    pts = complete_points(df, metric)
    runs = pd.to_numeric(df.loc[pts.index, "n_runs"], errors="coerce").fillna(1).to_numpy(dtype=int) \
        if "n_runs" in df.columns and len(pts) else np.ones(len(pts), dtype=int)
    pts = pts.assign(runs=runs)
    names = families or sorted(pts["family"].unique())
    out = {}
    for fam in names:
        sub = pts[pts["family"] == fam]
        out[fam] = Candidates(fam, sub["number"].to_numpy(dtype=int), sub["params"].to_numpy(dtype=float),
                              sub["value"].to_numpy(dtype=float), sub["std"].to_numpy(dtype=float),
                              sub["runs"].to_numpy(dtype=int), [parse_config(c) for c in sub["config"]])
    return out


def default_levels(cands: dict[str, Candidates], n: int) -> list[float]:
    """n log-spaced budgets from the smallest complete model to the largest (rounded)."""
    params = np.concatenate([c.params for c in cands.values()]) if cands else np.zeros(0)
    if len(params) == 0:
        return []
    lo, hi = float(params.min()), float(params.max())
    if n <= 1 or lo == hi:
        return [hi]
    return sorted({float(round(v)) for v in np.geomspace(lo, hi, n)})


def _sign(direction: str) -> float:
    return 1.0 if check_direction(direction) == "maximize" else -1.0


def redraw_means(c: Candidates, seed: int, draws: int) -> np.ndarray:
    """(draws, k) redrawn means: m + s/sqrt(R) * t(R-1); configurations with one run stay
    at m. Each configuration's draws come from its own stream (seed, trial number), so a
    result never depends on the order or the names of the families."""
    out = np.repeat(c.means[None, :], draws, axis=0)
    for j in range(len(c.means)):
        if c.runs[j] >= 2 and np.isfinite(c.stds[j]):
            rng = np.random.default_rng([seed, int(c.numbers[j])])
            out[:, j] += rng.standard_t(c.runs[j] - 1, size=draws) * c.stds[j] / np.sqrt(c.runs[j])
    return out


def percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central `confidence` percentile interval of bootstrap draws."""
    lo, hi = np.percentile(draws, [(1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100])
    return float(lo), float(hi)


def _best(values: np.ndarray, mask: np.ndarray, sign: float) -> np.ndarray:
    """Best (direction-aware) of the masked columns, per row; NaN when the mask is empty."""
    if not mask.any():
        return np.full(values.shape[0], np.nan)
    return sign * np.max(sign * values[:, mask], axis=1)


@dataclass(frozen=True)
class FamilyAtLevel:
    family: str
    value: float | None  # the best mean within the budget (None: no model that small)
    low: float | None  # its interval (None: unknown, single runs)
    high: float | None
    number: int | None  # the trial that reaches it
    params: float | None
    config: dict[str, Any] = field(default_factory=dict)
    runs: int = 0


@dataclass(frozen=True)
class Verdict:
    budget: float
    families: list[FamilyAtLevel]
    winner: str | None  # None: no family has a model this small
    runner_up: str | None
    margin: float | None  # winner minus runner-up, in the better direction (>= 0)
    margin_low: float | None  # interval of that difference (None: unknown)
    margin_high: float | None
    status: str  # "better", "not distinguishable", "single run", "only one family"

    @property
    def text(self) -> str:
        if self.winner is None:
            return "no model this small"
        if self.status == "only one family":
            return f"only {self.winner} has a model within this budget"
        gap = f"{self.winner} ahead of {self.runner_up} by {self.margin:.4g}"
        if self.status == "single run":
            return f"{gap} (single run: no interval; use --repeats)"
        ci = f"interval {self.margin_low:.4g} .. {self.margin_high:.4g}"
        if self.status == "better":
            return f"{self.winner} better by {self.margin:.4g} ({ci})"
        return f"not distinguishable from seed noise ({gap}; {ci})"


def compare_at(cands: dict[str, Candidates], budgets: list[float], direction: str, *,
               confidence: float = DEFAULT_CONFIDENCE, draws: int = DEFAULT_DRAWS, seed: int = 0) -> list[Verdict]:
    """Per budget: each family's best value with its interval, and the verdict."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    sign = _sign(direction)
    boot = {f: redraw_means(c, seed, draws) for f, c in cands.items()}
    out = []
    for budget in budgets:
        rows, draws_of, known = [], {}, {}
        for fam, c in cands.items():
            mask = c.params <= budget
            if not mask.any():
                rows.append(FamilyAtLevel(fam, None, None, None, None, None))
                continue
            i = int(np.flatnonzero(mask)[np.argmax(sign * c.means[mask])])
            known[fam] = c.known_noise(mask)
            draws_of[fam] = _best(boot[fam], mask, sign)
            lo, hi = percentile_interval(draws_of[fam], confidence) if known[fam] else (None, None)
            rows.append(FamilyAtLevel(fam, float(c.means[i]), lo, hi, int(c.numbers[i]), float(c.params[i]),
                                      c.configs[i], int(c.runs[i])))
        present = sorted((r for r in rows if r.value is not None), key=lambda r: (-sign * r.value, r.family))
        if not present:
            out.append(Verdict(budget, rows, None, None, None, None, None, "no model"))
            continue
        if len(present) == 1:
            out.append(Verdict(budget, rows, present[0].family, None, None, None, None, "only one family"))
            continue
        win, second = present[0], present[1]
        margin = sign * (win.value - second.value)
        if not (known[win.family] and known[second.family]):
            out.append(Verdict(budget, rows, win.family, second.family, margin, None, None, "single run"))
            continue
        diff = sign * (draws_of[win.family] - draws_of[second.family])
        lo, hi = percentile_interval(diff, confidence)
        status = "better" if lo > 0 else "not distinguishable"
        out.append(Verdict(budget, rows, win.family, second.family, margin, lo, hi, status))
    return out


@dataclass(frozen=True)
class FrontVolume:
    family: str
    value: float  # hypervolume of the family's front (log10 params, metric)
    low: float | None
    high: float | None
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)  # (d,) bootstrap volumes


def front_volumes(cands: dict[str, Candidates], direction: str, *, confidence: float = DEFAULT_CONFIDENCE,
                  draws: int = 400, seed: int = 0) -> tuple[list[FrontVolume], np.ndarray | None]:
    """Each family's front hypervolume in (log10 params, metric) against one reference
    (from all families' points), with a bootstrap interval when every configuration of the
    family has repeats. Returns the volumes and the reference."""
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
            vols = np.array([hypervolume_2d(np.column_stack([x, row]), dirs, ref) for row in redraw_means(c, seed, draws)])
            lo, hi = percentile_interval(vols, confidence)
        out.append(FrontVolume(fam, float(value), lo, hi, vols))
    return out, ref


@dataclass(frozen=True)
class FrontDifference:
    first: str  # the family with the larger front hypervolume
    second: str
    difference: float  # first minus second
    low: float | None  # its interval (None: a family has single-run configurations)
    high: float | None


def front_difference(volumes: list[FrontVolume], *,
                     confidence: float = DEFAULT_CONFIDENCE) -> FrontDifference | None:
    """The two largest fronts' hypervolume difference (`front_volumes`' results), with an
    interval taken draw by draw from their bootstrap volumes."""
    if len(volumes) < 2:
        return None
    first, second = sorted(volumes, key=lambda f: -f.value)[:2]
    diff = first.value - second.value
    if first.draws is None or second.draws is None:
        return FrontDifference(first.family, second.family, diff, None, None)
    lo, hi = percentile_interval(first.draws - second.draws, confidence)
    return FrontDifference(first.family, second.family, diff, lo, hi)


def verdicts_frame(verdicts: list[Verdict], metric: str) -> pd.DataFrame:
    """One row per level and family (the CLI's table and the page's), plus the verdict."""
    rows = []
    for v in verdicts:
        for r in v.families:
            rows.append({"budget": v.budget, "family": r.family, metric: r.value, "low": r.low, "high": r.high,
                         "number": r.number, "params": r.params, "runs": r.runs,
                         "verdict": v.text if r.family == v.winner else ""})
    return pd.DataFrame(rows, columns=["budget", "family", metric, "low", "high", "number", "params", "runs",
                                       "verdict"])


def wins_table(verdicts: list[Verdict]) -> pd.DataFrame:
    """Display strings, one row per budget: each family's best value with its interval and
    trial, then the verdict (the page's "Which shape wins" table)."""
    from core.budget import format_count

    families = [r.family for r in verdicts[0].families] if verdicts else []
    rows = []
    for v in verdicts:
        row: dict[str, str] = {"budget ≤": format_count(v.budget)}
        for r in v.families:
            if r.value is None:
                row[r.family] = "—"
                continue
            ci = "" if r.low is None else f" [{r.low:.4g}, {r.high:.4g}]"
            row[r.family] = f"{r.value:.4g}{ci} (#{r.number})"
        row["verdict"] = v.text
        rows.append(row)
    return pd.DataFrame(rows, columns=["budget ≤", *families, "verdict"])
