"""account: password reset tokens, token revocation, login throttling, tasks consumed

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("reset_password_digest", sa.String(64)))
    op.add_column("users", sa.Column("reset_password_expires_at", sa.DateTime(timezone=True)))
    op.create_index("ix_users_reset_password_digest", "users", ["reset_password_digest"], unique=True)
    op.add_column("users", sa.Column("tokens_valid_after", sa.DateTime(timezone=True)))
    op.add_column("users", sa.Column("task_consumed", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_table(
        "revoked_tokens",
        sa.Column("jti", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_revoked_tokens_expires_at", "revoked_tokens", ["expires_at"])
    op.create_table(
        "login_throttle",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("login_throttle")
    op.drop_index("ix_revoked_tokens_expires_at", table_name="revoked_tokens")
    op.drop_table("revoked_tokens")
    op.drop_column("users", "task_consumed")
    op.drop_column("users", "tokens_valid_after")
    op.drop_index("ix_users_reset_password_digest", table_name="users")
    op.drop_column("users", "reset_password_expires_at")
    op.drop_column("users", "reset_password_digest")
