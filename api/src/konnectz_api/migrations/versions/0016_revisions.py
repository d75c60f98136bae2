"""konnect_revisions: every successful publish kept as an immutable revision

One row per publish (canvas and compiled flow spec, message, who, when, restored_from);
konnects.live_revision names the one running; task_logs.revision the revision a run executed.
Konnects published before this migration get their first revision on their next publish.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "konnect_revisions",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("canvas_json", postgresql.JSONB(), nullable=False),
        sa.Column("spec", postgresql.JSONB(), nullable=False),
        sa.Column("message", sa.String(500), nullable=False, server_default=""),
        sa.Column("published_by", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("published_by_email", sa.String(320), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("restored_from", sa.Integer(), nullable=True),
        sa.UniqueConstraint("konnect_id", "number", name="uq_konnect_revisions_konnect_number"),
    )
    op.create_index("ix_konnect_revisions_owner_id", "konnect_revisions", ["owner_id"])
    op.add_column("konnects", sa.Column("live_revision", sa.Integer(), nullable=True))
    op.add_column("task_logs", sa.Column("revision", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("task_logs", "revision")
    op.drop_column("konnects", "live_revision")
    op.drop_index("ix_konnect_revisions_owner_id", table_name="konnect_revisions")
    op.drop_table("konnect_revisions")
