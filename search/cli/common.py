"""What the sub-commands share: opening the store, printing frames, key=value options."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from core.errors import UserError


def storage_arg(p) -> None:
    p.add_argument("--storage", metavar="URL",
                   help="SQLAlchemy URL or SQLite file (default: $SEARCH_STORAGE or sqlite:///search.db)")


def open_store(url: str | None):
    from storage import Store

    return Store(url)


def print_frame(df, fmt: str) -> None:
    import pandas as pd

    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        print(json.dumps(json.loads(df.to_json(orient="records")), indent=2))
    elif df.empty:
        print("(no rows)")
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                               "display.max_colwidth", 60):
            print(df.to_string(index=False))


def key_values(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or []:
        if "=" not in kv:
            raise UserError(f"expected {what} key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out


def task_options(a: argparse.Namespace) -> dict[str, Any]:
    options = key_values(a.task_option, "--task-option")
    if getattr(a, "data", None):
        options["data"] = a.data
    return options


def parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text
