"""Konnect queries: the flow list (all, Home or one folder), the history list, dashboard stats.

Every function is scoped to one owner; deleted flows (status DELETED) are never listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from konnectz_api.models import Konnect

DELETED = "DELETED"
HOME: Literal["home"] = "home"
#: ``None``: every folder; ``"home"``: flows in no folder; an id: that folder's flows.
FolderFilter = int | Literal["home"] | None


def day_start(d: date) -> datetime:
    return datetime.combine(d, time.min, UTC)


def day_end(d: date) -> datetime:
    return datetime.combine(d, time.max, UTC)


def owned_ids(session: Session, *, owner_id: int, ids: Sequence[int]) -> set[int]:
    """The subset of ``ids`` that are the owner's flows and not deleted."""
    if not ids:
        return set()
    rows = session.scalars(
        select(Konnect.id).where(Konnect.owner_id == owner_id, Konnect.status != DELETED, Konnect.id.in_(list(ids)))
    )
    return set(rows)
