"""app webhook subscriptions: the app's subscription id and the signing secret (encrypted) per konnect

Revision ID: 0009t
Revises: 0008
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0009t"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "app_webhook_subscriptions",
        sa.Column(
            "konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("app_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.BigInteger()),
        sa.Column("event", sa.String(100), nullable=False),
        sa.Column("external_id", sa.Text()),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("app_webhook_subscriptions")
