"""Task-log queries: the runs of an owner's flows and the steps (tasks) of one run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from konnectz_api.crud import requests, task_payloads
from konnectz_api.errors import Conflict
from konnectz_api.models import Konnect, Task, TaskLog


def get_owned(session: Session, *, owner_id: int, task_log_id: int) -> TaskLog | None:
    log = session.get(TaskLog, task_log_id)
    return log if log is not None and log.owner_id == owner_id else None


def by_run(session: Session, *, owner_id: int, konnect_id: int, run_id: str) -> TaskLog | None:
    """The finished run ``run_id`` of the owner's konnect, if its task log is stored."""
    return session.scalar(
        select(TaskLog).where(TaskLog.run_id == run_id, TaskLog.owner_id == owner_id, TaskLog.konnect_id == konnect_id)
    )


def tasks_of(session: Session, *, task_log: TaskLog) -> list[Task]:
    return list(session.scalars(select(Task).where(Task.task_log_id == task_log.id).order_by(Task.position)))


@dataclass(frozen=True)
class NodeApp:
    """A node of a flow's canvas: its app's name, catalogue id (None for add-ons) and provider."""

    name: str
    app_id: int | None
    provider: str
    trigger: bool


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def node_apps(session: Session, *, task_log: TaskLog) -> dict[str, NodeApp]:
    """The nodes of the run's flow (its current canvas) by node id; a canvas of any shape gives what it can."""
    canvas = session.scalar(select(Konnect.canvas_json).where(Konnect.id == task_log.konnect_id))
    apps = canvas.get("apps") if isinstance(canvas, dict) else None
    found: dict[str, NodeApp] = {}
    for node in apps if isinstance(apps, list) else []:
        if not isinstance(node, dict) or not isinstance(node.get("id"), str):
            continue
        data = _dict(node.get("data"))
        detail = _dict(data.get("app_detail"))
        raw_id = detail.get("id")
        app_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        if isinstance(raw_id, str) and raw_id.isdigit() and len(raw_id) < 19:
            app_id = int(raw_id)
        name = _text(detail.get("name"))
        provider = _text(detail.get("provider"))
        found[node["id"]] = NodeApp(
            name=name[:200], app_id=app_id, provider=provider[:100], trigger=detail.get("app_index") == 1
        )
    return found


class RequestNotKept(Conflict):
    """409: the run's request was never kept whole (too large for its task event, refused, dropped)."""


def trigger_output_of(session: Session, *, task_log: TaskLog) -> dict[str, Any] | None:
    """The request a run was started with (its data entry that is not one of its steps), read back from
    ``task_payloads`` when it was large; None once it was purged (past its retention period). Raises
    :class:`RequestNotKept` when only a note stands for it."""
    steps = set(session.scalars(select(Task.step_id).where(Task.task_log_id == task_log.id)))
    data = task_payloads.restore(session, [(task_log.id, task_payloads.LOG_POSITION, task_log.data)])[0]
    if not isinstance(data, dict) or data.get("payload") == "purged":
        return None
    key = requests.trigger_key(data, steps)
    if key is None:
        return {}
    value = data[key]
    reason = requests.not_kept(value)
    if reason is not None:
        raise RequestNotKept(f"{reason} It cannot be replayed.")
    return None if requests.is_purged(value) else dict(value)


def konnect_of(session: Session, *, task_log: TaskLog) -> Konnect | None:
    return session.get(Konnect, task_log.konnect_id)


def record_replay(session: Session, *, task_log_id: int, run_id: str, generation: int) -> None:
    """The run was replayed as ``run_id`` (its ``generation``-th replay); a later replay answers it. Commits."""
    session.execute(
        update(TaskLog)
        .where(TaskLog.id == task_log_id, TaskLog.replays < generation)
        .values(replayed_as=run_id, replays=generation)
    )
    session.commit()
