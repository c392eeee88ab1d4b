"""Printing what the commands and `search.run` read: a DataFrame as a table, CSV or JSON.

`search run`'s options are declared in search/engine/run_options.py (`RunOptions`)."""

from __future__ import annotations

import json
import sys

from search.engine.run_option_help import DEFAULT_REPORT_DIR  # noqa: F401  (its old home)


def print_frame(df, fmt: str) -> None:
    """A DataFrame on stdout as a table, CSV or JSON records."""
    import pandas as pd

    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        print(json.dumps(json.loads(df.to_json(orient="records")), indent=2))
    elif df.empty:
        print("(no rows)")
    else:
        with pd.option_context(
            "display.max_rows", None, "display.max_columns", None, "display.width", 200, "display.max_colwidth", 60
        ):
            print(df.to_string(index=False))
