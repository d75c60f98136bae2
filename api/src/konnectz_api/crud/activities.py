"""Test & Review results (konnect activities): one row per tested node of a konnect."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import KonnectActivity, utcnow

__all__ = ["SUCCESS", "delete_activity", "get_activity", "save_activity", "successful"]

SUCCESS = "Success"


def save_activity(
    session: Session,
    *,
    konnect_id: int,
    owner_id: int,
    node_id: str,
    kind: str,
    app_name: str,
    status: str,
    display_message: str,
    input: dict[str, Any],
    output: Any,
) -> int:
    """Store the node's latest test result (replacing an earlier one); returns its activity id."""
    now = utcnow()
    values = {
        "kind": kind,
        "app_name": jsonb_safe(app_name[:200]),
        "status": status,
        "display_message": jsonb_safe(display_message),
        "input": jsonb_safe(input),
        "output": jsonb_safe(output),
        "updated_at": now,
    }
    stmt = (
        insert(KonnectActivity)
        .values(konnect_id=konnect_id, owner_id=owner_id, node_id=node_id, created_at=now, **values)
        .on_conflict_do_update(constraint="uq_konnect_activities_konnect_node", set_=values)
        .returning(KonnectActivity.id)
    )
    activity_id = session.scalar(stmt)
    assert activity_id is not None
    return int(activity_id)


def successful(session: Session, *, konnect_id: int, owner_id: int) -> dict[str, KonnectActivity]:
    """The konnect's successfully tested nodes, by node id."""
    rows = session.scalars(
        select(KonnectActivity).where(
            KonnectActivity.konnect_id == konnect_id,
            KonnectActivity.owner_id == owner_id,
            KonnectActivity.status == SUCCESS,
        )
    )
    return {row.node_id: row for row in rows}


def get_activity(session: Session, *, owner_id: int, konnect_id: int, node_id: str) -> KonnectActivity | None:
    return session.scalar(
        select(KonnectActivity).where(
            KonnectActivity.owner_id == owner_id,
            KonnectActivity.konnect_id == konnect_id,
            KonnectActivity.node_id == node_id,
        )
    )


def delete_activity(
    session: Session, *, owner_id: int, konnect_id: int, activity_id: int | None, node_id: str | None
) -> int:
    """Delete the activity named by id or by node; returns how many rows went (0 or 1)."""
    stmt = delete(KonnectActivity).where(KonnectActivity.owner_id == owner_id, KonnectActivity.konnect_id == konnect_id)
    if activity_id is not None:
        stmt = stmt.where(KonnectActivity.id == activity_id)
    if node_id is not None:
        stmt = stmt.where(KonnectActivity.node_id == node_id)
    result = session.execute(stmt)
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
