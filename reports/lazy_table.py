"""Big tables sent as data and drawn on demand (issue 33).

A table of more than `LAZY_ROWS` rows is not written as HTML rows (tens of megabytes at
100,000 trials, and a page the browser lays out for seconds): its formatted cells go in a
``<script type="application/json">`` block, columns holding one value in every row are
said once above it instead of repeated, and a few lines of the page's script
(`reports.html`: `drawLazy`) build the sortable table when its ``<details>`` is opened.
Smaller tables stay plain HTML (`reports.html.html_table`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from reports.formatting import format_value
from reports.html import NUMERIC_COLUMNS, esc, html_table, script_json

LAZY_ROWS = 500  # tables with more rows than this are drawn on demand


def constant_columns(cells: dict[str, list[str]], keep: Iterable[str] = ()) -> dict[str, str]:
    """Column -> its one value, for the columns of `cells` (column -> texts) with the same
    text in every row (at least two rows), except those in `keep`."""
    keep = set(keep)
    out = {}
    for col, texts in cells.items():
        if col not in keep and len(texts) >= 2 and texts.count(texts[0]) == len(texts):
            out[col] = texts[0]
    return out


def column_kinds(
    columns: Iterable[str], *, numeric: Iterable[str], reason: Iterable[str], status_col: str | None, linked: bool
) -> list[str]:
    """The cell class of each column, as `html_table` gives it: "status" (a badge),
    "reason", "link" (a trial number linking to its page), "num" or ""."""
    numeric, reason = set(numeric), set(reason)
    kinds = []
    for col in columns:
        if col == status_col:
            kinds.append("status")
        elif col in reason:
            kinds.append("reason")
        elif col == "number" and linked:
            kinds.append("link")
        elif col in numeric:
            kinds.append("num")
        else:
            kinds.append("")
    return kinds


def lazy_table(
    df: pd.DataFrame,
    table_id: str,
    *,
    numeric: Iterable[str] = (),
    reason: Iterable[str] = (),
    status_col: str | None = "status",
    what: str = "rows",
    number_link: Callable[[str], str] | None = None,
) -> str:
    """`df` (formatted values) as a ``<details>`` the page's script fills with the table
    when opened; `table_id` names its data block (unique in the page)."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", table_id):
        raise ValueError(f"table_id must be lower-case letters, digits and '-', got {table_id!r}")
    cells = {
        str(c): [v if type(v) is str else format_value(v) for v in df[c].tolist()]  # mostly texts already
        for c in df.columns
    }
    same = constant_columns(cells, keep=("number", "status", "family"))
    shown = [c for c in cells if c not in same]
    data: dict[str, Any] = {
        "columns": shown,
        "kinds": column_kinds(
            shown,
            numeric=set(numeric) | (NUMERIC_COLUMNS & set(shown)),
            reason=reason,
            status_col=status_col,
            linked=number_link is not None,
        ),
        "rows": list(map(list, zip(*(cells[c] for c in shown)))),
    }
    if number_link is not None and "number" in cells:
        data["links"] = [number_link(n) if n else "" for n in cells["number"]]
    note = ""
    if same:
        note = (
            '<p class="muted">The same in every row: '
            + "; ".join(f"{esc(k)} {esc(v) if v else '(empty)'}" for k, v in same.items())
            + ".</p>"
        )
    return (
        f'<details class="lazy" data-table="{table_id}"><summary>Show all {len(df):,} {esc(what)} '
        f'<span class="muted">(drawn when opened)</span></summary>{note}'
        f'<div class="scroll tall holder"></div></details>'
        f'<script type="application/json" id="{table_id}">{script_json(data)}</script>'
    )


def table_html(
    df: pd.DataFrame,
    table_id: str,
    *,
    numeric: Iterable[str] = (),
    reason: Iterable[str] = (),
    status_col: str | None = "status",
    empty: str = "none",
    what: str = "rows",
    tall: bool = False,
    number_link: Callable[[str], str] | None = None,
) -> str:
    """A plain HTML table (`html_table`, in a scrolling box, `tall`: scrolling down
    too) up to `LAZY_ROWS` rows, `lazy_table` above."""
    if df is not None and len(df) > LAZY_ROWS:
        return lazy_table(
            df, table_id, numeric=numeric, reason=reason, status_col=status_col, what=what, number_link=number_link
        )
    inner = html_table(df, numeric=numeric, reason=reason, status_col=status_col, empty=empty, number_link=number_link)
    return f'<div class="scroll{" tall" if tall else ""}">{inner}</div>'
