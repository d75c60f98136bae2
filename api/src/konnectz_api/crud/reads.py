"""The hot read queries as plain rows on the async read pool (:func:`konnectz_api.db.make_read_pool`).

The flow list, the flow history, the folder list, the task logs of a flow and the dashboard stats
are what a signed-in user's pages load over and over. These functions answer them with hand-written
SQL on an async psycopg connection (prepared by psycopg after its second use, tuples back, no ORM
objects, no thread hop). They are the only implementation of these reads: the routes (and the short
path of :mod:`konnectz_api.fastreads`) call them; ``api/tests/test_read_routes.py`` checks their replies.

Every query is scoped to its owner; deleted flows (status DELETED) are never listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from psycopg import AsyncConnection, AsyncCursor

from konnectz_api.crud.konnects import DELETED, HOME, FolderFilter, day_end, day_start
from konnectz_api.crud.quota import MAX_LISTED
from konnectz_api.crud.task_payloads import LOG_POSITION, PURGED_MESSAGE, is_stub
from konnectz_api.params import like_pattern
from konnectz_api.task_status import ERROR_STATUSES, statuses_for

Conn = AsyncConnection[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class SessionRow:
    """What the sign-in check needs of a user: team members take the full (sync) path."""

    member_kind: str | None
    session_version: int
    revoked: bool


async def send_session_check(conn: Conn, *, user_id: int, jti: str | None) -> AsyncCursor[tuple[Any, ...]]:
    """Send the sign-in check (as :func:`konnectz_api.crud.sessions.signed_in`: the user and whether
    the token's ``jti`` was revoked, one query); in a pipeline its result is read later with
    :func:`session_row_of`."""
    return await conn.execute(
        "SELECT u.member_kind, u.session_version, "
        "EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = %(jti)s) "
        "FROM users u WHERE u.id = %(uid)s",
        {"uid": user_id, "jti": jti or ""},
    )


async def session_row_of(cur: AsyncCursor[tuple[Any, ...]]) -> SessionRow | None:
    row = await cur.fetchone()
    return None if row is None else SessionRow(row[0], row[1], bool(row[2]))


# konnects: id, konnect_name, status, created_at, folder_id, webhook_token, app_names, and canvas_json only
# where app_names was never derived (rows written without the ORM): the lists never load whole canvases.
KONNECT_COLUMNS = (
    "k.id, k.konnect_name, k.status, k.created_at, k.folder_id, k.webhook_token, k.app_names, k.draft_pending, "
    "CASE WHEN k.app_names IS NULL THEN k.canvas_json END AS canvas_json"
)


@dataclass(frozen=True, slots=True)
class KonnectPage:
    #: (id, konnect_name, status, created_at, folder_id, webhook_token, app_names, canvas_json or None,
    #:  success, error (ERROR, IN_DOUBT, REFUSED), filtered, draft_pending, live trigger (published_spec.trigger
    #:  of a Published flow, else None))
    rows: list[tuple[Any, ...]]
    total: int


async def folder_is_owned(conn: Conn, *, owner_id: int, folder_id: int) -> bool:
    cur = await conn.execute(
        "SELECT 1 FROM folders WHERE id = %(f)s AND owner_id = %(o)s", {"f": folder_id, "o": owner_id}
    )
    return await cur.fetchone() is not None


async def konnect_page(
    conn: Conn,
    *,
    owner_id: int,
    page_size: int,
    page_index: int,
    search: str | None = None,
    start_date: date | None = None,
    end_date: date | None = None,
    status: str | None = None,
    folder: FolderFilter = None,
    log_status: str | None = None,
) -> KonnectPage:
    """One page of an owner's flows, newest first, with the filtered total and each row's
    success/error/filtered task-log counts and the live trigger of a published one: one statement,
    plus a count only for a page past the end."""
    where = ["k.owner_id = %(owner)s", "k.status <> %(deleted)s"]
    params: dict[str, Any] = {"owner": owner_id, "deleted": DELETED}
    if search is not None and len(search.strip()) > 1:
        where.append("k.konnect_name ILIKE %(search)s ESCAPE '\\'")
        params["search"] = like_pattern(search.strip())
    if start_date is not None:
        where.append("k.created_at >= %(start)s")
        params["start"] = day_start(start_date)
    if end_date is not None:
        where.append("k.created_at <= %(end)s")
        params["end"] = day_end(end_date)
    if status is not None:
        where.append("k.status = %(status)s")
        params["status"] = status
    if folder == HOME:
        where.append("k.folder_id IS NULL")
    elif folder is not None:
        where.append("k.folder_id = %(folder)s")
        params["folder"] = folder
    if log_status is not None:
        where.append(
            "EXISTS (SELECT 1 FROM task_logs l WHERE l.owner_id = %(owner)s AND l.konnect_id = k.id "
            "AND l.status = ANY(%(log_status)s))"
        )
        params["log_status"] = list(statuses_for(log_status))
    filtered = f"FROM konnects k WHERE {' AND '.join(where)}"
    params["error_statuses"] = list(ERROR_STATUSES)
    params["limit"] = page_size
    params["offset"] = (page_index - 1) * page_size
    # The SQL is assembled from the constant fragments above only; every value is a bound parameter.
    cur = await conn.execute(
        "SELECT p.id, p.konnect_name, p.status, p.created_at, p.folder_id, p.webhook_token, p.app_names, "  # noqa: S608
        "p.canvas_json, "
        "p.total, "
        "(SELECT count(*) FROM task_logs l WHERE l.owner_id = %(owner)s AND l.konnect_id = p.id "
        "AND l.status = 'SUCCESS'), "
        "(SELECT count(*) FROM task_logs l WHERE l.owner_id = %(owner)s AND l.konnect_id = p.id "
        "AND l.status = ANY(%(error_statuses)s)), "
        "(SELECT count(*) FROM task_logs l WHERE l.owner_id = %(owner)s AND l.konnect_id = p.id "
        "AND l.status = 'FILTERED'), "
        "p.draft_pending, "
        "(SELECT s.published_spec -> 'trigger' FROM konnects s WHERE s.id = p.id AND p.status = 'Published') "
        f"FROM (SELECT {KONNECT_COLUMNS}, count(*) OVER () AS total {filtered} "
        "ORDER BY k.created_at DESC, k.id DESC LIMIT %(limit)s OFFSET %(offset)s) p "
        "ORDER BY p.created_at DESC, p.id DESC",
        params,
    )
    rows = await cur.fetchall()
    if rows:
        return KonnectPage([(*r[:8], *r[9:14]) for r in rows], int(rows[0][8]))
    if page_index == 1:  # nothing on the first page: nothing at all
        return KonnectPage([], 0)
    cur = await conn.execute(f"SELECT count(*) {filtered}", params)
    found = await cur.fetchone()
    return KonnectPage([], int(found[0]) if found else 0)


async def konnect_is_live(conn: Conn, *, owner_id: int, konnect_id: int) -> bool:
    """Whether ``konnect_id`` is one of the owner's flows and not deleted."""
    cur = await conn.execute(
        "SELECT 1 FROM konnects WHERE id = %(k)s AND owner_id = %(o)s AND status <> %(deleted)s",
        {"k": konnect_id, "o": owner_id, "deleted": DELETED},
    )
    return await cur.fetchone() is not None


async def folders_with_counts(conn: Conn, *, owner_id: int) -> list[tuple[int, str, int]]:
    """(id, name, flows not deleted) of the owner's folders in creation order: at most
    ``quota.MAX_LISTED`` (the largest plan's folder cap), so the reply is bounded even for an account
    that made more before the caps."""
    cur = await conn.execute(
        "SELECT f.id, f.name, coalesce(c.n, 0) FROM ("
        "SELECT id, name FROM folders WHERE owner_id = %(o)s ORDER BY id LIMIT %(limit)s) f LEFT JOIN ("
        "SELECT folder_id, count(*) AS n FROM konnects WHERE owner_id = %(o)s AND folder_id IS NOT NULL "
        "AND status <> %(deleted)s GROUP BY folder_id) c ON c.folder_id = f.id ORDER BY f.id",
        {"o": owner_id, "deleted": DELETED, "limit": MAX_LISTED},
    )
    return [(r[0], r[1], int(r[2])) for r in await cur.fetchall()]


async def dashboard_stats(conn: Conn, *, owner_id: int) -> tuple[int, int, int, int, int] | None:
    """(total, published, draft, task_limit, task_consumed) of the owner, counted in the database."""
    cur = await conn.execute(
        "SELECT c.total, c.active, c.inactive, u.task_limit, u.task_consumed FROM users u CROSS JOIN ("
        "SELECT count(*) AS total, count(*) FILTER (WHERE status = 'Published') AS active, "
        "count(*) FILTER (WHERE status = 'Draft') AS inactive "
        "FROM konnects WHERE owner_id = %(o)s AND status <> %(deleted)s) c WHERE u.id = %(o)s",
        {"o": owner_id, "deleted": DELETED},
    )
    row = await cur.fetchone()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]))


@dataclass(frozen=True, slots=True)
class LogPage:
    #: (id, konnect_id, status, task_date, data, run_id, attempts, replay_of, replayed_as, revision)
    rows: list[tuple[Any, ...]]
    total: int


async def task_log_page(
    conn: Conn,
    *,
    owner_id: int,
    page_size: int,
    page_index: int,
    konnect_id: int | None = None,
    log_type: str | None = None,
    start_date: date | None = None,
    end_date: date | None = None,
) -> LogPage:
    """One page of an owner's runs, newest first (a deleted flow's runs hidden with it), and the
    filtered total."""
    where = ["t.owner_id = %(owner)s"]
    params: dict[str, Any] = {"owner": owner_id}
    if konnect_id is not None:
        # A deleted flow's runs are hidden with it (checked once per query, as an InitPlan).
        where.append(
            "t.konnect_id = %(konnect)s AND EXISTS (SELECT 1 FROM konnects k WHERE k.id = %(konnect)s "
            "AND k.owner_id = %(owner)s AND k.status <> %(deleted)s)"
        )
        params["konnect"] = konnect_id
        params["deleted"] = DELETED
    if log_type is not None:
        where.append("t.status = ANY(%(log_type)s)")
        params["log_type"] = list(statuses_for(log_type))
    if start_date is not None:
        where.append("t.task_date >= %(start)s")
        params["start"] = day_start(start_date)
    if end_date is not None:
        where.append("t.task_date <= %(end)s")
        params["end"] = day_end(end_date)
    filtered = f"FROM task_logs t WHERE {' AND '.join(where)}"
    params["limit"] = page_size
    params["offset"] = (page_index - 1) * page_size
    cur = await conn.execute(
        "SELECT t.id, t.konnect_id, t.status, t.task_date, t.data, t.run_id, t.attempts, t.replay_of, t.replayed_as, "
        "t.revision, t.cancelled_by, t.called_by, t.calls, "
        f"count(*) OVER () {filtered} ORDER BY t.task_date DESC, t.id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    rows = await cur.fetchall()
    if rows:
        return LogPage([r[:13] for r in rows], int(rows[0][13]))
    if page_index == 1:  # nothing on the first page: nothing at all
        return LogPage([], 0)
    cur = await conn.execute(f"SELECT count(*) {filtered}", params)
    found = await cur.fetchone()
    return LogPage([], int(found[0]) if found else 0)


async def restore_log_data(conn: Conn, *, owner_id: int, rows: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Each :func:`task_log_page` row's ``data`` with large payloads put back from ``task_payloads``
    (as :func:`konnectz_api.crud.task_payloads.restore`)."""
    datas = [r[4] for r in rows]
    wanted = [r[0] for r in rows if is_stub(r[4])]
    if not wanted:
        return datas
    cur = await conn.execute(
        "SELECT p.task_log_id, p.data FROM task_payloads p JOIN task_logs t ON t.id = p.task_log_id "
        "WHERE t.owner_id = %(o)s AND p.task_log_id = ANY(%(ids)s) AND p.position = %(pos)s",
        {"o": owner_id, "ids": wanted, "pos": LOG_POSITION},
    )
    found: dict[int, Any] = {r[0]: r[1] for r in await cur.fetchall()}
    return [
        d if not is_stub(d) else found.get(r[0], {"payload": "purged", "size": d["size"], "message": PURGED_MESSAGE})
        for r, d in zip(rows, datas, strict=True)
    ]
