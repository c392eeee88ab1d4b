"""Which dimensions of a space set the parameter count (size dimensions, drawn toward a
target size) and which do not (free dimensions, drawn over their whole range): issue 80.

Decided by counting, once per study before anything is written (search/engine/prepare.py):
at a few reference configurations of the space (its smallest model, its largest, and its
middle), each dimension is moved through its valid range (its ends and three points
between; each option of a choice) with the rest fixed; a dimension whose move changes the
count is a size dimension, and so is a key a rule ties to one (`tied`). `Dim.size`
overrides the count (true: sized, for a count that moves with a dimension only in regions
the references miss); a `size: false` that counting contradicts is refused. The study loop
checks again on its first proposals (`recheck`) and sizes a dimension found to move the
count there.

    classify(space, io, count, owner) -> Space   # with `sized` set
    moves_count(space, io, config, name, count)  # the counts at the ends differ here
    recheck(space, io, config, count)            # the free ones that do, made size dimensions
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.errors import UserError
from core.io import IOSpec
from core.shape_rules import io_values
from core.trials import TRAINING_KEYS
from search.spaces.sizing import ConfigCounter, choice_ok, dim_bounds
from search.spaces.space import Dim, Space, at_position


def complete(space: Space, io: IOSpec, wanted: dict[str, Any], fallback: str = "low") -> dict[str, Any] | None:
    """A valid configuration taking each present dimension's value from `wanted` where it
    is valid, else its valid `fallback` end ("low" or "high"; a choice's first valid
    option); inactive conditional dimensions left out. None when none is valid."""
    known: dict[str, Any] = io_values(io)
    for dim in space.dims:
        if not space.active(dim, known):
            continue
        if dim.kind == "choice":
            options = [v for v in dim.choices if choice_ok(space, dim.name, v, known)]
            if not options:
                return None
            v = wanted.get(dim.name, options[0])
            known[dim.name] = v if v in options else options[0]
            continue
        lo, hi = dim_bounds(space, dim, known)
        if lo > hi:
            return None
        v = wanted.get(dim.name)
        if v is None or not lo <= v <= hi:
            v = lo if fallback == "low" else hi
        known[dim.name] = int(v) if dim.kind == "int" else float(v)
    return {k: v for k, v in known.items() if k not in ("d_x", "d_out")}


def _at(dim: Dim, u: float, lo: float, hi: float) -> Any:
    """The value at position `u` of [lo, hi] for `dim` (`at_position`: its log axis and step)."""
    if dim.kind == "int":
        return int(at_position(u, lo, hi, dim.log, dim.step))
    return at_position(u, lo, hi, dim.log)


def _middle(dim: Dim) -> Any:
    if dim.kind == "choice":
        return dim.choices[len(dim.choices) // 2]
    return _at(dim, 0.5, float(dim.low), float(dim.high))


POINTS = 5  # the values of a range each dimension is moved through (its ends and between)


def _ends(space: Space, io: IOSpec, dim: Dim, config: dict[str, Any]) -> list[Any]:
    """The values `dim` may take at `config` with the dimensions before it fixed: POINTS
    spread over its valid range (on a log axis for a log range), the two ends among them,
    or its valid options. The points between matter where a rule ties it to a later
    dimension (`d_h > d_z`): at its top end no later value may be valid."""
    known = dict(io_values(io))
    for d in space.dims:
        if d.name == dim.name:
            break
        if d.name in config:
            known[d.name] = config[d.name]
    if dim.kind == "choice":
        return [v for v in dim.choices if choice_ok(space, dim.name, v, known)]
    lo, hi = dim_bounds(space, dim, known)
    if lo > hi:
        return []
    return list(dict.fromkeys(_at(dim, k / (POINTS - 1), lo, hi) for k in range(POINTS)))


def _counts_at_ends(space: Space, io: IOSpec, dim: Dim, config: dict[str, Any], count: ConfigCounter) -> dict[Any, int]:
    """value -> count of `config` with `dim` at each of its ends (the dimensions after it
    kept where still valid); configurations the builder cannot build (count 0) left out."""
    out: dict[Any, int] = {}
    for v in _ends(space, io, dim, config):
        variant = complete(space, io, dict(config, **{dim.name: v}))
        if variant is None or variant.get(dim.name) != v:
            continue
        n = count(variant)
        if n > 0:
            out[v] = n
    return out


def moves_count(space: Space, io: IOSpec, config: dict[str, Any], name: str, count: ConfigCounter) -> bool:
    """Whether the count of `config` changes when dimension `name` moves to the ends of
    its valid range (or through its options), the rest fixed."""
    return len(set(_counts_at_ends(space, io, space.dim(name), config, count).values())) > 1


def references(space: Space, io: IOSpec) -> list[dict[str, Any]]:
    """The configurations each dimension is moved from: every range at its low end, at its
    high end, and in its middle (the rest made valid)."""
    points = [
        complete(space, io, {}, "low"),
        complete(space, io, {}, "high"),
        complete(space, io, {d.name: _middle(d) for d in space.dims}),
    ]
    out: list[dict[str, Any]] = []
    for p in points:
        if p is not None and p not in out:
            out.append(p)
    return out


def classify(space: Space, io: IOSpec, count: ConfigCounter, owner: str | None = None) -> Space:
    """`space` with `sized` set: the dimensions that change the count at some reference
    configuration, plus those declared `size: true`; UserError (one line naming the family
    and the dimension) where a `size: false` is contradicted by counting. A learning rate or
    weight decay (TRAINING_KEYS) is free unless declared otherwise."""
    who = owner or f"family {space.family!r}"
    refs = references(space, io)
    sized: set[str] = set()
    for dim in space.dims:
        if dim.size is True:
            sized.add(dim.name)
            continue
        if dim.size is None and dim.name in TRAINING_KEYS:
            continue
        moved = _moved(space, io, dim, refs, count)
        if moved is None:
            continue
        if dim.size is False:
            value_counts = ", ".join(f"{k}={v!r}: {n:,}" for (k, v), n in moved)
            raise UserError(
                f'{who}: dimension {dim.name!r} is declared "size": false but the count moves with it '
                f"({value_counts}); drop the override or make the count independent of it"
            )
        sized.add(dim.name)
    return replace(space, sized=frozenset(tied(space, sized)))


def tied(space: Space, sized: set[str]) -> set[str]:
    """`sized` and every dimension a rule ties to one of them (`d_model = 64 * n_heads`,
    `d_h < d_z`), unless declared `size: false`: the budget-aware draw bisects such keys
    together, and a key a rule pins moves no count on its own (counting cannot see it)."""
    names = {d.name: d for d in space.dims}
    out = set(sized)
    grew = True
    while grew:
        grew = False
        for c in space.constraints:
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if a in out and b in names and b not in out and names[b].size is not False:
                    out.add(b)
                    grew = True
    return out


def _moved(
    space: Space, io: IOSpec, dim: Dim, refs: list[dict[str, Any]], count: ConfigCounter
) -> list[tuple[tuple[str, Any], int]] | None:
    """((name, value), count) of two ends where moving `dim` changed the count, or None."""
    for ref in refs:
        if dim.name not in ref:
            continue
        counts = _counts_at_ends(space, io, dim, ref, count)
        if len(set(counts.values())) > 1:
            (a, na), (b, nb) = min(counts.items(), key=lambda kv: kv[1]), max(counts.items(), key=lambda kv: kv[1])
            return [((dim.name, a), na), ((dim.name, b), nb)]
    return None


def recheck(space: Space, io: IOSpec, config: dict[str, Any], count: ConfigCounter) -> tuple[Space, list[str]]:
    """`space` with each free dimension that moves the count at `config` made a size
    dimension, and those dimensions' names (the study's check on its first proposals)."""
    moved = [name for name in space.free if name in config and moves_count(space, io, config, name, count)]
    if not moved:
        return space, []
    return replace(space, sized=frozenset(space.sized or ()) | set(moved)), moved
