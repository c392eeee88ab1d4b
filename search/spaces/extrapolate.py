"""The configuration to train at a budget nobody searched (`search predict`'s second half):
each shape key's trend over the family's front read at the target (reports/scaling_config.py),
rounded into a valid configuration of the family's space, and fitted within the target by
its exact count.

Rounding walks the space's keys in order as a budget-aware draw does (sizing.py): a
choice takes the trend's value where the constraints allow it (else the first option
they allow), a range key the reading clamped to what the constraints allow given the keys
before it (so the transformer's d_model is 64 * n_heads and its L keeps the aspect rule),
on the key's step. The searched ranges' upper ends are lifted for integer keys (the
target is beyond the search, so its widths and depths may be too) and kept for float keys
(fractions such as the SW-MLP's density p <= 1).

Each trend is fitted on its own, so the readings rarely count to the target exactly: the
width keys (every range key but the depths, `DEPTH_KEYS`) are scaled by one common factor,
found by bisection, to the largest configuration whose exact count is within the target.
A common factor keeps the front's width ratios (d_h / d_z, d_h / d_model), and depth stays
where the front's trend puts it: depth changes a count by whole blocks, and Kaplan et al.
(2020, Fig. 5) find the loss flat over a wide range of aspect ratios at a fixed count, so
the front's trend is as good a guide to it as any. Only where even the narrowest widths
at the trends' depths count above the target (a front whose depth rose while its widths
sat at their smallest, read at a larger budget) are the depths scaled down too, by one
common factor (`fit_depth`), and the notes say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.errors import UserError
from core.io import IOSpec
from core.shape_rules import io_values
from reports.scaling_config import Trend, read_trends, shape_trends
from search.spaces.sizing import ConfigCounter, choice_ok, dim_bounds
from search.spaces.space import Space

# Keys that count blocks (layers, sub-blocks): the width factor leaves them alone.
DEPTH_KEYS = frozenset({"L", "depth", "mixer_L", "K"})
UNBOUNDED = 10**12  # an integer key's upper end at the target (the searched one is lifted)
FACTOR_RANGE = (1e-4, 1e4)  # the width factors the bisection looks between
BISECTION_STEPS = 40  # on log(factor): the factor to about 1e-11 relative
SCALED_NOTE = 0.05  # a width factor further than this from 1 is said in the notes


@dataclass(frozen=True)
class Proposal:
    """A family's configuration to train at `target`: `config` (None when none fits, see
    `notes`), its exact `count` in the study's budget measure, the width `factor` applied
    to the trends' readings, the trends themselves and what was kept or lifted."""

    family: str
    target: float
    config: dict[str, Any] | None
    count: int | None
    factor: float
    front_points: int
    trends: tuple[Trend, ...]
    notes: tuple[str, ...]


def place(
    space: Space, io: IOSpec, values: dict[str, Any], factor: float = 1.0, depth: frozenset[str] = DEPTH_KEYS
) -> dict[str, Any] | None:
    """`values` (a reading per key, floats allowed) rounded into a valid configuration of
    `space`, width keys multiplied by `factor` first; None when the constraints leave a
    key no valid value."""
    known: dict[str, Any] = io_values(io)
    for dim in space.dims:
        want = values.get(dim.name)
        if dim.kind == "choice":
            options = [v for v in dim.choices if choice_ok(space, dim.name, v, known)]
            if not options:
                return None
            known[dim.name] = next((v for v in options if v == want and type(v) is type(want)), options[0])
            continue
        wide = replace(dim, high=max(dim.high, UNBOUNDED)) if dim.kind == "int" else dim
        lo, hi = dim_bounds(space, wide, known)
        if lo > hi:
            return None
        v = lo if want is None else float(want) * (1.0 if dim.name in depth else factor)
        v = min(max(v, lo), hi)
        if dim.kind == "int":
            base = int(dim.low)
            v = int(min(max(base + round((v - base) / dim.step) * dim.step, lo), hi))
        known[dim.name] = v
    return {k: v for k, v in known.items() if k not in ("d_x", "d_out")}


def fit_budget(
    space: Space,
    io: IOSpec,
    count: ConfigCounter,
    values: dict[str, Any],
    target: float,
    depth: frozenset[str] = DEPTH_KEYS,
) -> tuple[dict[str, Any], int, float] | None:
    """(config, exact count, factor): the largest width factor in FACTOR_RANGE whose
    placed configuration counts within `target` (bisection on log factor; counts grow
    with every width); None when even the narrowest does not fit."""

    def counted(log_f: float) -> tuple[dict[str, Any] | None, float]:
        cfg = place(space, io, values, math.exp(log_f), depth)
        if cfg is None:
            return None, math.inf
        try:
            return cfg, count(cfg)
        except UserError:  # a model the family refuses (its own shape rules)
            return cfg, math.inf

    a, b = math.log(FACTOR_RANGE[0]), math.log(FACTOR_RANGE[1])
    top = counted(b)
    if top[1] <= target:
        return top[0], int(top[1]), FACTOR_RANGE[1]
    best = counted(a)
    if best[1] > target:
        return None
    for _ in range(BISECTION_STEPS):
        mid = (a + b) / 2
        got = counted(mid)
        if got[1] <= target:
            a, best = mid, got
        else:
            b = mid
    return best[0], int(best[1]), math.exp(a)


def fit_depth(
    space: Space,
    io: IOSpec,
    count: ConfigCounter,
    values: dict[str, Any],
    target: float,
    depth: frozenset[str] = DEPTH_KEYS,
) -> tuple[float, tuple[dict[str, Any], int, float] | None]:
    """(depth factor, `fit_budget`'s fit): when even the narrowest widths at the trends'
    depths count above `target` (a front whose depth rose while its widths sat at their
    smallest), the largest common factor below 1 on the depth keys with which the
    configuration fits (bisection on log factor: a shallower model counts less); the
    fit is None when not even the shallowest fits."""

    def fitted(log_g: float):
        g = math.exp(log_g)
        return fit_budget(
            space,
            io,
            count,
            {k: v * g if k in depth and v is not None else v for k, v in values.items()},
            target,
            depth,
        )

    a, b = math.log(FACTOR_RANGE[0]), 0.0
    best = fitted(a)
    if best is None:
        return FACTOR_RANGE[0], None
    for _ in range(BISECTION_STEPS):
        mid = (a + b) / 2
        got = fitted(mid)
        if got is not None:
            a, best = mid, got
        else:
            b = mid
    return math.exp(a), best


def propose_config(
    family: str,
    space: Space,
    io: IOSpec,
    count: ConfigCounter,
    params,
    configs: Sequence[dict],
    target: float,
    depth: frozenset[str] = DEPTH_KEYS,
) -> Proposal:
    """The configuration to train at `target` from a family's front points (params (k,),
    configs (k,)): trends read, placed and fitted within the target."""
    params = np.asarray(params, dtype=float)
    if len(params) == 0:
        return Proposal(family, target, None, None, math.nan, 0, (), ("no complete trials",))
    numeric = [d.name for d in space.dims if d.kind != "choice"]
    trends = shape_trends(params, configs, numeric, [d.name for d in space.dims if d.kind == "choice"])
    notes = [t.describe() for t in trends.values() if t.kind in ("fixed", "largest") and t.key in numeric]
    lacking = [k for k in numeric if trends[k].value is None and trends[k].kind != "power"]
    if lacking:
        notes = [f"the front's configurations lack {', '.join(lacking)} (keys of the {space.family} space)"]
        return Proposal(family, target, None, None, math.nan, len(params), tuple(trends.values()), tuple(notes))
    values = read_trends(trends, target)
    fit = fit_budget(space, io, count, values, target, depth)
    if fit is None and any(k in depth for k in numeric):
        shallower, fit = fit_depth(space, io, count, values, target, depth)
        if fit is not None:
            notes.append(
                f"depths scaled by {shallower:.3g} from the trends' readings: at the trends' depths "
                "even the narrowest widths count above the target"
            )
    if fit is None:
        notes.append("no configuration fits the budget, even at the narrowest widths and the shallowest depths")
        return Proposal(family, target, None, None, math.nan, len(params), tuple(trends.values()), tuple(notes))
    config, n, factor = fit
    if abs(math.log(factor)) > math.log(1 + SCALED_NOTE):
        notes.append(f"widths scaled by {factor:.3g} from the trends' readings to count within the target")
    notes += [
        f"{d.name}={config[d.name]:g} is above the searched range (at most {d.high:g})"
        for d in space.dims
        if d.kind != "choice" and config.get(d.name, -math.inf) > d.high
    ]
    return Proposal(family, target, config, n, factor, len(params), tuple(trends.values()), tuple(notes))


def proposals_frame(proposals: Sequence[Proposal]):
    """One row per target and family: the configuration, its exact count, the width factor,
    each key's trend and the notes (a pandas frame: the Python answer of `search predict`'s
    configurations)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "budget": p.target,
                "family": p.family,
                "config": p.config,
                "params": p.count,
                "width_factor": p.factor,
                "front_points": p.front_points,
                "trends": "; ".join(t.describe() for t in p.trends if t.kind == "power"),
                "notes": "; ".join(p.notes),
            }
            for p in proposals
        ]
    )


@dataclass(frozen=True)
class StudySpaces:
    """What a stored study's configurations are counted and rounded with: its task's io,
    each family's space (the study's space file when it is still there), the budget
    measure, and what had to be assumed."""

    io: IOSpec
    spaces: dict[str, Space]
    measure: str
    notes: tuple[str, ...]

    def counter(self, family: str) -> ConfigCounter:
        from models import get_family

        fam = get_family(family)
        return lambda config: fam.count_as(self.measure, config, self.io)


def study_spaces(record) -> StudySpaces:
    """The spaces a stored study (a `StudyRecord`) searched, rebuilt from its settings;
    UserError when its task or a family is unknown here."""
    from search.spaces.files import build_spaces
    from tasks import get_task

    settings = record.settings or {}
    task = get_task(record.task, settings.get("task_options") or {})
    io, families, notes = task.io(), list(record.families), []
    space_file = settings.get("space_file")
    try:
        spaces = build_spaces(families, io, space_file, task.search_lrs)
    except UserError as e:
        if not space_file:
            raise
        notes.append(f"the study's space file cannot be read ({e}): the default spaces")
        spaces = build_spaces(families, io, None, task.search_lrs)
    return StudySpaces(io, spaces, settings.get("budget_of") or "params", tuple(notes))


def study_proposals(records, df, targets, families: Sequence[str] | None = None) -> list[Proposal]:
    """Per target and family (a family label of `reports.combined.combined_frame`'s frame
    of the `records`' trials), the configuration to train there, from the family's front
    on the studies' metric's error scale (reports/scaling.py). ValueError when the metric
    has no error scale."""
    from reports.scaling import error_scale, front_mask
    from verdicts.candidates import candidates

    rec = records[0]
    scale = error_scale(rec.metric, rec.direction)
    built = {r.name: study_spaces(r) for r in records}
    out = []
    for label, c in candidates(df, rec.metric, list(families) if families else None).items():
        study, _, family = label.rpartition(": ")
        owner = next((r for r in records if r.name == study and family in r.families), None) or next(
            r for r in records if label in r.families
        )
        family = family if owner.name == study else label
        ctx = built[owner.name]
        mask = front_mask(c.params, scale.to_error(c.means))
        configs = [c.configs[i] for i in np.flatnonzero(mask)]
        for target in targets:
            p = propose_config(
                label, ctx.spaces[family], ctx.io, ctx.counter(family), c.params[mask], configs, float(target)
            )
            out.append(replace(p, notes=ctx.notes + p.notes))
    return out
