"""Database engine and sessions (SQLAlchemy 2, psycopg 3).

Both pools survive a PostgreSQL restart without an error once the database is back:

- the engine (sync sessions) pings a connection when it is checked out (``pool_pre_ping``: one
  ``SELECT 1`` round trip, a fraction of a millisecond on a local database) and replaces a dead one,
  and SQLAlchemy invalidates the whole pool on a disconnect;
- the async read pool does not ping (its queries are the hot path): a query that fails with a
  connection error makes the pool check its idle connections (``AsyncConnectionPool.check``: broken
  ones are replaced) and runs once more on a fresh connection (:meth:`konnectz_api.deps.ReadScope.run`).

While the database is down, the errors are a 503 with ``Retry-After`` (:mod:`konnectz_api.errors`).
Connections are recycled after ``POOL_RECYCLE_SECONDS``.

Every wait is bounded (the settings ``db_*``, docs/concurrency.md): each connection of both pools is
opened with PostgreSQL's ``lock_timeout``, ``statement_timeout`` and
``idle_in_transaction_session_timeout``, and a request waits at most ``db_pool_timeout_seconds`` for a
connection. The synchronous engine belongs to the thread pool: :mod:`konnectz_api.core.loopguard`
watches for its use on the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from functools import lru_cache
from typing import Concatenate, ParamSpec, TypeVar

import orjson
from psycopg import AsyncConnection
from psycopg.types.json import set_json_loads
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import Engine, create_engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from konnectz_api.core.config import Settings, get_settings
from konnectz_api.core.jsontext import dumps_text
from konnectz_api.core.loopguard import guard_engine

#: Connections per api process: the thread pool runs at most 40 requests at once, and a request
#: holds one connection; 20 kept plus 20 on demand covers that without idling 40 server processes.
POOL_SIZE = 20
POOL_OVERFLOW = 20
POOL_RECYCLE_SECONDS = 1800


def server_options(settings: Settings) -> str:
    """libpq ``options``: the bounds of every wait of an api connection, set once when it opens."""
    return (
        f"-c lock_timeout={settings.db_lock_timeout_ms}"
        f" -c statement_timeout={settings.db_statement_timeout_ms}"
        f" -c idle_in_transaction_session_timeout={settings.db_idle_in_transaction_timeout_ms}"
    )


@lru_cache
def get_engine() -> Engine:
    settings = get_settings()
    engine = create_engine(
        settings.database_url,
        pool_pre_ping=True,
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
        pool_recycle=POOL_RECYCLE_SECONDS,
        pool_timeout=settings.db_pool_timeout_seconds,
        connect_args={"options": server_options(settings)},
        # JSON columns (task logs, canvases) serialised by orjson: the stored JSONB is the same, and
        # the standard library's encoder was a visible share of storing task-event batches.
        json_serializer=_json_text,
    )
    return guard_engine(engine, settings.loop_guard)


def _json_text(value: object) -> str:
    return dumps_text(value)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(get_engine(), expire_on_commit=False)


async def get_session() -> AsyncIterator[Session]:
    """A session per request. Opening one does no I/O (it connects on first use), so it is made on
    the event loop; closing it returns the connection (a ROLLBACK), which runs in the thread pool."""
    session = get_sessionmaker()()
    try:
        yield session
    finally:
        try:
            await run_in_threadpool(session.close)
        except DBAPIError as exc:
            # The reply is sent; PostgreSQL went away before the connection's ROLLBACK (a restart):
            # the pool discards that connection. One line, not a traceback after the response.
            logging.getLogger(__name__).warning("database connection lost while closing a session: %s", exc.orig)


P = ParamSpec("P")
T = TypeVar("T")


async def run_db(session: Session, fn: Callable[Concatenate[Session, P], T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Database work from async code: ``fn(session, *args, **kwargs)`` in the thread pool, in a
    transaction of its own, committed when ``fn`` returns and rolled back when it raises. So nothing
    waits on the database on the event loop, and no transaction stays open (holding its locks) across
    the caller's next ``await`` (an app call, the deployer). Objects ``fn`` loaded stay usable after
    the commit (``expire_on_commit=False``)."""

    def unit() -> T:
        try:
            result = fn(session, *args, **kwargs)
            session.commit()
        except BaseException:
            session.rollback()
            raise
        return result

    return await run_in_threadpool(unit)


def commit_only(session: Session) -> None:
    """Nothing: ``run_db(session, commit_only)`` commits what the caller changed."""


# --- the read pool: plain rows for the hot read routes ---------------------------------------
#: Connections of the async read pool per api process. Each request holds one for a query or two
#: (well under a millisecond each), so a few serve hundreds of requests per second; more would only
#: add PostgreSQL backends competing for the same cores.
READ_POOL_MIN = 4
READ_POOL_MAX = 16


def libpq_url(database_url: str) -> str:
    """The SQLAlchemy URL (``postgresql+psycopg://``) as a libpq connection string."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _configure(conn: AsyncConnection) -> None:
    set_json_loads(orjson.loads, conn)


def make_read_pool(settings: Settings) -> AsyncConnectionPool:
    """An async psycopg pool for the read routes (:mod:`konnectz_api.crud.reads`): autocommit (no
    BEGIN/ROLLBACK round trips), time zone UTC (timestamps serialise as ``…Z`` like pydantic's),
    statements prepared by psycopg after their second use on a connection, JSON parsed by orjson.
    Opened and closed by the application's lifespan."""
    return AsyncConnectionPool(
        libpq_url(settings.database_url),
        min_size=READ_POOL_MIN,
        max_size=READ_POOL_MAX,
        max_lifetime=POOL_RECYCLE_SECONDS,
        timeout=settings.db_pool_timeout_seconds,
        open=False,
        configure=_configure,
        kwargs={"autocommit": True, "prepare_threshold": 2, "options": f"-c TimeZone=UTC {server_options(settings)}"},
        name="konnectz-read",
    )
