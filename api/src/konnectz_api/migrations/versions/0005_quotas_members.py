"""quotas, members, avatars: run reservations, team members, agency sub-accounts, audit log, avatars

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
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
    op.add_column("users", sa.Column("parent_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE")))
    op.create_index("ix_users_parent_id", "users", ["parent_id"])
    op.add_column("users", sa.Column("member_kind", sa.String(20)))
    op.add_column("users", sa.Column("access", sa.String(20)))
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("account_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("actor_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("actor_email", sa.String(320), nullable=False),
        sa.Column("action", sa.String(400), nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_audit_log_account_id", "audit_log", ["account_id"])
    op.create_index("ix_audit_log_created_at", "audit_log", ["created_at"])
    op.create_table(
        "avatars",
        sa.Column("user_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_avatars_token", "avatars", ["token"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_avatars_token", table_name="avatars")
    op.drop_table("avatars")
    op.drop_index("ix_audit_log_created_at", table_name="audit_log")
    op.drop_index("ix_audit_log_account_id", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_column("users", "access")
    op.drop_column("users", "member_kind")
    op.drop_index("ix_users_parent_id", table_name="users")
    op.drop_column("users", "parent_id")
    op.drop_index("ix_quota_reservations_owner_id", table_name="quota_reservations")
    op.drop_table("quota_reservations")
