"""task_logs.called_by and task_logs.calls: Call a flow links a caller's run and the runs it called

``called_by``: the run (flow, run id, step) that called this run, when another flow's Call a Flow step
started it; ``calls``: the runs this run's Call a Flow steps started (step id, run id, flow id and name).
Task logs stored before these columns hold NULL.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("task_logs", sa.Column("called_by", JSONB(), nullable=True))
    op.add_column("task_logs", sa.Column("calls", JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("task_logs", "calls")
    op.drop_column("task_logs", "called_by")
