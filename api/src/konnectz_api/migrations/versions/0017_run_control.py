"""task_logs.cancelled_by: who cancelled a run (its status is then CANCELLED)

Task logs stored before this column hold NULL.

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("task_logs", sa.Column("cancelled_by", sa.String(320), nullable=True))


def downgrade() -> None:
    op.drop_column("task_logs", "cancelled_by")
