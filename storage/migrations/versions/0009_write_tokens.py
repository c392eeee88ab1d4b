"""write tokens: a trial or retraining row names the call that added it, so that a write
retried after its connection dropped (the answer to COMMIT lost) finds its row instead of
adding a second one (storage/waiting.py)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("trials", "retrainings"):
        op.add_column(table, sa.Column("token", sa.String(32), nullable=True))
        op.create_index(op.f(f"ix_{table}_token"), table, ["token"], unique=True)


def downgrade() -> None:
    for table in ("trials", "retrainings"):
        op.drop_index(op.f(f"ix_{table}_token"), table_name=table)
        op.drop_column(table, "token")
