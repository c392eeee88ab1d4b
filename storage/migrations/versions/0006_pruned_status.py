"""the `pruned` trial status (trials stopped early by `--pruner pareto`)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

OLD = "'running', 'complete', 'failed', 'diverged', 'interrupted', 'rejected'"
NEW = OLD + ", 'pruned'"


def upgrade() -> None:
    with op.batch_alter_table("trials") as batch:  # SQLite: copy and move; named CHECKs are reflected
        batch.drop_constraint(op.f("ck_trials_status"), type_="check")
        batch.create_check_constraint(op.f("ck_trials_status"), f"status IN ({NEW})")


def downgrade() -> None:
    op.execute("UPDATE trials SET status = 'failed' WHERE status = 'pruned'")
    with op.batch_alter_table("trials") as batch:
        batch.drop_constraint(op.f("ck_trials_status"), type_="check")
        batch.create_check_constraint(op.f("ck_trials_status"), f"status IN ({OLD})")
