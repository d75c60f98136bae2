"""Konnect queries: the flow list (all, Home or one folder), the history list, dashboard stats.

Every function is scoped to one owner; deleted flows (status DELETED) are never listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any, Literal

from sqlalchemy import ScalarSelect, Select, case, exists, func, select, true
from sqlalchemy.orm import Session, aliased, defer

from konnectz_api.models import Konnect, TaskLog, User
from konnectz_api.params import like_pattern
from konnectz_api.task_status import ERROR_STATUSES, statuses_for

DELETED = "DELETED"
HOME: Literal["home"] = "home"
#: ``None``: every folder; ``"home"``: flows in no folder; an id: that folder's flows.
FolderFilter = int | Literal["home"] | None


@dataclass(frozen=True)
class Page:
    konnects: list[Konnect]
    total: int
    counts: dict[int, tuple[int, int, int]]  # konnect id -> (success, error, filtered) task logs
    #: konnect id -> published_spec.trigger of the Published ones (what the lists show of the live trigger)
    triggers: dict[int, Any] = dataclasses.field(default_factory=dict)


def day_start(d: date) -> datetime:
    return datetime.combine(d, time.min, UTC)


def day_end(d: date) -> datetime:
    return datetime.combine(d, time.max, UTC)


def _filtered(
    *,
    owner_id: int,
    search: str | None,
    start_date: date | None,
    end_date: date | None,
    status: str | None,
    folder: FolderFilter,
    log_status: str | None,
) -> Select[Konnect]:
    stmt = select(Konnect).where(Konnect.owner_id == owner_id, Konnect.status != DELETED)
    if search is not None and len(search.strip()) > 1:
        stmt = stmt.where(Konnect.konnect_name.ilike(like_pattern(search.strip()), escape="\\"))
    if start_date is not None:
        stmt = stmt.where(Konnect.created_at >= day_start(start_date))
    if end_date is not None:
        stmt = stmt.where(Konnect.created_at <= day_end(end_date))
    if status is not None:
        stmt = stmt.where(Konnect.status == status)
    if folder == HOME:
        stmt = stmt.where(Konnect.folder_id.is_(None))
    elif folder is not None:
        stmt = stmt.where(Konnect.folder_id == folder)
    if log_status is not None:
        stmt = stmt.where(
            exists().where(
                TaskLog.owner_id == owner_id,
                TaskLog.konnect_id == Konnect.id,
                TaskLog.status.in_(statuses_for(log_status)),
            )
        )
    return stmt


def task_counts(session: Session, *, owner_id: int, konnect_ids: Sequence[int]) -> dict[int, tuple[int, int, int]]:
    """(success, error, filtered) task logs per konnect, counted in the database (error: ERROR,
    IN_DOUBT and REFUSED)."""
    if not konnect_ids:
        return {}
    rows = session.execute(
        select(
            TaskLog.konnect_id,
            func.count(case((TaskLog.status == "SUCCESS", 1))),
            func.count(case((TaskLog.status.in_(ERROR_STATUSES), 1))),
            func.count(case((TaskLog.status == "FILTERED", 1))),
        )
        .where(TaskLog.owner_id == owner_id, TaskLog.konnect_id.in_(list(konnect_ids)))
        .group_by(TaskLog.konnect_id)
    )
    return {kid: (ok, err, filtered) for kid, ok, err, filtered in rows}


def list_page(
    session: Session,
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
) -> Page:
    """One page of an owner's flows, newest first, with the total and each flow's task-log counts."""
    stmt = _filtered(
        owner_id=owner_id,
        search=search,
        start_date=start_date,
        end_date=end_date,
        status=status,
        folder=folder,
        log_status=log_status,
    )
    # One round trip: the page, the filtered total (a window count, taken before LIMIT) and each
    # listed flow's success/error task-log counts (correlated index-only counts, run for the page's
    # rows only).
    page = (
        stmt.add_columns(func.count().over().label("total"))
        .order_by(Konnect.created_at.desc(), Konnect.id.desc())
        .limit(page_size)
        .offset((page_index - 1) * page_size)
        .subquery()
    )
    row_konnect = aliased(Konnect, page)

    def log_count(*statuses: str) -> ScalarSelect[int]:
        return (
            select(func.count())
            .where(TaskLog.owner_id == owner_id, TaskLog.konnect_id == page.c.id, TaskLog.status.in_(statuses))
            .scalar_subquery()
        )

    live = aliased(Konnect)
    trigger = (
        select(live.published_spec["trigger"]).where(live.id == page.c.id, live.status == "Published").scalar_subquery()
    )
    rows = session.execute(
        select(
            row_konnect,
            page.c.total,
            log_count("SUCCESS"),
            log_count(*ERROR_STATUSES),
            log_count("FILTERED"),
            trigger,
        )
        .options(defer(row_konnect.published_spec))
        .order_by(page.c.created_at.desc(), page.c.id.desc())
    ).all()
    if rows:
        total = int(rows[0][1])
    else:  # past the last page: the window had no row to carry the total
        total = session.scalar(select(func.count()).select_from(stmt.with_only_columns(Konnect.id).subquery())) or 0
    return Page(
        [r[0] for r in rows],
        total,
        {r[0].id: (int(r[2]), int(r[3]), int(r[4])) for r in rows},
        {r[0].id: r[5] for r in rows if r[5] is not None},
    )


def owned_ids(session: Session, *, owner_id: int, ids: Sequence[int]) -> set[int]:
    """The subset of ``ids`` that are the owner's flows and not deleted."""
    if not ids:
        return set()
    rows = session.scalars(
        select(Konnect.id).where(Konnect.owner_id == owner_id, Konnect.status != DELETED, Konnect.id.in_(list(ids)))
    )
    return set(rows)


@dataclass(frozen=True)
class Stats:
    total: int
    active: int
    inactive: int
    task_limit: int
    task_consumed: int


def dashboard_stats(session: Session, *, owner_id: int) -> Stats:
    """Counts of the owner's flows and task usage, in one round trip."""
    counts = (
        select(
            func.count().label("total"),
            func.count().filter(Konnect.status == "Published").label("active"),
            func.count().filter(Konnect.status == "Draft").label("inactive"),
        )
        .where(Konnect.owner_id == owner_id, Konnect.status != DELETED)
        .subquery()
    )
    row = session.execute(
        select(counts.c.total, counts.c.active, counts.c.inactive, User.task_limit, User.task_consumed)
        .select_from(User)
        .join(counts, true())
        .where(User.id == owner_id)
    ).one()
    return Stats(int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]))
