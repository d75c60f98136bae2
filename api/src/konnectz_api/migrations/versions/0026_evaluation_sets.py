"""evaluation_sets: a flow's evaluations (example inputs, the checks on their outputs, the last run)

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "evaluation_sets",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("cases", JSONB(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False, server_default="1"),
        sa.Column("stop_before_effects", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("running_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run", JSONB(), nullable=True),
        sa.UniqueConstraint("konnect_id", name="uq_evaluation_sets_konnect_id"),
    )
    op.create_index("ix_evaluation_sets_owner_id", "evaluation_sets", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_evaluation_sets_owner_id", table_name="evaluation_sets")
    op.drop_table("evaluation_sets")
