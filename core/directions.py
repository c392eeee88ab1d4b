"""Metric directions: which way is better. The one home of the rule."""
from __future__ import annotations

from typing import Literal

Direction = Literal["maximize", "minimize"]
DIRECTIONS: tuple[str, ...] = ("maximize", "minimize")


def check_direction(direction: str) -> str:
    """`direction` itself, or ValueError naming the two allowed values."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'minimize' or 'maximize', not {direction!r}")
    return direction


def better(value: float, best: float | None, direction: str) -> bool:
    """Whether `value` beats `best` (None: nothing yet) in `direction`; NaN never does."""
    if value != value:
        return False
    if best is None:
        return True
    return value > best if direction == "maximize" else value < best


def arrow(direction: str) -> str:
    """'↑' when higher is better, '↓' when lower is."""
    return "↑" if check_direction(direction) == "maximize" else "↓"

