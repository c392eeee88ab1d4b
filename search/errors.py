"""The project's error types.

`UserError` is anything a user can fix (bad flag, unknown name, missing data). The CLI
prints its message as one line and exits with status 2; no traceback is shown.
"""
from __future__ import annotations


class UserError(Exception):
    """Bad input: printed as one line by the CLI, exit status 2."""


class StorageError(UserError):
    """A database problem we can explain (bad URL, refused write, schema mismatch)."""


class DataError(UserError):
    """A data set is missing, corrupt or malformed."""
