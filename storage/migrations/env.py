"""Alembic environment, run by `storage.migrate` with a connection in
`config.attributes["connection"]`; no alembic.ini is needed at runtime. Without a
connection it uses the config's `sqlalchemy.url` (online) or prints SQL (offline)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from storage.schema import Base

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # ALTER TABLE on SQLite
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif (connection := config.attributes.get("connection")) is not None:
    _run(connection)
else:
    engine = create_engine(config.get_main_option("sqlalchemy.url"))  # type: ignore[arg-type]
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
