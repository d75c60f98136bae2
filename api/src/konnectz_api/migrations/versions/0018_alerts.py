"""failure_alerts: a flow's failure-alert digest (last alert, failures counted since)

Revision ID: 0019
Revises: 0017
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "failure_alerts",
        sa.Column(
            "konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("last_alert_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pending", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("pending_since", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_failure_alerts_owner_id", "failure_alerts", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_failure_alerts_owner_id", table_name="failure_alerts")
    op.drop_table("failure_alerts")
