"""Konnect revisions: every successful publish kept unchanged (canvas and flow spec), numbered per konnect.

A revision is written once (:func:`add`) and never updated; retention (``KONNECTZ_REVISIONS_KEEP``,
:func:`apply_retention`) may delete the oldest ones of a konnect, never the live one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from konnectz_api.models import Konnect, KonnectRevision


def next_number(session: Session, *, konnect_id: int) -> int:
    """The number the konnect's next revision gets: one more than its newest (1 for the first)."""
    newest = session.scalar(select(func.max(KonnectRevision.number)).where(KonnectRevision.konnect_id == konnect_id))
    return int(newest or 0) + 1


def add(
    session: Session,
    *,
    konnect: Konnect,
    number: int,
    spec: dict[str, Any],
    message: str,
    published_by: int | None,
    published_by_email: str,
    restored_from: int | None = None,
) -> KonnectRevision:
    """Store the konnect's current canvas and ``spec`` as revision ``number`` (flushed, not committed)."""
    revision = KonnectRevision(
        konnect_id=konnect.id,
        owner_id=konnect.owner_id,
        number=number,
        canvas_json=konnect.canvas_json,
        spec=spec,
        message=message,
        published_by=published_by,
        published_by_email=published_by_email,
        restored_from=restored_from,
    )
    session.add(revision)
    session.flush()
    return revision


def get(session: Session, *, owner_id: int, konnect_id: int, number: int) -> KonnectRevision | None:
    return session.scalar(
        select(KonnectRevision).where(
            KonnectRevision.owner_id == owner_id,
            KonnectRevision.konnect_id == konnect_id,
            KonnectRevision.number == number,
        )
    )


@dataclass(frozen=True)
class RevisionPage:
    rows: list[KonnectRevision]
    total: int


def page(session: Session, *, owner_id: int, konnect_id: int, page_size: int, page_index: int) -> RevisionPage:
    """One page of a konnect's revisions, newest first (without their canvas and spec), and the total."""
    where = (KonnectRevision.owner_id == owner_id, KonnectRevision.konnect_id == konnect_id)
    total = int(session.scalar(select(func.count()).select_from(KonnectRevision).where(*where)) or 0)
    rows = session.scalars(
        select(KonnectRevision)
        .where(*where)
        .order_by(KonnectRevision.number.desc())
        .limit(page_size)
        .offset((page_index - 1) * page_size)
    )
    return RevisionPage(list(rows), total)


def apply_retention(session: Session, *, konnect_id: int, keep: int, live: int | None) -> int:
    """Delete the konnect's revisions older than its ``keep`` newest, except the live one; how many.
    ``keep`` 0 keeps every revision."""
    if keep <= 0:
        return 0
    cutoff = session.scalar(
        select(KonnectRevision.number)
        .where(KonnectRevision.konnect_id == konnect_id)
        .order_by(KonnectRevision.number.desc())
        .offset(keep - 1)
        .limit(1)
    )
    if cutoff is None:
        return 0
    query = delete(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id, KonnectRevision.number < cutoff)
    if live is not None:
        query = query.where(KonnectRevision.number != live)
    result = session.execute(query)
    return int(getattr(result, "rowcount", 0) or 0)
