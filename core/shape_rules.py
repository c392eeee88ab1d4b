"""Shape rules: `left op scale * right` over a config's keys and the io sizes.

One rule type for both places a family's shape is stated: the family itself
(`Family.shape_rules`, checked by `shape_violation`) and its search space (the space's
constraints reuse the family's rules, then add search-only ranges such as ratio bounds).
The io sizes are named `d_x` (flattened input) and `d_out` (flattened output).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from core.io import IOSpec

OPS: dict[str, Callable[[Any, Any], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_NEGATION = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def io_values(io: IOSpec) -> dict[str, int]:
    """The io sizes a rule may name."""
    return {"d_x": io.d_in, "d_out": io.d_out}


@dataclass(frozen=True)
class Constraint:
    """`left op scale * right`, each side a config key or an io size (`d_x`, `d_out`).
    `scale` (positive, default 1) states ratio rules such as d_h >= 0.1 * d_model; it is
    applied as an exact fraction, so 0.1 * 640 is 64, not 64.00000000000001."""

    left: str
    op: Literal["<", "<=", ">", ">="]
    right: str
    scale: float = 1

    def ratio(self) -> Fraction:
        return Fraction(self.scale).limit_denominator(10**6)

    def holds(self, values: dict[str, Any]) -> bool:
        return OPS[self.op](values[self.left], self.ratio() * values[self.right])

    def why_not(self, values: dict[str, Any]) -> str:
        """The values that break the rule, e.g. '(500 <= 784)'."""
        right = self.ratio() * values[self.right]
        shown = f"{float(right):g}" if right.denominator != 1 else f"{int(right)}"
        return f"({values[self.left]} {_NEGATION[self.op]} {shown})"

    def __str__(self) -> str:
        return f"{self.left} {self.op} {'' if self.scale == 1 else f'{self.scale:g} * '}{self.right}"


def first_violation(subject: str, rules: tuple[Constraint, ...], config: dict[str, Any], io: IOSpec) -> str | None:
    """'<subject> needs <rule> (<values>)' for the first rule `config` breaks on `io`, or None."""
    values = {**config, **io_values(io)}
    for rule in rules:
        if not rule.holds(values):
            return f"{subject} needs {rule} {rule.why_not(values)}"
    return None
