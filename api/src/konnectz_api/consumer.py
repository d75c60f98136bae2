"""Persists task events from JetStream as task logs (one per run, deduplicated on run_id)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import FetchTimeoutError
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.crud import quota
from konnectz_api.deployer import Deployer, DeployError
from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import Konnect, Task, TaskLog
from konnectz_runner.events import STREAM_EVENTS, SUBJECTS_EVENTS, TaskEvent
from konnectz_runner.outage import Outage

log = logging.getLogger(__name__)
DURABLE = "api-task-logs"


def _log_data(event: TaskEvent) -> dict[str, Any]:
    """The task log's key/value map: the trigger's data and each step's output, by node id."""
    data: dict[str, Any] = {event.trigger_id: event.trigger_output}
    for step in event.steps:
        data[step.step_id] = step.output if step.error is None else {"error": step.error}
    return data


def store_event(session: Session, event: TaskEvent) -> bool:
    """Insert the run; False when it was stored before (a redelivery) or its konnect is gone."""
    owner = session.scalar(select(Konnect.owner_id).where(Konnect.id == event.konnect_id))
    if owner is not None and event.owner_id == 0:  # a run no runner could load: its konnect's owner
        event = event.model_copy(update={"owner_id": owner})
    if owner is None or owner != event.owner_id:
        log.warning(
            "dropping task event %s: konnect %s unknown for owner %s", event.run_id, event.konnect_id, event.owner_id
        )
        return False
    stmt = (
        insert(TaskLog)
        .values(
            run_id=event.run_id,
            owner_id=event.owner_id,
            konnect_id=event.konnect_id,
            status=event.status,
            started_at=event.started_at,
            task_date=event.finished_at,
            data=jsonb_safe(_log_data(event)),
            attempts=event.attempts,
            replay_of=event.replay_of,
        )
        .on_conflict_do_nothing(index_elements=["run_id"])
        .returning(TaskLog.id)
    )
    task_log_id = session.scalar(stmt)
    if task_log_id is None:
        session.rollback()
        return False
    for position, step in enumerate(event.steps):
        session.add(
            Task(
                task_log_id=task_log_id,
                position=position,
                step_id=step.step_id,
                app_name=step.name,
                status=step.status,
                task_date=step.finished_at,
                data=jsonb_safe({"input": step.input, "output": step.output, "error": step.error}),
            )
        )
    # Every executed action counts one task, settled once (only when this insert created the run) against
    # what the run reserved before it executed. A refused run executed nothing and counts none.
    executed = 0 if event.refused is not None else len(event.steps)
    quota.settle(session, run_id=event.run_id, owner_id=event.owner_id, tasks=executed)
    session.commit()
    return True


async def consume_task_events(
    bus: Bus, sessions: sessionmaker[Session], stop: asyncio.Event, deployer: Deployer | None = None
) -> None:
    await bus.ready.wait()
    js = bus.js
    sub = await js.pull_subscribe(
        SUBJECTS_EVENTS,
        durable=DURABLE,
        stream=STREAM_EVENTS,
        config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=30, max_ack_pending=1000),
    )

    fetching = Outage("Task events (NATS)", log)
    storing = Outage("Storing task events (database)", log)

    def _store(event: TaskEvent) -> bool:
        with sessions() as session:
            return store_event(session, event)

    while not stop.is_set():
        try:
            msgs = await sub.fetch(batch=50, timeout=1)
        except (FetchTimeoutError, TimeoutError):
            continue
        except Exception as exc:  # NATS reconnecting: wait and retry, messages stay in the stream
            fetching.failed(exc)
            await asyncio.sleep(1)
            continue
        fetching.ok()
        for msg in msgs:
            try:
                event = TaskEvent.model_validate_json(msg.data)
            except ValidationError as exc:
                log.error("invalid task event on %s dropped: %s", msg.subject, exc)
                await msg.term()
                continue
            try:
                stored = await asyncio.to_thread(_store, event)
            except Exception as exc:  # one line per outage, not a traceback per event
                storing.failed(exc, f" (run {event.run_id} will be redelivered)")
                with contextlib.suppress(Exception):
                    await msg.nak(delay=2)
                continue
            storing.ok()
            await msg.ack()
            if stored and deployer is not None:
                try:
                    await deployer.record_run(event)
                except DeployError as exc:  # the task log holds the run; the resource status is a courtesy
                    log.warning("run %s: %s", event.run_id, exc)
