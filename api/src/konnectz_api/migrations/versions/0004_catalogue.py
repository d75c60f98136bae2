"""catalogue: apps come from manifests (the apps table goes), app accounts, OAuth2 states

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.drop_table("apps")
    op.create_table(
        "app_accounts",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("app_id", sa.Integer(), nullable=False),
        sa.Column("app_key", sa.String(100), nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("credentials", sa.Text(), nullable=False),
        sa.Column("token_expires_at", TS),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_app_accounts_owner_app", "app_accounts", ["owner_id", "app_id"])
    op.create_table(
        "oauth_states",
        sa.Column("nonce", sa.String(64), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("app_id", sa.Integer(), nullable=False),
        sa.Column("app_account_id", sa.BigInteger()),
        sa.Column("redirect_url", sa.Text(), nullable=False),
        sa.Column("verifier", sa.Text(), nullable=False),
        sa.Column("expires_at", TS, nullable=False),
    )
    op.create_index("ix_oauth_states_expires_at", "oauth_states", ["expires_at"])


def downgrade() -> None:
    op.drop_table("oauth_states")
    op.drop_table("app_accounts")
    op.create_table(
        "apps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("provider", sa.String(100), nullable=False, unique=True),
        sa.Column("app_type", sa.String(30), nullable=False),
        sa.Column("auth_type", sa.String(30)),
        sa.Column("image_url", sa.Text()),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("can_trigger", sa.Boolean(), nullable=False),
        sa.Column("can_act", sa.Boolean(), nullable=False),
        sa.Column("is_add_on", sa.Boolean(), nullable=False),
    )
