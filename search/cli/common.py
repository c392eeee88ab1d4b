"""What the sub-commands share: opening the store, printing frames, key=value options."""

from __future__ import annotations

from typing import Any

from core.errors import UserError
from search.api.options import print_frame  # noqa: F401  (the commands print frames through it)
from search.api.run import open_store, parse_value, task_options  # noqa: F401  (one home: search/api/run.py)


def storage_arg(p) -> None:
    """--storage, as every command that reads or writes the database takes it."""
    from search.engine.run_option_help import HELP

    p.add_argument("--storage", metavar="URL", help=HELP["storage"])


def key_values(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or []:
        if "=" not in kv:
            raise UserError(f"expected {what} key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out
