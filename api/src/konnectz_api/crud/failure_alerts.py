"""The failure-alert digest of each flow (table ``failure_alerts``): at most one alert per flow per
digest interval, the failures in between counted for the next one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.models import FailureAlertState

__all__ = ["Due", "claim", "due_digests", "flush"]


@dataclass(frozen=True)
class Due:
    """An alert to send now: ``more`` failures came since ``since`` without an alert of their own."""

    more: int
    since: datetime | None


def _locked(session: Session, konnect_id: int, owner_id: int) -> FailureAlertState:
    session.execute(
        insert(FailureAlertState)
        .values(konnect_id=konnect_id, owner_id=owner_id, pending=0)
        .on_conflict_do_nothing(index_elements=["konnect_id"])
    )
    return session.execute(
        select(FailureAlertState).where(FailureAlertState.konnect_id == konnect_id).with_for_update()
    ).scalar_one()


def _in_interval(row: FailureAlertState, now: datetime, digest_minutes: int) -> bool:
    """Whether the flow's last alert is less than the digest interval ago (the next one waits)."""
    return row.last_alert_at is not None and now - row.last_alert_at < timedelta(minutes=digest_minutes)


def _take(session: Session, row: FailureAlertState, now: datetime) -> Due:
    """The alert to send now, with the failures counted since the last one; resets the count. Commits."""
    due = Due(more=row.pending, since=row.pending_since)
    row.last_alert_at, row.pending, row.pending_since = now, 0, None
    session.commit()
    return due


def claim(
    session: Session, *, konnect_id: int, owner_id: int, digest_minutes: int, failed_at: datetime, now: datetime
) -> Due | None:
    """A failure of the flow: the alert to send now (the digest interval has passed since the last
    one), or None (counted for the next). Commits (the row is locked meanwhile, so two api processes
    never both send)."""
    row = _locked(session, konnect_id, owner_id)
    if _in_interval(row, now, digest_minutes):
        row.pending += 1
        if row.pending_since is None:
            row.pending_since = failed_at
        session.commit()
        return None
    return _take(session, row, now)


def due_digests(session: Session) -> list[FailureAlertState]:
    """Flows with failures counted and not alerted yet (the caller checks each one's interval)."""
    return list(session.execute(select(FailureAlertState).where(FailureAlertState.pending > 0)).scalars())


def flush(session: Session, *, konnect_id: int, digest_minutes: int, now: datetime) -> Due | None:
    """The counted failures of a flow whose digest interval has passed (and reset), or None. Commits."""
    row = session.execute(
        select(FailureAlertState).where(FailureAlertState.konnect_id == konnect_id).with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    if row is None or row.pending <= 0:
        session.rollback()
        return None
    if _in_interval(row, now, digest_minutes):
        session.rollback()
        return None
    return _take(session, row, now)
