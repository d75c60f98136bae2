from alembic import context
from sqlalchemy import create_engine

from konnectz_api.core.config import get_settings
from konnectz_api.models import Base

config = context.config
url = config.get_main_option("sqlalchemy.url") or get_settings().database_url
connectable = create_engine(url)
with connectable.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()
