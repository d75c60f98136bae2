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
their runs finished, so each pass reads only the runs that came of age since the last one. Where it
stopped is kept in ``retention_cursors`` (:func:`purge_shared`), so a restarted api does not walk
the table again and two api processes never walk the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from konnectz_api.crud import task_payloads
from konnectz_api.crud.batches import drain
from konnectz_api.models import RetentionCursor, Task, TaskLog

__all__ = ["PurgeCursor", "is_purged", "not_kept", "purge", "purge_shared", "purged_stub", "trigger_key"]


def purged_stub(days: int) -> dict[str, str]:
    return {"request": "purged", "message": f"The request was deleted after the retention period ({days} days)."}


#: The notes that stand for a request that was never kept whole: too large for a task event
#: (konnectz_contracts.events.fit_event), refused for its quota (konnectz_runner.work.quota.refused_event), or
#: dropped because the database refused it (konnectz_api.services.task_events.without_data).
_NOT_KEPT = ({"truncated", "bytes", "message"}, {"refused", "message"}, {"dropped", "message"})


def not_kept(value: Any) -> str | None:
    """Why a task log's request was not kept (its note's message), or None when it is the request."""
    if isinstance(value, dict) and set(value) in _NOT_KEPT and isinstance(value.get("message"), str):
        flag = next(k for k in value if k not in ("bytes", "message"))
        if value[flag] is True:
            return str(value["message"])
    return None


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
    """Where the retention job stopped (the last task log id it passed)."""

    after_id: int = 0


JOB = "requests"
_EDGE = text(
    "WITH batch AS (SELECT id, task_date FROM task_logs WHERE id > :after ORDER BY id LIMIT :batch) "
    "SELECT count(*), max(id), min(id) FILTER (WHERE task_date >= :cutoff) FROM batch"
)
# Only rows with something in them: a run's data is never empty, but rows seeded or imported without
# it are skipped in PostgreSQL rather than read into Python.
_DUE = text("SELECT id, data FROM task_logs WHERE id > :after AND id <= :upto AND data::text <> '{}' ORDER BY id")


def _purge_batch(
    session: Session, *, cutoff: datetime, stub: dict[str, str], after_id: int, batch: int
) -> tuple[int, int, bool]:
    """Purge the due requests of the next ``batch`` task logs after ``after_id``: (how many, the id
    the job stops at, whether it is done for now: it met a young run or the end of the table)."""
    count, last, young = session.execute(_EDGE, {"after": after_id, "batch": batch, "cutoff": cutoff}).one()
    upto = (young - 1) if young is not None else last
    if not count or upto is None or upto <= after_id:
        return 0, after_id, True
    rows = session.execute(_DUE, {"after": after_id, "upto": upto}).all()
    steps: dict[int, set[str]] = {}
    if rows:
        for log_id, step_id in session.execute(
            select(Task.task_log_id, Task.step_id).where(Task.task_log_id.in_([r.id for r in rows]))
        ):
            steps.setdefault(int(log_id), set()).add(step_id)
    purged = 0
    for row in rows:
        data = row.data
        if not isinstance(data, dict) or task_payloads.is_stub(data):
            continue
        key = trigger_key(data, steps.get(int(row.id), set()))
        if key is None or is_purged(data[key]):
            continue
        session.execute(update(TaskLog).where(TaskLog.id == row.id).values(data={**data, key: stub}))
        purged += 1
    return purged, int(upto), young is not None or count < batch


def purge(session: Session, *, older_than_days: int, cursor: PurgeCursor, batch: int = 2000) -> int:
    """Replace the requests of runs that finished more than ``older_than_days`` ago by a stub; how many
    were replaced. Advances ``cursor``. Commits after each batch."""
    if older_than_days <= 0:
        return 0
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    stub = purged_stub(older_than_days)

    def one_batch() -> tuple[int, bool]:
        purged, cursor.after_id, done = _purge_batch(
            session, cutoff=cutoff, stub=stub, after_id=cursor.after_id, batch=batch
        )
        session.commit()
        return purged, done

    return drain(one_batch)


def purge_shared(
    sessions: Callable[[], Session], *, older_than_days: int, batch: int = 2000, pause: float = 2.0
) -> int:
    """:func:`purge` with the cursor kept in ``retention_cursors``, for the api's job: each batch is a
    transaction that locks the cursor's row (``FOR UPDATE SKIP LOCKED``: when another api process
    holds it, this pass ends) and moves it on, so a restart reads on from where the job stopped and
    the processes never walk the same rows. Between batches the thread sleeps ``pause`` times as long
    as the batch took, so catching up on a large table does not take the requests' CPU."""
    if older_than_days <= 0:
        return 0
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    stub = purged_stub(older_than_days)

    def one_batch() -> tuple[int, bool]:
        with sessions() as session:
            session.execute(
                pg_insert(RetentionCursor).values(job=JOB, after_id=0).on_conflict_do_nothing(index_elements=["job"])
            )
            session.commit()
            after_id = session.execute(
                select(RetentionCursor.after_id).where(RetentionCursor.job == JOB).with_for_update(skip_locked=True)
            ).scalar()
            if after_id is None:  # another process is purging
                return 0, True
            purged, after_id, done = _purge_batch(session, cutoff=cutoff, stub=stub, after_id=after_id, batch=batch)
            session.execute(update(RetentionCursor).where(RetentionCursor.job == JOB).values(after_id=after_id))
            session.commit()
        return purged, done

    return drain(one_batch, pause=pause)
