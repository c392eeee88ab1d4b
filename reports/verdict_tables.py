"""Verdicts as tables: one row per budget and family (the CLI's and the Python API's),
and the page's "Which shape wins" display strings."""

from __future__ import annotations

import pandas as pd

from reports.compare import Verdict


def verdicts_frame(verdicts: list[Verdict], metric: str) -> pd.DataFrame:
    """One row per level and family (the CLI's table and the page's), plus the verdict."""
    rows = []
    for v in verdicts:
        for r in v.families:
            rows.append(
                {
                    "budget": v.budget,
                    "family": r.family,
                    metric: r.value,
                    "low": r.low,
                    "high": r.high,
                    "number": r.number,
                    "params": r.params,
                    "runs": r.runs,
                    "verdict": v.text if r.family == v.winner else "",
                }
            )
    return pd.DataFrame(
        rows, columns=["budget", "family", metric, "low", "high", "number", "params", "runs", "verdict"]
    )


def wins_table(verdicts: list[Verdict]) -> pd.DataFrame:
    """Display strings, one row per budget: each family's best value with its interval and
    trial, then the verdict (the page's "Which shape wins" table)."""
    from core.budget import format_count

    families = [r.family for r in verdicts[0].families] if verdicts else []
    rows = []
    for v in verdicts:
        row: dict[str, str] = {"budget ≤": format_count(v.budget)}
        for r in v.families:
            if r.value is None:
                row[r.family] = "—"
                continue
            ci = "" if r.low is None else f" [{r.low:.4g}, {r.high:.4g}]"
            row[r.family] = f"{r.value:.4g}{ci} (#{r.number})"
        row["verdict"] = v.text
        rows.append(row)
    return pd.DataFrame(rows, columns=["budget ≤", *families, "verdict"])
