"""run artifacts (files a run produced, e.g. a diffusion model's sample grid)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_artifacts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("media_type", sa.String(128), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_artifacts_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_artifacts")),
        sa.UniqueConstraint("run_id", "name", name=op.f("uq_run_artifacts_run_id_name")),
    )
    op.create_index(op.f("ix_run_artifacts_run_id"), "run_artifacts", ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_run_artifacts_run_id"), table_name="run_artifacts")
    op.drop_table("run_artifacts")
