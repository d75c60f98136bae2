"""Task logs: one per run of a konnect, with its steps as tasks."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from sqlalchemy import func, select

from konnectz_api.deps import CurrentUser, SessionDep
from konnectz_api.errors import NotFound
from konnectz_api.models import Task, TaskLog
from konnectz_api.schemas import TaskList, TaskLogList, TaskLogOut, TaskOut

router = APIRouter(prefix="/api/v1/task_logs", tags=["task logs"])


@router.get("/logs", response_model=TaskLogList)
def task_logs(
    user: CurrentUser,
    session: SessionDep,
    konnect_id: int | None = None,
    task_log_type: Literal["SUCCESS", "ERROR"] | None = None,
    start_date: date | None = None,
    end_date: date | None = None,
    page_index: Annotated[int, Query(ge=1)] = 1,
    page_size: Annotated[int, Query(ge=1, le=200)] = 60,
) -> TaskLogList:
    stmt = select(TaskLog).where(TaskLog.owner_id == user.id)
    if konnect_id is not None:
        stmt = stmt.where(TaskLog.konnect_id == konnect_id)
    if task_log_type:
        stmt = stmt.where(TaskLog.status == task_log_type)
    if start_date:
        stmt = stmt.where(TaskLog.task_date >= datetime.combine(start_date, time.min, UTC))
    if end_date:
        stmt = stmt.where(TaskLog.task_date <= datetime.combine(end_date, time.max, UTC))
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = session.scalars(
        stmt.order_by(TaskLog.task_date.desc(), TaskLog.id.desc()).limit(page_size).offset((page_index - 1) * page_size)
    )
    return TaskLogList(
        task_logs=[
            TaskLogOut(id=r.id, konnect_id=r.konnect_id, status=r.status, task_date=r.task_date, data=r.data)
            for r in rows
        ],
        total=total,
    )


@router.get("/{task_log_id}/tasks", response_model=TaskList)
def tasks(task_log_id: int, user: CurrentUser, session: SessionDep) -> TaskList:
    log = session.get(TaskLog, task_log_id)
    if log is None or log.owner_id != user.id:
        raise NotFound(f"Task log {task_log_id} not found")
    rows = session.scalars(select(Task).where(Task.task_log_id == log.id).order_by(Task.position))
    return TaskList(
        tasks=[
            TaskOut(
                id=t.id, task_date=t.task_date, step_id=t.step_id, app_name=t.app_name, status=t.status, data=t.data
            )
            for t in rows
        ]
    )
