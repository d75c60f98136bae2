"""retention cursors: where each retention job stopped, shared by the api processes

Revision ID: 0010
Revises: 0009t
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009t"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "retention_cursors",
        sa.Column("job", sa.String(40), primary_key=True),
        sa.Column("after_id", sa.BigInteger(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("retention_cursors")
