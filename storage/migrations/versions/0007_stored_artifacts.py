"""artifacts kept in an artifact store (a trial's weights): store, key, size, sha256

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run_artifacts") as batch:  # SQLite: copy and move (data becomes nullable)
        batch.alter_column("data", existing_type=sa.Text(), nullable=True)
        batch.add_column(sa.Column("store", sa.String(1024), nullable=True))
        batch.add_column(sa.Column("store_key", sa.String(1024), nullable=True))
        batch.add_column(sa.Column("size", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM run_artifacts WHERE data IS NULL")
    with op.batch_alter_table("run_artifacts") as batch:
        for column in ("removed_at", "sha256", "size", "store_key", "store"):
            batch.drop_column(column)
        batch.alter_column("data", existing_type=sa.Text(), nullable=False)
