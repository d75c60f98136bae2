"""tasks.started_at: when a step started (the task log shows each step's duration)

Tasks stored before this column hold NULL (their duration is unknown).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("tasks", "started_at")
