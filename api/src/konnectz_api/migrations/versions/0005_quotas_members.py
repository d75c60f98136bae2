"""quotas and members: run reservations, team members, agency sub-accounts, audit log

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quota_reservations",
        sa.Column("run_id", sa.String(200), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tasks", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_quota_reservations_owner_id", "quota_reservations", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_quota_reservations_owner_id", table_name="quota_reservations")
    op.drop_table("quota_reservations")
