"""flows: folders, a konnect's folder, indexes for the flow list, history and task logs

Revision ID: 0003
Revises: 0006
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "folders",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_folders_owner_id", "folders", ["owner_id", "id"])
    # Removing a folder returns its flows to Home (folder_id NULL).
    op.add_column(
        "konnects",
        sa.Column("folder_id", sa.BigInteger(), sa.ForeignKey("folders.id", ondelete="SET NULL"), nullable=True),
    )
    # The flow list (all, Home or one folder), newest first; the folder FK for ON DELETE SET NULL.
    op.create_index("ix_konnects_owner_created", "konnects", ["owner_id", "created_at", "id"])
    op.create_index("ix_konnects_owner_folder_created", "konnects", ["owner_id", "folder_id", "created_at", "id"])
    op.create_index("ix_konnects_folder_id", "konnects", ["folder_id"])
    # Task logs of one konnect by type and date, and per-konnect Success/Error counts from the index alone.
    op.create_index(
        "ix_task_logs_owner_konnect_status_date", "task_logs", ["owner_id", "konnect_id", "status", "task_date", "id"]
    )
    # All task logs of an owner by date.
    op.create_index("ix_task_logs_owner_date", "task_logs", ["owner_id", "task_date", "id"])
    op.create_index("ix_task_logs_konnect_id", "task_logs", ["konnect_id"])


def downgrade() -> None:
    op.drop_index("ix_task_logs_konnect_id", table_name="task_logs")
    op.drop_index("ix_task_logs_owner_date", table_name="task_logs")
    op.drop_index("ix_task_logs_owner_konnect_status_date", table_name="task_logs")
    op.drop_index("ix_konnects_folder_id", table_name="konnects")
    op.drop_index("ix_konnects_owner_folder_created", table_name="konnects")
    op.drop_index("ix_konnects_owner_created", table_name="konnects")
    op.drop_column("konnects", "folder_id")
    op.drop_index("ix_folders_owner_id", table_name="folders")
    op.drop_table("folders")
