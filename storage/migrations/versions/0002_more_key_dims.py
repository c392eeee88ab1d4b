"""key-dimension columns of the transformer, mixer, Han and L-MLP families

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

NEW_DIMS = ("d_model", "K", "n_heads", "S", "C", "patch", "depth", "D", "width")


def upgrade() -> None:
    with op.batch_alter_table("trials") as batch:
        for name in NEW_DIMS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("trials") as batch:
        for name in reversed(NEW_DIMS):
            batch.drop_column(name)
