"""Wall-time strings: `90s`, `45m`, `2h`, `1.5h`, `1h30m`, `3600` (seconds)."""

from __future__ import annotations

import math
import re

from core.errors import UserError

_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])", re.IGNORECASE)


def parse_duration(text: str | float, flag: str = "--time-limit") -> float:
    """Seconds (> 0) of a duration: a number of seconds, or parts with a unit each
    (s, m, h, d), largest first, e.g. 1h30m. UserError, naming `flag`, for anything else."""
    bad = UserError(f"{flag} {text!r}: use a duration such as 90s, 45m, 2h, 1h30m or a number of seconds")
    if isinstance(text, bool):
        raise bad
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        s = str(text).strip().lower()
        try:
            seconds = float(s)
        except ValueError:
            parts = _PART.findall(s)
            if not parts or "".join(n + u for n, u in parts) != s.replace(" ", ""):
                raise bad from None
            units = [u for _, u in parts]
            order = [list(_UNIT_S)[::-1].index(u) for u in units]  # d, h, m, s: each once, largest first
            if order != sorted(set(order)):
                raise bad from None
            seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if not math.isfinite(seconds) or seconds <= 0:
        raise UserError(f"{flag} {text!r}: it must be a positive duration")
    return seconds


def format_duration(seconds: float) -> str:
    """Short human form: 5400 -> '1h30m', 90 -> '1m30s', 12.5 -> '12.5s'."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, s = divmod(round(seconds), 60)
    hours, m = divmod(minutes, 60)
    return (f"{hours}h" if hours else "") + (f"{m}m" if m else "") + (f"{s}s" if s and not hours else "")
