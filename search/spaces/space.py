"""A search space: an ordered tuple of `Dim`s (int/float ranges or choices) plus
`Constraint`s between config keys and the task's io sizes (`d_x`, `d_out`).

Two kinds of dimension (issue 80): a *size* dimension changes the parameter count and is
drawn toward a target size (search/spaces/sizing.py); a *free* one (a learning rate, a
dropout, a momentum) does not, and is drawn over its whole declared range.
search/spaces/size_dims.py tells them apart by counting (`Space.sized`); `Dim.size`
overrides it. A dimension with a `Condition` (`when`) exists only when the condition holds
on an earlier dimension's value (`width_3` only when `depth >= 3`).

Defaults are the papers' ranges (search/spaces/defs/), a space file overrides any of
them (search/spaces/files.py), and search/spaces/sizing.py draws budget-aware configs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.errors import UserError
from core.shape_rules import OPS, Constraint
from core.trials import TRAINING_KEYS

PAPER_LRS = (1e-4, 5e-4, 1e-3, 5e-3)  # Chen et al.'s learning-rate set

CONDITION_OPS: dict[str, Callable[[Any, Any], bool]] = {"==": operator.eq, "!=": operator.ne, **OPS}


@dataclass(frozen=True)
class Condition:
    """`parent op value`: when a conditional dimension exists (`depth >= 3`, `opt == 'sgd'`).
    `parent` is a dimension drawn before the one it conditions."""

    parent: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in CONDITION_OPS:
            raise UserError(
                f"condition on {self.parent!r}: op must be one of {', '.join(CONDITION_OPS)}, got {self.op!r}"
            )

    def holds(self, values: dict[str, Any]) -> bool:
        """Whether the condition holds on `values` (False when the parent is absent)."""
        if self.parent not in values:
            return False
        try:
            return bool(CONDITION_OPS[self.op](values[self.parent], self.value))
        except TypeError:
            return False

    def __str__(self) -> str:
        return f"{self.parent} {self.op} {self.value!r}"


def at_position(u: float, low: float, high: float, log: bool, step: float | None = None) -> float:
    """The value at position `u` (0 to 1) of [low, high], on a log axis if `log`, rounded
    to `low` + a multiple of `step` (integers; None: a float), inside [low, high]."""
    if not 0.0 <= u <= 1.0 or high < low:
        raise ValueError(f"need 0 <= u <= 1 and low <= high, got u={u}, {low}..{high}")
    if u in (0.0, 1.0) or low == high:
        v = low if u == 0.0 else high
    elif log and low > 0:
        v = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
    else:
        v = low + u * (high - low)
    if step is None:
        return min(max(v, low), high)
    k = round((v - low) / step)
    return min(max(low + k * step, low), low + ((high - low) // step) * step)


@dataclass(frozen=True)
class Dim:
    """One searched config key: an int/float range or a list of choices."""

    name: str
    kind: Literal["int", "float", "choice"]
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    grid: tuple[Any, ...] = ()  # values used by the grid sampler (ranges only)
    step: int = 1  # int ranges: the values are low, low + step, ... <= high (Optuna's step)
    # True: a size dimension, False: a free one, whatever counting says (None: decided by
    # counting, search/spaces/size_dims.py); False is refused where the count moves with it
    size: bool | None = None
    when: Condition | None = None  # present only when this holds on an earlier dimension

    def __post_init__(self) -> None:
        if self.size not in (None, True, False):
            raise UserError(f"{self.name}: size must be true or false, got {self.size!r}")
        if self.kind == "choice":
            if not self.choices:
                raise UserError(f"{self.name}: a choice list needs at least one value")
        else:
            if self.low is None or self.high is None or self.low > self.high:
                raise UserError(f"{self.name}: need low <= high, got {self.low}..{self.high}")
            if self.log and self.low <= 0:
                raise UserError(f"{self.name}: a log range needs low > 0")
            if self.kind == "int" and (int(self.low) != self.low or int(self.high) != self.high):
                raise UserError(f"{self.name}: integer range needs integer bounds")
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 1:
            raise UserError(f"{self.name}: step must be a positive integer, got {self.step!r}")
        if self.step > 1 and (self.kind != "int" or self.log):
            raise UserError(f"{self.name}: a step needs an integer range without log (Optuna cannot do both)")

    def align(self, lo: float, hi: float) -> tuple[float, float]:
        """[lo, hi] narrowed to values on this dim's step grid (low + k * step)."""
        if self.step == 1:
            return lo, hi
        base = int(self.low)
        return (
            base + math.ceil((lo - base) / self.step) * self.step,
            base + math.floor((hi - base) / self.step) * self.step,
        )

    def grid_values(self) -> tuple[Any, ...]:
        if self.kind == "choice":
            return self.choices
        if self.grid:
            return self.grid
        values = _geometric(self.low, self.high, 4, self.kind == "int")
        if self.step > 1:
            base = int(self.low)
            values = tuple(sorted({base + round((v - base) / self.step) * self.step for v in values}))
        return values


def _geometric(lo: float, hi: float, n: int, integer: bool) -> tuple[Any, ...]:
    if lo == hi:
        return (int(lo) if integer else lo,)
    if lo > 0:
        vals = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    else:
        vals = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    if integer:
        return tuple(sorted({int(round(v)) for v in vals}))
    return tuple(vals)


@dataclass(frozen=True)
class Space:
    """A family's searched keys in drawing order, the rules between them, and which keys
    set the size (`sized`: None until search/spaces/size_dims.py `classify` has counted;
    then every dimension not in TRAINING_KEYS counts as a size dimension)."""

    family: str
    dims: tuple[Dim, ...]
    constraints: tuple[Constraint, ...] = ()
    sized: frozenset[str] | None = None

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for d in self.dims:
            if d.when is not None and d.when.parent not in seen:
                where = "a later dimension" if any(e.name == d.when.parent for e in self.dims) else "no dimension"
                raise UserError(
                    f"family {self.family!r}: dimension {d.name!r} is conditional on {d.when.parent!r}, "
                    f"{where} of its space (a condition names a dimension drawn before it)"
                )
            seen.add(d.name)

    def is_sized(self, dim: Dim) -> bool:
        """Whether `dim` is drawn toward the target size (a size dimension)."""
        if self.sized is not None:
            return dim.name in self.sized
        return dim.size if dim.size is not None else dim.name not in TRAINING_KEYS

    @property
    def free(self) -> tuple[str, ...]:
        """The free dimensions' names (drawn over their whole range), in drawing order."""
        return tuple(d.name for d in self.dims if not self.is_sized(d))

    @property
    def conditional(self) -> bool:
        """Whether some dimension exists only for some values of another."""
        return any(d.when is not None for d in self.dims)

    @staticmethod
    def active(dim: Dim, known: dict[str, Any]) -> bool:
        """Whether `dim` exists given the values drawn before it."""
        return dim.when is None or dim.when.holds(known)

    def dim(self, name: str) -> Dim:
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(name)

    def with_overrides(self, overrides: dict[str, Dim]) -> Space:
        known = {d.name for d in self.dims}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise UserError(f"space {self.family!r} has no key {', '.join(unknown)}; keys: {', '.join(sorted(known))}")
        return replace(self, dims=tuple(overrides.get(d.name, d) for d in self.dims), sized=None)

    def with_constraints(self, search: tuple[Constraint, ...], shape_rules: tuple[Constraint, ...]) -> Space:
        """This space with `search` as its search constraints: the family's `shape_rules`
        stay, the default search-only ones (ratios, aspect ranges) are replaced. Each
        side must be a key of the space or an io size (d_x, d_out)."""
        known = {d.name for d in self.dims} | {"d_x", "d_out"}
        for c in search:
            bad = [k for k in (c.left, c.right) if k not in known]
            if bad:
                raise UserError(
                    f"constraint '{c}' names {', '.join(bad)}, not a key of space {self.family!r} "
                    f"({', '.join(sorted(known))})"
                )
        return replace(self, constraints=tuple(shape_rules) + tuple(search))
