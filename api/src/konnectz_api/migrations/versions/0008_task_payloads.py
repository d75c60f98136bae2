"""large task-log payloads in their own table (with retention), trace id of each run

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"  # written on "0005"; chained after delivery's 0007 when merging it
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("task_logs", sa.Column("trace_id", sa.String(32)))
    op.create_table(
        "task_payloads",
        sa.Column(
            "task_log_id", sa.BigInteger(), sa.ForeignKey("task_logs.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    )
    op.create_index("ix_task_payloads_created_at", "task_payloads", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_task_payloads_created_at", table_name="task_payloads")
    op.drop_table("task_payloads")
    op.drop_column("task_logs", "trace_id")
