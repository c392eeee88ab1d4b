"""Waiting for a database that went away (a restart, a failover): which errors mean
"unreachable", and the retry loop every `Store` call runs in.

A store opened with `wait_s > 0` (`search run --storage-wait S`, default 300 s: core/limits.py) retries a
call that failed because the database could not be reached, with backoff, until the
database is back or `wait_s` seconds have passed since it went away; then the call raises
`StorageUnavailable` as it would have at once. It says one line on stderr when the
database goes away and one when it is back. Opening a store never waits: a wrong URL
fails at once.

A retried call must be safe to run twice: the first try may have committed before its
connection dropped (the answer to COMMIT lost). Each write is idempotent (a finished
trial is replaced, an UPDATE only touches rows still in the old state) or checks before it
writes again: a call that adds a row is given a token once, outside the retries
(`waits(once=...)`), and a retry that finds its token's row returns it instead of adding
a second one.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO, TypeVar

from sqlalchemy.exc import DBAPIError

from core.errors import StorageUnavailable, UserError, one_line
from core.limits import DEFAULT_STORAGE_WAIT_S

FIRST_PAUSE_S = 0.25  # the first pause before a retry; it doubles up to MAX_PAUSE_S
MAX_PAUSE_S = 1.0  # a database back is found within a second; a try a second costs it nothing
# PostgreSQL's SQLSTATEs of a lost or refused connection besides class 08 (connection
# exception): the server shut down by an administrator, crashed, or is starting up.
UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})

F = TypeVar("F", bound=Callable[..., Any])
_depth = threading.local()  # calls of this thread inside a waiting call: only the outermost retries


def check_wait(value: Any) -> float:
    """`--storage-wait`'s seconds (its default, DEFAULT_STORAGE_WAIT_S, when None): a
    finite number, 0 or more; UserError (one line) otherwise."""
    if value is None:
        return DEFAULT_STORAGE_WAIT_S
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UserError(f"--storage-wait must be a number of seconds, 0 or more, got {value!r}")
    return float(value)


def new_token() -> str:
    """A fresh write token (32 hex digits): the row a retried call may have added already."""
    return uuid.uuid4().hex


def is_unavailable(exc: BaseException, dialect: str) -> bool:
    """Whether `exc` (a SQLAlchemy error) means the database could not be reached: the
    connection was refused, lost or reset, or the server is shutting down or starting up.
    A refused write, a bad query or SQLite's lock is not (SQLite is a file: it cannot go
    away)."""
    if dialect == "sqlite" or not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    state = _sqlstate(exc.orig)
    if state is not None:
        return state.startswith("08") or state in UNAVAILABLE_SQLSTATES
    return type(exc.orig).__name__ in ("OperationalError", "InterfaceError")  # refused, reset, closed


def _sqlstate(orig: Any) -> str | None:
    """The driver error's SQLSTATE (psycopg 3: sqlstate, psycopg2: pgcode), None if none."""
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return str(state) if state else None


class Outage:
    """One database's state of absence, shared by the threads of a store: when it went
    away, and the lines said about it. A dropped connection that the first retry
    replaces is not reported; from the second failure in a row, one line says the
    database is away and one, later, that it is back."""

    def __init__(self, shown: str, wait_s: float, err: TextIO | None = None) -> None:
        self.shown, self.wait_s, self._err = shown, float(wait_s), err
        self._lock = threading.Lock()
        self.since: float | None = None  # time.monotonic() when it went away; None: up
        self._at: datetime | None = None  # the wall-clock time it went away (said in the line)
        self._failures = 0  # failed tries since then
        self.gone = 0  # outages so far, reported or not (the tests read it)
        self.reported = 0  # outages reported (a line when it went, one when it came back)

    def went_away(self, exc: BaseException) -> float:
        """Note a failed try; return the monotonic deadline of the wait."""
        with self._lock:
            if self.since is None:
                self.since, self._failures, self._at = time.monotonic(), 0, datetime.now()
                self.gone += 1
            self._failures += 1
            if self._failures == 2:
                self.reported += 1
                cause = exc.__cause__ or exc  # the driver's words, without our "storage error in URL"
                self._say(
                    f"the database '{self.shown}' is unreachable since {self._at:%H:%M:%S} "
                    f"({one_line(cause, limit=160)}); waiting up to {self.wait_s:g} s for it (--storage-wait); "
                    "trials in flight go on training"
                )
            return self.since + self.wait_s

    def back(self) -> None:
        """Note a transaction that reached the database (Database._session)."""
        if self.since is None:  # the common case, without the lock
            return
        with self._lock:
            if self.since is not None:
                if self._failures >= 2:
                    self._say(f"the database is back after {time.monotonic() - self.since:.1f} s")
                self.since = None

    def _say(self, text: str) -> None:
        print(f"storage: {datetime.now().strftime('%H:%M:%S')} {text}", file=self._err or sys.stderr, flush=True)


def waits(once: dict[str, Callable[[], Any]] | None = None) -> Callable[[F], F]:
    """Decorate a `Database` method: run it in `self._outage`'s retry loop (see the module
    docstring). `once` names keyword arguments given a value from its factory once per
    call, before the first try, when the caller gave none: the token a retry recognises
    its own earlier write by."""

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            for name, make in (once or {}).items():
                if kwargs.get(name) is None:
                    kwargs[name] = make()
            return retrying(self._outage, lambda: method(self, *args, **kwargs))

        wrapper.waits = True  # type: ignore[attr-defined]  # tests/storage/test_waiting.py lists the methods
        return wrapper  # type: ignore[return-value]

    return decorate


def retrying(outage: Outage | None, step: Callable[[], Any]) -> Any:
    """step(), retried while it raises `StorageUnavailable` until `outage.wait_s` seconds
    have passed since the database went away (at once without an outage or a wait, and
    inside another waiting call of this thread, which does the retrying)."""
    depth = getattr(_depth, "n", 0)
    if outage is None or outage.wait_s <= 0 or depth:
        return step()
    _depth.n = depth + 1
    try:
        pause = FIRST_PAUSE_S
        while True:
            try:
                out = step()
            except StorageUnavailable as exc:
                deadline = outage.went_away(exc)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StorageUnavailable(f"{exc} (unreachable for {outage.wait_s:g} s, --storage-wait)") from exc
                time.sleep(min(pause, left))
                pause = min(2 * pause, MAX_PAUSE_S)
                continue
            return out
    finally:
        _depth.n = depth
