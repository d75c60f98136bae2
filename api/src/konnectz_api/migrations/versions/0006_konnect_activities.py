"""konnect activities: the Test & Review result of each node of a konnect

Revision ID: 0006
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "konnect_activities",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("node_id", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(50), nullable=False),
        sa.Column("app_name", sa.String(200), nullable=False, server_default=""),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("display_message", sa.Text(), nullable=False, server_default=""),
        sa.Column("input", postgresql.JSONB(), nullable=False),
        sa.Column("output", postgresql.JSONB()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("konnect_id", "node_id", name="uq_konnect_activities_konnect_node"),
    )
    op.create_index("ix_konnect_activities_owner_id", "konnect_activities", ["owner_id"])


def downgrade() -> None:
    op.drop_table("konnect_activities")
