"""Budget-aware sampling of a `Space` (search/spaces/space.py).

Budget rule (size dimensions; a free dimension, search/spaces/size_dims.py, is drawn over
its whole range and never narrowed): the parameter count of a proposal is known before training. Sampling is
budget-aware: each integer dimension is drawn from [low, high'] where high' is the largest
value for which the *smallest* completion of the config still fits the budget (binary
search; counts grow monotonically with every width/depth). So range dimensions never
produce an over-budget proposal and the accepted models spread from the smallest model
up to the budget instead of piling up at it. Only categorical choices (and grid points)
can be infeasible; those proposals are rejected, recorded and never trained.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from core.io import IOSpec
from core.shape_rules import io_values
from search.spaces.space import Dim, Space

# ---------------------------------------------------------------- constraint bounds


def _bounds(space: Space, dim: Dim, known: dict[str, Any]) -> tuple[float, float]:
    """[low, high] of an int/float dim, tightened by constraints on known values."""
    lo, hi = float(dim.low), float(dim.high)
    step = 1 if dim.kind == "int" else 0.0
    for c in space.constraints:
        if c.left == dim.name and c.right in known:
            other, op = c.ratio() * known[c.right], c.op
        elif c.right == dim.name and c.left in known:
            other, op = known[c.left] / c.ratio(), {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[c.op]
        else:
            continue
        if step:  # integers strictly/loosely below or above a possibly fractional bound
            other = Fraction(other)
            bound = {
                "<": math.ceil(other) - 1,
                "<=": math.floor(other),
                ">": math.floor(other) + 1,
                ">=": math.ceil(other),
            }[op]
        else:
            other = float(other)
            bound = {
                "<": math.nextafter(other, -math.inf),
                "<=": other,
                ">": math.nextafter(other, math.inf),
                ">=": other,
            }[op]
        if op in ("<", "<="):
            hi = min(hi, bound)
        else:
            lo = max(lo, bound)
    return dim.align(lo, hi)


def _choice_ok(space: Space, name: str, value: Any, known: dict[str, Any]) -> bool:
    vals = dict(known, **{name: value})
    return all(
        c.holds(vals) for c in space.constraints if name in (c.left, c.right) and c.left in vals and c.right in vals
    )


def dim_bounds(space: Space, dim: Dim, known: dict[str, Any]) -> tuple[float, float]:
    """[low, high] of a range dim given the `known` values (io sizes and earlier keys):
    its range narrowed by the constraints and its step; low > high when none is valid.
    What a draw may pick, and what search/spaces/extrapolate.py rounds a reading into."""
    return _bounds(space, dim, known)


def choice_ok(space: Space, name: str, value: Any, known: dict[str, Any]) -> bool:
    """Whether `name`=`value` keeps every constraint among the `known` values."""
    return _choice_ok(space, name, value, known)


ConfigCounter = Callable[[dict[str, Any]], int]  # config -> exact parameter count (one family)


def _min_completion(space: Space, start: int, known: dict[str, Any], count: ConfigCounter) -> float:
    """The smallest parameter count of any valid completion of `known` (greedy, per dim)."""
    return _smallest_completion(space, start, known, count)[0]


def _smallest_completion(
    space: Space, start: int, known: dict[str, Any], count: ConfigCounter
) -> tuple[float, dict[str, Any]]:
    """(count, config) of the smallest valid completion of `known` (inf, {} when none)."""
    vals = dict(known)
    for dim in space.dims[start:]:
        if not space.active(dim, vals):
            continue
        if dim.kind == "choice":
            options = [v for v in dim.choices if _choice_ok(space, dim.name, v, vals)]
            if not options:
                return math.inf, {}
            if len(options) == 1 or not space.is_sized(dim):  # a free dimension never changes the count
                vals[dim.name] = options[0]
                continue
            nxt = _index(space, dim.name) + 1
            return min(
                (_smallest_completion(space, nxt, dict(vals, **{dim.name: v}), count) for v in options),
                key=lambda nc: nc[0],
            )
        lo, hi = _bounds(space, dim, vals)
        if lo > hi:
            return math.inf, {}
        vals[dim.name] = int(lo) if dim.kind == "int" else lo
    config = _strip(vals)
    return count(config), config


def _max_corner(space: Space, start: int, known: dict[str, Any], count: ConfigCounter) -> float:
    """The parameter count of the largest completion of `known`, budget aside (greedy,
    per dim: each range dim at its highest valid value; a choice dim the option whose
    completion is largest). -inf when the constraints allow none."""
    vals = dict(known)
    for i in range(start, len(space.dims)):
        dim = space.dims[i]
        if not space.active(dim, vals):
            continue
        if dim.kind == "choice":
            options = [v for v in dim.choices if _choice_ok(space, dim.name, v, vals)]
            if not space.is_sized(dim):  # a free dimension never changes the count
                options = options[:1]
            return max(
                (_max_corner(space, i + 1, dict(vals, **{dim.name: v}), count) for v in options), default=-math.inf
            )
        lo, hi = _bounds(space, dim, vals)
        if lo > hi:
            return -math.inf
        vals[dim.name] = int(hi) if dim.kind == "int" else hi
    return count({k: v for k, v in vals.items() if k not in ("d_x", "d_out")})


def _largest_fitting(
    space: Space, dim: Dim, i: int, known: dict[str, Any], count: ConfigCounter, limit: float, lo: int, hi: int
) -> int:
    """The largest v = lo + j * step <= hi whose smallest completion fits `limit` (binary
    search: counts grow monotonically with every width and depth); lo must fit."""
    fits = lambda v: _min_completion(space, i + 1, dict(known, **{dim.name: v}), count) <= limit  # noqa: E731
    k = dim.step
    a, b = 0, (hi - lo) // k
    while a < b:
        mid = (a + b + 1) // 2
        a, b = (mid, b) if fits(lo + mid * k) else (a, mid - 1)
    return lo + a * k


def _smallest_reaching(
    space: Space, dim: Dim, i: int, known: dict[str, Any], count: ConfigCounter, target: float, lo: int, hi: int
) -> int:
    """The smallest v = lo + j * step <= hi whose largest completion reaches `target` (hi
    when none does). Counts are monotone, so a completion within budget lands between
    the target and the budget whenever the largest one reaches the target, up to the
    granularity of the last dim."""
    reaches = lambda v: _max_corner(space, i + 1, dict(known, **{dim.name: v}), count) >= target  # noqa: E731
    k = dim.step
    a, b = 0, (hi - lo) // k
    while a < b:
        mid = (a + b) // 2
        a, b = (a, mid) if reaches(lo + mid * k) else (mid + 1, b)
    return lo + a * k


def _float_edge(ok: Callable[[float], bool], lo: float, hi: float, log: bool, first: bool) -> float:
    """Bisection on [lo, hi] (in log space if `log`) for a monotone `ok`: with first=False
    the largest v with ok(v) (ok(lo) must hold), with first=True the smallest (hi when
    none). Counts of a float dim (a density) are monotone step functions of it."""
    if first and ok(lo):
        return lo
    if not first and ok(hi):
        return hi
    f, g = (math.log, math.exp) if log else (float, float)
    a, b = f(lo), f(hi)
    for _ in range(40):
        mid = (a + b) / 2
        a, b = (mid, b) if ok(g(mid)) != first else (a, mid)
    return min(max(g(a if not first else b), lo), hi)


def _index(space: Space, name: str) -> int:
    return [d.name for d in space.dims].index(name)


def min_params(space: Space, io: IOSpec, count: ConfigCounter) -> float:
    """The smallest parameter count in the space (inf when the constraints allow none)."""
    return _min_completion(space, 0, io_values(io), count)


def smallest_config(space: Space, io: IOSpec, count: ConfigCounter) -> dict[str, Any]:
    """The config of the space's smallest model ({} when the constraints allow none)."""
    return _smallest_completion(space, 0, io_values(io), count)[1]


# ---------------------------------------------------------------- sampling


class Suggester:
    """What `suggest_config` draws values from (an Optuna trial, or a grid point)."""

    def int(self, name: str, low: int, high: int, log: bool, step: int = 1) -> int: ...
    def float(self, name: str, low: float, high: float, log: bool) -> float: ...
    def choice(self, name: str, choices: tuple[Any, ...]) -> Any: ...


@dataclass
class Infeasible:
    """A proposal that cannot be trained; `config` holds what was drawn so far."""

    reason: str
    config: dict[str, Any] = field(default_factory=dict)


def suggest_config(
    space: Space, io: IOSpec, budget: int, count: ConfigCounter, draw: Suggester, target: float | None = None
) -> dict[str, Any] | Infeasible:
    """Draw one config of `space` that fits `budget`, or say why none could be drawn.

    With a `target` size (parameters), each range dim is drawn only among values from
    which a completion can still land on the target: no larger than the largest value
    whose smallest completion fits the target, no smaller than the smallest value whose
    largest completion reaches it. The last size-setting dim is then
    nearly solved, so the count lands at or just under the target whatever the earlier
    draws were (or as near as the space allows). Targets drawn log-uniformly between the
    smallest model and the budget spread the accepted models over the parameter axis.
    """
    count = _memo(count, space)  # the bisections below count the same configs many times
    known: dict[str, Any] = io_values(io)
    free_draw = getattr(draw, "free", draw)  # a free dimension's range never moves (`PositionDraw.free`)
    for i, dim in enumerate(space.dims):
        if not space.active(dim, known):
            continue
        if not space.is_sized(dim):
            value = _draw_free(space, dim, known, free_draw)
            if isinstance(value, Infeasible):
                return value
            known[dim.name] = value
            continue
        if dim.kind == "choice":
            v = draw.choice(dim.name, dim.choices)
            if not _choice_ok(space, dim.name, v, known):
                return Infeasible(f"{dim.name}={v!r} breaks the shape constraints", _strip(known))
            known[dim.name] = v
            if _min_completion(space, i + 1, known, count) > budget:
                return Infeasible(f"over budget with {dim.name}={v!r}", _strip(known))
            continue
        lo, hi = _bounds(space, dim, known)
        if lo > hi:
            return Infeasible(f"no valid {dim.name} given the constraints", _strip(known))
        smallest = _min_completion(space, i, known, count)  # this dim at its low, the rest too
        if smallest > budget:
            low = f"{lo:g}" if dim.kind == "float" else f"{int(lo)}"
            return Infeasible(f"over budget even with the smallest {dim.name}={low}", _strip(known))
        limit = budget if target is None else min(budget, max(target, smallest))
        if dim.kind == "float":
            top = _float_edge(
                lambda v: _min_completion(space, i + 1, dict(known, **{dim.name: v}), count) <= limit,  # noqa: B023 (called now)
                lo,
                hi,
                dim.log,
                first=False,
            )
            if target is not None:
                lo = _float_edge(
                    lambda v: _max_corner(space, i + 1, dict(known, **{dim.name: v}), count) >= limit,  # noqa: B023 (called now)
                    lo,
                    top,
                    dim.log,
                    first=True,
                )
            known[dim.name] = draw.float(dim.name, lo, top, dim.log)
            continue
        lo, hi = int(lo), int(hi)
        top = _largest_fitting(space, dim, i, known, count, limit, lo, hi)
        if target is not None:
            lo = min(top, _smallest_reaching(space, dim, i, known, count, limit, lo, top))
        known[dim.name] = draw.int(dim.name, lo, top, dim.log, dim.step)
    return _strip(known)


def _draw_free(space: Space, dim: Dim, known: dict[str, Any], draw: Suggester) -> Any:
    """A free dimension's value: drawn over its whole declared range (or its choices),
    narrowed only by the space's constraints, never by the budget."""
    if dim.kind == "choice":
        v = draw.choice(dim.name, dim.choices)
        if not _choice_ok(space, dim.name, v, known):
            return Infeasible(f"{dim.name}={v!r} breaks the shape constraints", _strip(known))
        return v
    lo, hi = _bounds(space, dim, known)
    if lo > hi:
        return Infeasible(f"no valid {dim.name} given the constraints", _strip(known))
    if dim.kind == "float":
        return draw.float(dim.name, lo, hi, dim.log)
    return draw.int(dim.name, int(lo), int(hi), dim.log, dim.step)


def _memo(count: ConfigCounter, space: Space) -> ConfigCounter:
    """`count` remembering its answers, keyed by the config's size dimensions only (a free
    dimension never changes the count, so its values share one entry)."""
    seen: dict[tuple, int] = {}
    free = set(space.free)

    def counted(config: dict[str, Any]) -> int:
        key = tuple(sorted((k, v) for k, v in config.items() if k not in free))
        if key not in seen:
            seen[key] = count(config)
        return seen[key]

    return counted


def _strip(known: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in known.items() if k not in ("d_x", "d_out")}


def check_config(space: Space, io: IOSpec, config: dict[str, Any]) -> str | None:
    """Why `config` (e.g. a grid point) is outside the space's constraints, or None."""
    vals = dict(io_values(io), **config)
    for c in space.constraints:
        if c.left in vals and c.right in vals and not c.holds(vals):
            return f"breaks {c}"
    return None


def grid_configs(space: Space, seed: int) -> Iterator[dict[str, Any]]:
    """Every point of the grid (cartesian product of each dim's grid values), shuffled
    with `seed` so that a truncated grid still covers the space evenly."""
    points = list(itertools.product(*(d.grid_values() for d in space.dims)))
    random.Random(seed).shuffle(points)
    seen: set[tuple] = set()
    for p in points:
        config: dict[str, Any] = {}
        for dim, v in zip(space.dims, p):
            if space.active(dim, config):  # a conditional dimension only where it exists
                config[dim.name] = v
        key = tuple(config.items())
        if key not in seen:
            seen.add(key)
            yield config
