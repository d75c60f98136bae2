"""namespace_bindings: Kubernetes namespaces an administrator bound to a Konnectz account

A Konnect applied with kubectl (or a GitOps tool) is imported only from a bound namespace, for the
bound account's owner or a member who may publish there (konnectz_api.crud.namespace_bindings).

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "namespace_bindings",
        sa.Column("namespace", sa.String(63), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("source", sa.String(20), nullable=False, server_default="administrator"),
        sa.Column("bound_by", sa.BigInteger(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("bound_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.CheckConstraint("source IN ('administrator', 'environment')", name="ck_namespace_bindings_source"),
    )
    op.create_index("ix_namespace_bindings_owner_id", "namespace_bindings", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_namespace_bindings_owner_id", table_name="namespace_bindings")
    op.drop_table("namespace_bindings")
