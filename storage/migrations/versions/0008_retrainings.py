"""retrainings (`search train`): a trial's configuration trained again, its runs beside the search's

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

STATUSES = "'running', 'complete', 'failed', 'diverged', 'interrupted', 'rejected', 'pruned'"


def upgrade() -> None:
    op.create_table(
        "retrainings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trial_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("device", sa.String(64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.CheckConstraint(f"status IN ({STATUSES})", name=op.f("ck_retrainings_status")),
        sa.ForeignKeyConstraint(
            ["trial_id"], ["trials.id"], name=op.f("fk_retrainings_trial_id_trials"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_retrainings")),
        sa.UniqueConstraint("trial_id", "number", name=op.f("uq_retrainings_trial_id_number")),
    )
    op.create_index(op.f("ix_retrainings_trial_id"), "retrainings", ["trial_id"], unique=False)
    with op.batch_alter_table("runs") as batch:  # SQLite: copy and move (the unique key changes)
        batch.add_column(sa.Column("retraining", sa.Integer(), nullable=False, server_default="0"))
        batch.drop_constraint(op.f("uq_runs_trial_id_repeat"), type_="unique")
        batch.create_unique_constraint(op.f("uq_runs_trial_id_retraining_repeat"), ["trial_id", "retraining", "repeat"])


def downgrade() -> None:
    op.execute("DELETE FROM epochs WHERE run_id IN (SELECT id FROM runs WHERE retraining <> 0)")
    op.execute("DELETE FROM run_artifacts WHERE run_id IN (SELECT id FROM runs WHERE retraining <> 0)")
    op.execute("DELETE FROM runs WHERE retraining <> 0")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("uq_runs_trial_id_retraining_repeat"), type_="unique")
        batch.create_unique_constraint(op.f("uq_runs_trial_id_repeat"), ["trial_id", "repeat"])
        batch.drop_column("retraining")
    op.drop_index(op.f("ix_retrainings_trial_id"), table_name="retrainings")
    op.drop_table("retrainings")
