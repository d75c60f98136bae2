"""Sign-in throttling: failed attempts per client address and per e-mail in a fixed window (PostgreSQL,
so every api replica sees the same counts)."""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime, timedelta

from sqlalchemy import case, delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.models import LoginThrottle


def address_key(address: str) -> str:
    return f"ip:{address[:90]}"


def email_key(email: str) -> str:
    return "email:" + hashlib.sha256(email.lower().encode()).hexdigest()[:64]


def retry_after(session: Session, *, keys_and_limits: list[tuple[str, int]], window: timedelta) -> int | None:
    """Seconds until the first blocked key may try again, or None when no key is over its limit."""
    now = datetime.now(UTC)
    rows = {
        r.key: r
        for r in session.scalars(select(LoginThrottle).where(LoginThrottle.key.in_([k for k, _ in keys_and_limits])))
    }
    waits = []
    for key, limit in keys_and_limits:
        row = rows.get(key)
        if row is not None and row.failures >= limit and row.window_start + window > now:
            waits.append(math.ceil((row.window_start + window - now).total_seconds()))
    return max(waits) if waits else None


def record_failure(session: Session, *, keys: list[str], window: timedelta) -> None:
    """Count one failure for each key, starting a new window when the old one is over. Commits."""
    now = datetime.now(UTC)
    for key in keys:
        stmt = insert(LoginThrottle).values(key=key, window_start=now, failures=1)
        expired = stmt.excluded.window_start - window > LoginThrottle.window_start
        session.execute(
            stmt.on_conflict_do_update(
                index_elements=[LoginThrottle.key],
                set_={
                    "failures": case((expired, 1), else_=LoginThrottle.failures + 1),
                    "window_start": case((expired, stmt.excluded.window_start), else_=LoginThrottle.window_start),
                },
            )
        )
    session.execute(delete(LoginThrottle).where(LoginThrottle.window_start < now - 2 * window))
    session.commit()


def clear(session: Session, *, key: str) -> None:
    session.execute(delete(LoginThrottle).where(LoginThrottle.key == key))
    session.commit()
