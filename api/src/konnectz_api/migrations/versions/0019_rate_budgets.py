"""app_accounts.rate_limit_rps: the owner's rate budget override of an app account (requests/second)

NULL: the app's own rate (its manifest's rate_limit.requests_per_second). The runners enforce the
budget through the KZ_BUDGETS bucket (konnectz_runner.apps.budgets); see docs/rate-budgets.md.

Revision ID: 0018
Revises: 0015
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("app_accounts", sa.Column("rate_limit_rps", sa.Float(), nullable=True))
    op.create_check_constraint(
        "ck_app_accounts_rate_limit_rps",
        "app_accounts",
        "rate_limit_rps IS NULL OR (rate_limit_rps >= 0.01 AND rate_limit_rps <= 1000)",
    )


def downgrade() -> None:
    op.drop_constraint("ck_app_accounts_rate_limit_rps", "app_accounts", type_="check")
    op.drop_column("app_accounts", "rate_limit_rps")
