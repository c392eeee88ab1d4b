"""Ad-hoc read-only SQL (`search sql`): checked statically, run read-only, rolled back."""
from __future__ import annotations

from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.errors import StorageError, one_line
from storage.engine import Database
from storage.readonly import check_readonly


class ReadonlySQL(Database):
    def query_readonly(
        self, sql: str, limit: int | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one read-only SQL statement; return (column names, rows).

        Writes are refused before execution (see `storage.readonly`), and the
        statement runs in a read-only transaction that is always rolled back.
        """
        statement = check_readonly(sql, self.dialect)
        try:
            conn = self._engine.connect()
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot open storage '{self._shown}': {one_line(exc)}") from exc
        try:
            if self.dialect == "sqlite":
                conn.exec_driver_sql("PRAGMA query_only = ON")
            elif self.dialect == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
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
            raise StorageError(one_line(exc)) from exc
        finally:
            try:
                conn.rollback()
                if self.dialect == "sqlite":
                    conn.exec_driver_sql("PRAGMA query_only = OFF")
                    conn.rollback()
            except SQLAlchemyError:
                conn.invalidate()  # never hand a read-only connection back to the pool
            conn.close()
