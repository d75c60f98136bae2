"""initial schema: users, apps, konnects, task logs, captcha uses

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

J = postgresql.JSONB()
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("first_name", sa.String(100), nullable=False),
        sa.Column("last_name", sa.String(100), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("email_verified_at", TS),
        sa.Column("verification_digest", sa.String(64)),
        sa.Column("verification_expires_at", TS),
        sa.Column("current_plan", sa.String(50), nullable=False),
        sa.Column("preferred_language", sa.String(10), nullable=False),
        sa.Column("country", sa.String(100)),
        sa.Column("timezone", sa.String(64)),
        sa.Column("image_url", sa.Text()),
        sa.Column("task_limit", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_users_email", "users", ["email"], unique=True)
    op.create_index("ix_users_verification_digest", "users", ["verification_digest"])

    apps = op.create_table(
        "apps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("provider", sa.String(100), nullable=False, unique=True),
        sa.Column("app_type", sa.String(30), nullable=False),
        sa.Column("auth_type", sa.String(30)),
        sa.Column("image_url", sa.Text()),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("can_trigger", sa.Boolean(), nullable=False),
        sa.Column("can_act", sa.Boolean(), nullable=False),
        sa.Column("is_add_on", sa.Boolean(), nullable=False),
    )
    op.bulk_insert(
        apps,
        [
            {"id": 1, "name": "Webhook", "provider": "webhook", "app_type": "WEBHOOK", "auth_type": None,
             "image_url": "/apps/webhook.svg", "status": "Active", "can_trigger": True, "can_act": False,
             "is_add_on": False},
            {"id": 2, "name": "API Call", "provider": "api", "app_type": "ADD_ON", "auth_type": None,
             "image_url": "/apps/api.svg", "status": "Active", "can_trigger": False, "can_act": True,
             "is_add_on": True},
        ],
    )
    op.execute("SELECT setval(pg_get_serial_sequence('apps', 'id'), 100)")

    op.create_table(
        "konnects",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("konnect_name", sa.String(255), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("canvas_json", J, nullable=False),
        sa.Column("webhook_token", sa.String(64), nullable=False, unique=True),
        sa.Column("published_spec", J),
        sa.Column("published_at", TS),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_konnects_owner_id", "konnects", ["owner_id"])

    op.create_table(
        "task_logs",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False, unique=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("konnect_id", sa.BigInteger(), sa.ForeignKey("konnects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("task_date", TS, nullable=False),
        sa.Column("data", J, nullable=False),
    )
    op.create_index("ix_task_logs_owner_konnect_date", "task_logs", ["owner_id", "konnect_id", "task_date"])

    op.create_table(
        "tasks",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("task_log_id", sa.BigInteger(), sa.ForeignKey("task_logs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("step_id", sa.String(100), nullable=False),
        sa.Column("app_name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("task_date", TS, nullable=False),
        sa.Column("data", J, nullable=False),
    )
    op.create_index("ix_tasks_task_log_id", "tasks", ["task_log_id"])

    op.create_table(
        "captcha_uses",
        sa.Column("signature", sa.String(128), primary_key=True),
        sa.Column("expires_at", TS, nullable=False),
    )
    op.create_index("ix_captcha_uses_expires_at", "captcha_uses", ["expires_at"])


def downgrade() -> None:
    for table in ("captcha_uses", "tasks", "task_logs", "konnects", "apps", "users"):
        op.drop_table(table)
