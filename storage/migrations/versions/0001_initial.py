"""initial schema: studies, trials, trial_metrics, runs, epochs

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATUSES = "'running', 'complete', 'failed', 'diverged', 'interrupted', 'rejected'"


def _utc() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("task", sa.String(255), nullable=False),
        sa.Column("families", sa.JSON(), nullable=False),
        sa.Column("metric", sa.String(128), nullable=False),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("budget", sa.BigInteger(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.CheckConstraint("direction IN ('maximize', 'minimize')", name=op.f("ck_studies_direction")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_studies")),
        sa.UniqueConstraint("name", name=op.f("uq_studies_name")),
    )
    op.create_table(
        "trials",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("family", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("params", sa.BigInteger(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("d_z", sa.Integer(), nullable=True),
        sa.Column("d_h", sa.Integer(), nullable=True),
        sa.Column("L", sa.Integer(), nullable=True),
        sa.Column("objective", sa.Float(), nullable=True),
        sa.Column("seeds", sa.JSON(), nullable=False),
        sa.Column("optuna", sa.JSON(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("traceback", sa.Text(), nullable=True),
        sa.Column("device", sa.String(64), nullable=True),
        sa.Column("started_at", _utc(), nullable=True),
        sa.Column("finished_at", _utc(), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.CheckConstraint(f"status IN ({STATUSES})", name=op.f("ck_trials_status")),
        sa.ForeignKeyConstraint(
            ["study_id"], ["studies.id"], name=op.f("fk_trials_study_id_studies"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trials")),
        sa.UniqueConstraint("study_id", "number", name=op.f("uq_trials_study_id_number")),
    )
    op.create_index(op.f("ix_trials_study_id"), "trials", ["study_id"])
    op.create_table(
        "trial_metrics",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trial_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("mean", sa.Float(), nullable=True),
        sa.Column("std", sa.Float(), nullable=True),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["trial_id"], ["trials.id"], name=op.f("fk_trial_metrics_trial_id_trials"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trial_metrics")),
        sa.UniqueConstraint("trial_id", "name", name=op.f("uq_trial_metrics_trial_id_name")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trial_id", sa.Integer(), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("best_epoch", sa.Integer(), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["trial_id"], ["trials.id"], name=op.f("fk_runs_trial_id_trials"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("trial_id", "repeat", name=op.f("uq_runs_trial_id_repeat")),
    )
    op.create_table(
        "epochs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("train_loss", sa.Float(), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("elapsed_s", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_epochs_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_epochs")),
    )
    op.create_index(op.f("ix_epochs_run_id"), "epochs", ["run_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_epochs_run_id"), table_name="epochs")
    op.drop_table("epochs")
    op.drop_table("runs")
    op.drop_table("trial_metrics")
    op.drop_index(op.f("ix_trials_study_id"), table_name="trials")
    op.drop_table("trials")
    op.drop_table("studies")
