"""Accepted requests and their retention period.

Every accepted request (a webhook call, a form submission, a poll's item) is kept: in ``KZ_RUNS``
until it has run, then in its task log as the trigger's data (``data[<trigger node id>]``), from
where a failed run can be replayed. It is kept for ``request_retention_days`` after its run finished
(``KONNECTZ_REQUEST_RETENTION_DAYS``, 30 by default; 0 keeps it as long as the task log). After that,
the retention job (:func:`purge`) replaces it with a stub::

    {"request": "purged", "message": "The request was deleted after the retention period (30 days)."}

The task log itself stays (status, steps, timing, usage), so the history and the quota figures are
unchanged; such a run can no longer be replayed (:func:`trigger_output_of` says so). A task log
whose whole data went to ``task_payloads`` (larger than the inline limit) is left to that table's
own retention (:mod:`konnectz_api.crud.task_payloads`).

The job walks ``task_logs`` in id order (their primary key) from where it stopped, one batch at a
time, and stops at the first run younger than the retention period: task logs are stored in the order
their runs finished, so each pass reads only the runs that came of age since the last one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from konnectz_api.crud import task_payloads
from konnectz_api.models import Task, TaskLog

__all__ = ["PurgeCursor", "is_purged", "purge", "purged_stub", "trigger_key"]


def purged_stub(days: int) -> dict[str, str]:
    return {"request": "purged", "message": f"The request was deleted after the retention period ({days} days)."}


def is_purged(value: Any) -> bool:
    return isinstance(value, dict) and value.get("request") == "purged" and set(value) == {"request", "message"}


def trigger_key(data: dict[str, Any], step_ids: set[str]) -> str | None:
    """The key of the trigger's data in a task log's data: the one entry that is not a step's."""
    for key, value in data.items():
        if key not in step_ids and isinstance(value, dict):
            return key
    return None


@dataclass
class PurgeCursor:
    """Where the retention job stopped (the last task log id it passed); kept by the job between passes."""

    after_id: int = 0


def purge(session: Session, *, older_than_days: int, cursor: PurgeCursor, batch: int = 2000) -> int:
    """Replace the requests of runs that finished more than ``older_than_days`` ago by a stub; how many
    were replaced. Advances ``cursor``. Commits after each batch."""
    if older_than_days <= 0:
        return 0
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    stub = purged_stub(older_than_days)
    total = 0
    while True:
        rows = session.execute(
            select(TaskLog.id, TaskLog.task_date, TaskLog.data)
            .where(TaskLog.id > cursor.after_id)
            .order_by(TaskLog.id)
            .limit(batch)
        ).all()
        due = []
        young = False
        for row in rows:
            if row.task_date >= cutoff:
                young = True
                break
            due.append(row)
        if due:
            steps: dict[int, set[str]] = {}
            for log_id, step_id in session.execute(
                select(Task.task_log_id, Task.step_id).where(Task.task_log_id.in_([r.id for r in due]))
            ):
                steps.setdefault(int(log_id), set()).add(step_id)
            for row in due:
                data = row.data
                if not isinstance(data, dict) or task_payloads.is_stub(data):
                    continue
                key = trigger_key(data, steps.get(int(row.id), set()))
                if key is None or is_purged(data[key]):
                    continue
                session.execute(update(TaskLog).where(TaskLog.id == row.id).values(data={**data, key: stub}))
                total += 1
            cursor.after_id = int(due[-1].id)
        session.commit()
        if young or len(rows) < batch:
            return total
