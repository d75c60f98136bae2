"""Task-log queries: the runs of an owner's flows and the steps (tasks) of one run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.crud.konnects import day_end, day_start
from konnectz_api.models import Konnect, Task, TaskLog


@dataclass(frozen=True)
class LogPage:
    logs: list[TaskLog]
    total: int


def list_logs(
    session: Session,
    *,
    owner_id: int,
    page_size: int,
    page_index: int,
    konnect_id: int | None = None,
    log_type: str | None = None,
    start_date: date | None = None,
    end_date: date | None = None,
) -> LogPage:
    stmt = select(TaskLog).where(TaskLog.owner_id == owner_id)
    if konnect_id is not None:
        stmt = stmt.where(TaskLog.konnect_id == konnect_id)
    if log_type is not None:
        stmt = stmt.where(TaskLog.status == log_type)
    if start_date is not None:
        stmt = stmt.where(TaskLog.task_date >= day_start(start_date))
    if end_date is not None:
        stmt = stmt.where(TaskLog.task_date <= day_end(end_date))
    total = session.scalar(select(func.count()).select_from(stmt.with_only_columns(TaskLog.id).subquery())) or 0
    rows = session.scalars(
        stmt.order_by(TaskLog.task_date.desc(), TaskLog.id.desc()).limit(page_size).offset((page_index - 1) * page_size)
    )
    return LogPage(list(rows), total)


def get_owned(session: Session, *, owner_id: int, task_log_id: int) -> TaskLog | None:
    log = session.get(TaskLog, task_log_id)
    return log if log is not None and log.owner_id == owner_id else None


def tasks_of(session: Session, *, task_log: TaskLog) -> list[Task]:
    return list(session.scalars(select(Task).where(Task.task_log_id == task_log.id).order_by(Task.position)))


def trigger_output_of(session: Session, *, task_log: TaskLog) -> dict[str, Any]:
    """The request a run was started with: its data entry that is not one of its steps."""
    steps = set(session.scalars(select(Task.step_id).where(Task.task_log_id == task_log.id)))
    for key, value in (task_log.data or {}).items():
        if key not in steps and isinstance(value, dict):
            return value
    return {}


def konnect_of(session: Session, *, task_log: TaskLog) -> Konnect | None:
    return session.get(Konnect, task_log.konnect_id)
