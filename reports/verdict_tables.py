"""Verdicts as tables: one row per budget and family (the CLI's and the Python API's),
and the page's "Which shape wins" display strings."""

from __future__ import annotations

import pandas as pd

from verdicts.compare import Verdict


def verdicts_frame(verdicts: list[Verdict], metric: str) -> pd.DataFrame:
    """One row per level and family (the CLI's table and the page's), plus the verdict;
    `best` is the best configuration's mean (trial `number`), the value itself where the
    value is read as the best."""
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
                    "best": r.best,
                    "number": r.number,
                    "params": r.params,
                    "runs": r.runs,
                    "verdict": v.text if r.family == v.winner else "",
                }
            )
    return pd.DataFrame(
        rows, columns=["budget", "family", metric, "low", "high", "best", "number", "params", "runs", "verdict"]
    )


def wins_table(verdicts: list[Verdict]) -> pd.DataFrame:
    """Display strings, one row per budget: each family's value with its interval and the
    best trial within the budget (with that trial's own value where the value is a fit),
    then the verdict (the page's "Which shape wins" table)."""
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
            best = "" if r.best is None or r.best == r.value else f": {r.best:.4g}"
            row[r.family] = f"{r.value:.4g}{ci} (#{r.number}{best})"
        row["verdict"] = v.text
        rows.append(row)
    return pd.DataFrame(rows, columns=["budget ≤", *families, "verdict"])
