"""Large task-log payloads: kept in ``task_payloads`` instead of inline, purged after a retention period.

n8n's best-known operational failure is a database bloated by execution data. Here a run's data (the
task log's ``data``) or one step's (a task's ``data``) whose JSON is larger than
``task_payload_inline_bytes`` is stored in ``task_payloads`` and the inline column keeps a stub::

    {"payload": "external", "size": 1234567}

Reading a task log or its tasks restores the payload (:func:`restore`); once purged (older than
``task_payload_retention_days``) the stub says so: ``{"payload": "purged", "size": ..., "message": ...}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, delete, insert, select, tuple_
from sqlalchemy.orm import Session

from konnectz_api.core.jsontext import dumps
from konnectz_api.crud.batches import drain
from konnectz_api.models import TaskPayload

__all__ = ["LOG_POSITION", "is_stub", "offload", "purge", "restore"]

LOG_POSITION = -1  # the task log's own data; tasks use their position
PURGED_MESSAGE = "This payload was larger than the inline limit and has passed its retention period."


def is_stub(data: Any) -> bool:
    return isinstance(data, dict) and data.get("payload") == "external" and set(data) == {"payload", "size"}


def offload(data: Any, *, limit: int) -> tuple[Any, int | None]:
    """(what to store inline, size of the JSON when it goes to task_payloads else None)."""
    size = len(dumps(data))
    if size <= limit:
        return data, None
    return {"payload": "external", "size": size}, size


def store(session: Session, rows: Iterable[tuple[int, int, int, Any]]) -> None:
    """Insert (task_log_id, position, size, data) rows; the caller commits."""
    now = datetime.now(UTC)
    values = [{"task_log_id": t, "position": p, "size": s, "data": d, "created_at": now} for t, p, s, d in rows]
    if values:
        session.execute(insert(TaskPayload), values)


def restore(session: Session, items: Sequence[tuple[int, int, Any]]) -> list[Any]:
    """The data of each (task_log_id, position, inline data), payloads put back where a stub is."""
    wanted = [(t, p) for t, p, d in items if is_stub(d)]
    found: dict[tuple[int, int], Any] = {}
    if wanted:
        rows = session.execute(
            select(TaskPayload.task_log_id, TaskPayload.position, TaskPayload.data).where(
                tuple_(TaskPayload.task_log_id, TaskPayload.position).in_(wanted)
            )
        )
        found = {(t, p): d for t, p, d in rows}
    out: list[Any] = []
    for t, p, d in items:
        if not is_stub(d):
            out.append(d)
        elif (t, p) in found:
            out.append(found[(t, p)])
        else:
            out.append({"payload": "purged", "size": d["size"], "message": PURGED_MESSAGE})
    return out


def purge(session: Session, *, older_than_days: int, batch: int = 5000) -> int:
    """Delete payloads older than the retention period, in batches; how many went. Commits."""
    if older_than_days <= 0:
        return 0
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)

    def one_batch() -> tuple[int, bool]:
        keys = select(TaskPayload.task_log_id, TaskPayload.position).where(TaskPayload.created_at < cutoff).limit(batch)
        result = session.execute(
            delete(TaskPayload).where(tuple_(TaskPayload.task_log_id, TaskPayload.position).in_(keys))
        )
        deleted = (result.rowcount if isinstance(result, CursorResult) else 0) or 0
        session.commit()
        return deleted, deleted < batch

    return drain(one_batch)
