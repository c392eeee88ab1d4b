"""The project's error types.

`UserError` is anything a user can fix (bad flag, unknown name, missing data). The CLI
prints its message as one line and exits with status 2; no traceback is shown.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input: printed as one line by the CLI, exit status 2."""


class StorageError(UserError):
    """A database problem we can explain (bad URL, refused write, schema mismatch)."""


class StorageUnavailable(StorageError):
    """The database could not be reached: the connection was refused, lost or reset, or
    the server is shutting down or starting up (`storage.database.is_unavailable`). A store
    opened with a wait retries the call until the database is back (`--storage-wait`)."""


class DataError(UserError):
    """A data set is missing, corrupt or malformed."""


class RejectedInARow(UserError):
    """A study's proposer proposed only what may not train (over the budget, breaking a
    shape rule) too many times in a row: the space or the budget leaves nothing to train."""


MAX_ERROR_CHARS = 500  # the longest one-line error stored or printed


def one_line(exc: BaseException, *, with_type: bool = False, limit: int = MAX_ERROR_CHARS) -> str:
    """The error's message on one line: its lines joined, runs of whitespace made one space.

    A SQLAlchemy error is read through to the driver's own error (`exc.orig`), without
    SQLAlchemy's wrapping. With `with_type`, the exception's class name comes first
    ("ValueError: bad shape"). An empty message gives the class name alone; the text is
    cut to `limit` characters (ending in "...").
    """
    orig = getattr(exc, "orig", None)
    err = orig if isinstance(orig, BaseException) else exc
    text = " ".join(str(err).split())
    name = type(err).__name__
    msg = (f"{name}: {text}" if with_type else text) if text else name
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."
