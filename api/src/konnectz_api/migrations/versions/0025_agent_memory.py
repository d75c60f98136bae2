"""agent_memory: the AI Agent step's conversations (one row per turn: its messages, tool calls included)

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_memory",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("conversation", sa.String(64), nullable=False),
        sa.Column("turn_key", sa.String(64), nullable=False),
        sa.Column("messages", JSONB(), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("konnect_id", "turn_key", name="uq_agent_memory_turn"),
    )
    op.create_index("ix_agent_memory_conversation", "agent_memory", ["konnect_id", "conversation", "id"])
    op.create_index("ix_agent_memory_owner_id", "agent_memory", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_agent_memory_owner_id", table_name="agent_memory")
    op.drop_index("ix_agent_memory_conversation", table_name="agent_memory")
    op.drop_table("agent_memory")
