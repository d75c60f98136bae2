"""users.session_version (tokens carry it: a password change, reset ends every earlier token) and
task_logs.replayed_as / replays (a failed run is replayed once unless a new replay is asked for)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("session_version", sa.Integer(), nullable=False, server_default="0"))
    # Tokens issued before this revision carry no version (read as 0). A user who changed or reset the
    # password before had older tokens ended by the issue-time cutoff, which is no longer checked: start
    # them at 1, so no token from before that change comes back (they sign in once more).
    op.execute("UPDATE users SET session_version = 1 WHERE tokens_valid_after IS NOT NULL")
    op.add_column("task_logs", sa.Column("replayed_as", sa.String(64), nullable=True))
    op.add_column("task_logs", sa.Column("replays", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("task_logs", "replays")
    op.drop_column("task_logs", "replayed_as")
    op.drop_column("users", "session_version")
