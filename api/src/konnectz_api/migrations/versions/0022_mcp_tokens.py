"""mcp_tokens: the tokens MCP clients send to /mcp, each scoped to chosen flows of an account

Only the token's SHA-256 is stored (``token_hash``) with its first characters for display
(``prefix``); ``konnect_ids`` lists the flows it reaches. See docs/mcp.md.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_tokens",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_by", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("konnect_ids", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_mcp_tokens_owner_id", "mcp_tokens", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_mcp_tokens_owner_id", table_name="mcp_tokens")
    op.drop_table("mcp_tokens")
