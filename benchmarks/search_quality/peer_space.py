"""The product's spaces as a user of a plain optimiser writes them (issue 30's peers).

A peer searches the same family ranges as the product (search/spaces/defs/, the `Dim`s
`search/engine/sampling/` draws from), but the way Optuna's and Ax's documentation show
a conditional space: a categorical `family` when there are several, then each family's
own parameters, named `FAMILY_KEY` so that families with different ranges never share one
(with a single family, plain `KEY`). Every `Dim` keeps its range, log scale, step and
choices; a `Dim` with one value (a one-item choice, `low == high`) is a constant, not a
parameter, as a user would write it.

Shape rules between two keys (d_h < d_z) are written as a user of a define-by-run API
writes a dependent range, `suggest_int("d_h", 4, d_z - 1)`: `PeerSpace.bounds` is the
dim's range narrowed by the rules on the keys drawn before it and the io sizes
(`search.spaces.dim_bounds`, without the budget). An optimiser with a fixed box (Ax)
draws the whole range instead.

What differs from the product is only what the product adds to the search: no target
size, no budget-aware narrowing of the ranges, no corners, no turns of the families. A
drawn config is judged before any training (`PeerSpace.judge`): one that breaks a shape
rule or the space's constraints, or whose exact count is over the budget, is a
`Rejection` (recorded, never trained), like the grid's over-budget points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.io import IOSpec
from core.shape_rules import io_values
from search.engine.sampling import ParamCounter, Proposal, Rejection
from search.spaces import Dim, Space, check_config
from search.spaces.sizing import dim_bounds


def searched(dim: Dim) -> bool:
    """Whether `dim` has more than one value (a parameter, not a constant)."""
    return len(dim.choices) > 1 if dim.kind == "choice" else dim.low != dim.high


def constant(dim: Dim) -> Any:
    """The one value of a dim that `searched` says is a constant."""
    if dim.kind == "choice":
        return dim.choices[0]
    return int(dim.low) if dim.kind == "int" else float(dim.low)


@dataclass(frozen=True)
class PeerSpace:
    """The families' spaces, the task's io sizes, the budget and the exact counter."""

    spaces: dict[str, Space]
    io: IOSpec
    budget: int
    count: ParamCounter

    @property
    def families(self) -> list[str]:
        return list(self.spaces)

    def name(self, family: str, key: str) -> str:
        """The peer's parameter name of `family`'s `key`."""
        return f"{family}_{key}" if len(self.spaces) > 1 else key

    def params(self, family: str) -> list[tuple[str, Dim]]:
        """(peer parameter name, dim) of each searched dim of `family`, in space order."""
        return [(self.name(family, d.name), d) for d in self.spaces[family].dims if searched(d)]

    def bounds(self, family: str, dim: Dim, known: dict[str, Any]) -> tuple[float, float]:
        """`dim`'s range given the `known` config values (keys drawn before it): narrowed by
        the space's rules and step, as a dependent range; low > high when none is valid."""
        return dim_bounds(self.spaces[family], dim, {**io_values(self.io), **known})

    def constants(self, family: str) -> dict[str, Any]:
        return {d.name: constant(d) for d in self.spaces[family].dims if not searched(d)}

    def config(self, family: str, values: dict[str, Any]) -> dict[str, Any]:
        """`family`'s config (keys in space order) from the peer's parameter values."""
        fixed, drawn = self.constants(family), {d.name: values[n] for n, d in self.params(family)}
        return {d.name: fixed[d.name] if d.name in fixed else drawn[d.name] for d in self.spaces[family].dims}

    def judge(self, family: str, config: dict[str, Any]) -> Proposal | Rejection:
        """A `Proposal` with the exact count, or a `Rejection`: a broken shape rule or space
        constraint (no count), or over budget (with its count)."""
        reason = check_config(self.spaces[family], self.io, config)
        if reason is not None:
            return Rejection(family, config, None, reason)
        n = self.count(family, config)
        if n > self.budget:
            return Rejection(family, config, n, f"over budget: {n} > {self.budget} parameters")
        return Proposal(family, config, n)
