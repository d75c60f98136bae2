"""konnects.resource_uid: the Kubernetes UID of the Konnect resource a flow follows

Recorded when the api creates the flow's Konnect (publish) or imports one applied with kubectl; the
cluster sync follows only that resource, and the credential broker accepts only tokens bound to it
(konnectz_contracts.broker_token). NULL: no resource yet (or the local deployer); a Published flow
from before this column records its resource when the cluster sync first sees it. See
docs/security.md.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("konnects", sa.Column("resource_uid", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("konnects", "resource_uid")
