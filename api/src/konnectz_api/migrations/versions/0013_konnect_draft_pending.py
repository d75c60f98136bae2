"""konnects.draft_pending: changes saved to a Published flow wait beside the live version

Saving a Published flow no longer takes it offline: its canvas_json takes the saved changes, the
live version (published_spec) keeps running, and draft_pending says that changes wait for Publish.
Task-log statuses gain FILTERED, IN_DOUBT and REFUSED (konnectz_api.task_status); the status column
(a string of 10, no constraint) takes them as it is, so only this column is added.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("konnects", sa.Column("draft_pending", sa.Boolean(), nullable=False, server_default="false"))


def downgrade() -> None:
    op.drop_column("konnects", "draft_pending")
