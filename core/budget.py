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
        raise UserError(
            f"bad budget {text!r}: use a number with an optional K, M or B suffix, e.g. 500K, 80M, 1.5B"
        )
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
