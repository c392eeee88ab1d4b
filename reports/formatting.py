"""Display text for reports: values, counts, mean ± std, durations, times, hover text,
and one colour per family. Pure functions of plain values (no frames, no figures)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from core.budget import format_count
from verdicts.points import parse_config

# Colour-blind friendly qualitative palette (Okabe-Ito, then Plotly's defaults).
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#8C564B",
    "#636EFA",
    "#EF553B",
    "#00CC96",
    "#AB63FA",
    "#FFA15A",
    "#19D3F3",
    "#FF6692",
)


def family_colors(families: Iterable[str]) -> dict[str, str]:
    """Deterministic colour per family: sorted names take the palette in order."""
    names = sorted({str(f) for f in families})
    return {f: PALETTE[i % len(PALETTE)] for i, f in enumerate(names)}


def config_keys(configs: Iterable[Any]) -> list[str]:
    """Union of config keys, in order of first appearance."""
    keys: dict[str, None] = {}
    for c in configs:
        for k in parse_config(c):
            keys.setdefault(str(k), None)
    return list(keys)


def format_value(v: Any) -> str:
    """Short text for a config value or a number."""
    if v is None:
        return ""
    if type(v) is str:  # the common case first (pd.isna below is slow)
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        return f"{float(v):.4g}"
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    return str(v)


def _finite(v: Any) -> float | None:
    """`v` as a finite float, or None (missing, NaN, infinite or not a number)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def format_params(n: Any) -> str:
    """'1.23M (1,234,567)' for a parameter count; '' when missing."""
    x = _finite(n)
    return "" if x is None else f"{format_count(x)} ({int(round(x)):,})"


def format_mean_std(mean: Any, std: Any = None, digits: int = 4) -> str:
    """'25.31 ± 0.1234' (the ± part only when std is finite); '' when mean is missing."""
    m, s = _finite(mean), _finite(std)
    if m is None:
        return ""
    return f"{m:.{digits}g}" + ("" if s is None else f" ± {s:.2g}")


def hover_text(
    number: Any, family: str, config: dict[str, Any], params: float, metric: str, mean: float, std: float
) -> str:
    """Hover text of one trial (plotly understands <br>; user text is escaped)."""
    cfg = ", ".join(f"{html.escape(str(k))}={html.escape(format_value(v))}" for k, v in config.items())
    lines = [
        f"<b>#{format_value(number)}</b> {html.escape(str(family))}",
        cfg or "(no config)",
        f"params {format_params(params)}",
        f"{html.escape(metric)} {format_mean_std(mean, std)}",
    ]
    return "<br>".join(lines)


def format_duration(v: Any) -> str:
    s = _finite(v)
    if s is None:
        return ""
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def format_time(v: Any) -> str:
    if v is None:
        return ""
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    try:
        return pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(v)


def format_bytes(n: Any) -> str:
    """'35.2 kB (35,212 bytes)' for a file size (decimal units); '' when missing."""
    x = _finite(n)
    if x is None:
        return ""
    size, unit = float(x), "bytes"
    for u in ("kB", "MB", "GB", "TB"):
        if size < 1000:
            break
        size, unit = size / 1000, u
    return f"{int(x):,} bytes" if unit == "bytes" else f"{size:.3g} {unit} ({int(x):,} bytes)"
