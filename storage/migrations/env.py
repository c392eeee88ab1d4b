"""Alembic environment: run by `storage.migrate` with a connection in
`config.attributes["connection"]`; no alembic.ini is needed at runtime."""
from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from storage.schema import Base

config = context.config


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # ALTER TABLE on SQLite
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:  # `alembic -x` style use from a shell: the URL comes from the config
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
