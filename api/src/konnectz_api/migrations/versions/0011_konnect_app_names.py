"""konnects.app_names: the trigger and action app names the lists show, derived from canvas_json

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from konnectz_api.compile.plan import konnect_app_names

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

BATCH = 1000


def upgrade() -> None:
    op.add_column("konnects", sa.Column("app_names", postgresql.JSONB(), nullable=True))
    # Derive it for the flows there are, in batches (readers derive it themselves while it is NULL).
    conn = op.get_bind()
    table = sa.table("konnects", sa.column("id", sa.BigInteger), sa.column("canvas_json", postgresql.JSONB))
    names = sa.table("konnects", sa.column("id", sa.BigInteger), sa.column("app_names", postgresql.JSONB))
    after = 0
    while True:
        rows = conn.execute(
            sa.select(table.c.id, table.c.canvas_json).where(table.c.id > after).order_by(table.c.id).limit(BATCH)
        ).all()
        if not rows:
            break
        conn.execute(
            sa.update(names).where(names.c.id == sa.bindparam("kid")).values(app_names=sa.bindparam("names")),
            [{"kid": kid, "names": konnect_app_names(canvas)} for kid, canvas in rows],
        )
        after = rows[-1][0]


def downgrade() -> None:
    op.drop_column("konnects", "app_names")
