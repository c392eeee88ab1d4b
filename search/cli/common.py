"""What the sub-commands share: opening the store, printing frames, key=value options."""

from __future__ import annotations

from typing import Any

from search.api.options import print_frame  # noqa: F401  (the commands print frames through it)
from search.api.run import open_store, parse_value, task_options  # noqa: F401  (one home: search/api/run.py)


def storage_arg(p) -> None:
    """--storage, as every command that reads or writes the database takes it."""
    from search.engine.run_option_help import HELP

    p.add_argument("--storage", metavar="URL", help=HELP["storage"])


def key_values(items: list[str] | None, what: str) -> dict[str, Any]:
    """KEY=VALUE items as a dict (search/engine/run_options.py `key_values`, one rule)."""
    from search.engine.run_options import key_values as parsed

    return parsed(items, what) or {}
