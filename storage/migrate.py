"""Bring a database to the schema head with alembic, run from code (no alembic.ini).

Opening a store must be fast, so `ensure_schema` first reads `alembic_version` with one
query and only loads alembic when the database is empty or behind. To change the
schema: edit storage/schema.py, add migrations/versions/NNNN_*.py (see alembic.ini for
the autogenerate command) and set SCHEMA_HEAD to its revision id.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from core.errors import StorageError, one_line

if TYPE_CHECKING:  # alembic is imported only when the schema must change
    from alembic.config import Config
    from alembic.script import ScriptDirectory

# The newest revision in migrations/versions (a test checks it against alembic).
SCHEMA_HEAD = "0009"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def current_version(conn: Connection) -> str | None:
    """The database's alembic revision; None when it has none (empty database)."""
    try:
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except DBAPIError:
        conn.rollback()
        return None
    return rows[0][0] if rows else None


def ensure_schema(engine: Engine, shown_url: str) -> None:
    """Create or upgrade the schema to SCHEMA_HEAD; cheap when already there."""
    with engine.connect() as conn:
        if current_version(conn) == SCHEMA_HEAD:
            return
    try:
        _upgrade(engine, shown_url)
    except SQLAlchemyError as exc:
        # Another process may have created the schema at the same time.
        with engine.connect() as conn:
            if current_version(conn) == SCHEMA_HEAD:
                return
        raise StorageError(f"cannot create or upgrade the schema of '{shown_url}': {one_line(exc)}") from exc


def known_revisions() -> set[str]:
    """Every revision id in migrations/versions."""
    return {rev.revision for rev in _script().walk_revisions()}


def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def _config(conn: Connection | None = None) -> Config:
    """An alembic config built in code, running migrations on `conn` when given."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


def _upgrade(engine: Engine, shown_url: str) -> None:
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        try:
            _upgrade_on(conn, sqlite, shown_url)
        finally:
            if sqlite:
                conn.rollback()
                conn.exec_driver_sql("PRAGMA foreign_keys = ON")


def _upgrade_on(conn: Connection, sqlite: bool, shown_url: str) -> None:
    from alembic import command

    if sqlite:
        # Off while a batch migration copies a table and drops the old one (SQLite cannot
        # alter a CHECK): the drop would cascade-delete the rows of the tables that
        # reference it. The pragma is a no-op inside a transaction, so it is set before
        # BEGIN, and set back on (in _upgrade) before the connection is pooled again.
        conn.exec_driver_sql("PRAGMA foreign_keys = OFF")
        # Take the write lock first, so two processes do not both create tables.
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    # Not current_version: a failed query would end the locking transaction.
    version = current_version(conn) if inspect(conn).has_table("alembic_version") else None
    if version == SCHEMA_HEAD:
        conn.commit()
        return
    if version is not None and version not in known_revisions():
        conn.rollback()
        raise StorageError(
            f"the database '{shown_url}' has schema version {version!r}, newer than "
            f"this program knows (up to {SCHEMA_HEAD!r}); upgrade shape-search"
        )
    command.upgrade(_config(conn), "head")
    conn.commit()
