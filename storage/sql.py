"""Ad-hoc read-only SQL (`search sql`): checked statically, run read-only, rolled back,
and stopped after a time limit (a recursive CTE or a huge blob must not run until killed)."""

from __future__ import annotations

import math
import sqlite3
import time
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.errors import StorageError, one_line
from core.limits import SQL_TIMEOUT_S
from storage.database import Database
from storage.readonly import check_readonly

# SQLite: the longest string or blob a query may build (randomblob(1e9) fails at once).
MAX_VALUE_BYTES = 64 * 2**20
_SQLITE_CHECK_EVERY = 10_000  # virtual-machine steps between two looks at the clock


def _timed_out(exc: BaseException) -> bool:
    """SQLite's 'interrupted' (our progress handler) or PostgreSQL's statement timeout."""
    orig = getattr(exc, "orig", exc)
    return type(orig).__name__ == "QueryCanceled" or str(orig).strip().lower() in ("interrupted", "interrupt")


class ReadonlySQL(Database):
    def query_readonly(
        self, sql: str, limit: int | None = None, timeout_s: float = SQL_TIMEOUT_S
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one read-only SQL statement; return (column names, rows).

        Writes are refused before execution (see `storage.readonly`), and the
        statement runs in a read-only transaction that is always rolled back. It is
        stopped after `timeout_s` seconds (SQLite: a progress handler; PostgreSQL:
        `statement_timeout`), a StorageError saying so.
        """
        if not (isinstance(timeout_s, (int, float)) and math.isfinite(timeout_s) and timeout_s > 0):
            raise StorageError(f"the query timeout must be a positive number of seconds, not {timeout_s!r}")
        statement = check_readonly(sql, self.dialect)
        try:
            conn = self._engine.connect()
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot open storage '{self._shown}': {one_line(exc)}") from exc
        raw = conn.connection.driver_connection if self.dialect == "sqlite" else None
        old_length = 0
        try:
            if isinstance(raw, sqlite3.Connection):
                conn.exec_driver_sql("PRAGMA query_only = ON")
                deadline = time.monotonic() + timeout_s
                raw.set_progress_handler(lambda: int(time.monotonic() > deadline), _SQLITE_CHECK_EVERY)
                old_length = raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            elif self.dialect == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
            # no_parameters: a '%' in the query is not a placeholder for any driver
            result = conn.execution_options(no_parameters=True).exec_driver_sql(statement)
            columns = list(result.keys()) if result.returns_rows else []
            if not result.returns_rows or (limit is not None and limit <= 0):
                rows = []
            elif limit is None:
                rows = [tuple(r) for r in result.fetchall()]
            else:
                rows = [tuple(r) for r in result.fetchmany(limit)]
            result.close()
            return columns, rows
        except SQLAlchemyError as exc:
            if _timed_out(exc):
                raise StorageError(f"the query was stopped after {timeout_s:g} s (--timeout)") from exc
            raise StorageError(one_line(exc)) from exc
        finally:
            if isinstance(raw, sqlite3.Connection):
                raw.set_progress_handler(None, 0)
                if old_length:
                    raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, old_length)
            try:
                conn.rollback()
                if self.dialect == "sqlite":
                    conn.exec_driver_sql("PRAGMA query_only = OFF")
                    conn.rollback()
            except SQLAlchemyError:
                conn.invalidate()  # never hand a read-only connection back to the pool
            conn.close()
