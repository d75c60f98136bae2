"""delivery: a run's attempts and the run it replays, on its task log

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("task_logs", sa.Column("attempts", sa.Integer(), nullable=False, server_default="1"))
    op.add_column("task_logs", sa.Column("replay_of", sa.String(64)))
    op.create_index("ix_task_logs_replay_of", "task_logs", ["replay_of"])


def downgrade() -> None:
    op.drop_index("ix_task_logs_replay_of", table_name="task_logs")
    op.drop_column("task_logs", "replay_of")
    op.drop_column("task_logs", "attempts")
