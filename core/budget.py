"""Parameter-budget strings: `500K`, `80M`, `1.5B`, `80000000`."""

from __future__ import annotations

import re

from core.errors import UserError

_SUFFIX = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9}
_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMBG]?)\s*$", re.IGNORECASE)


def parse_budget(text: str) -> int:
    """Parse a budget string into an integer number of parameters (> 0)."""
    m = _RE.match(str(text))
    if not m:
        raise UserError(f"bad budget {text!r}: use a number with an optional K, M or B suffix, e.g. 500K, 80M, 1.5B")
    value = float(m.group(1)) * _SUFFIX[m.group(2).upper()]
    n = int(round(value))
    if n <= 0:
        raise UserError(f"bad budget {text!r}: it must be positive")
    return n


def format_count(n: float) -> str:
    """Human form of a parameter count: 1234567 -> '1.23M'."""
    n = float(n)
    for suffix, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{int(n)}"


def parse_targets(text: str, budget: int, flag: str) -> list[int]:
    """A comma list of budgets beyond a search's (`search predict --at`, `search report
    --predict-at`, the compare page's `predict_at`), ascending; UserError for an empty
    list, a bad budget, or one not above the search `budget` (a front is read, not
    predicted, within it)."""
    targets = sorted({parse_budget(b) for b in str(text).split(",") if b.strip()})
    if not targets:
        raise UserError(f"{flag} needs at least one budget")
    if targets[0] <= budget:
        raise UserError(
            f"{flag} {format_count(targets[0])} is not above the search budget {format_count(budget)}: "
            "'search compare' answers within it"
        )
    return targets
