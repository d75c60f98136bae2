"""approvals: Approval steps waiting for a decision (whom they ask, until when, who decided)

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approvals",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("step_id", sa.String(100), nullable=False),
        sa.Column("approvers", JSONB(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decision", sa.String(20), nullable=True),
        sa.Column("decided_by", sa.String(320), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("run_id", "step_id", name="uq_approvals_run_step"),
    )
    op.create_index("ix_approvals_konnect_id", "approvals", ["konnect_id"])
    op.create_index("ix_approvals_owner_id", "approvals", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_approvals_owner_id", table_name="approvals")
    op.drop_index("ix_approvals_konnect_id", table_name="approvals")
    op.drop_table("approvals")
