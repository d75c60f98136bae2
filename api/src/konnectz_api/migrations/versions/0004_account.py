"""account: single-use password reset tokens

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("reset_password_digest", sa.String(64)))
    op.add_column("users", sa.Column("reset_password_expires_at", sa.DateTime(timezone=True)))
    op.create_index("ix_users_reset_password_digest", "users", ["reset_password_digest"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_users_reset_password_digest", table_name="users")
    op.drop_column("users", "reset_password_expires_at")
    op.drop_column("users", "reset_password_digest")
