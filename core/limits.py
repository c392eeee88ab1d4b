"""Limits that more than one layer states (the CLI's defaults and the layer that enforces them)."""

from __future__ import annotations

SQL_TIMEOUT_S = 30.0  # `search sql` stops a query after this long (storage.sql enforces it)
# `search run --storage-wait`: how long a search waits for a database that went away
# (storage/waiting.py enforces it)
DEFAULT_STORAGE_WAIT_S = 300.0
