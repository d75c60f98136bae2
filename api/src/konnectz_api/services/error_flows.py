"""Error flows: a run of each "When a flow fails" flow for every failed run of the account's other flows.

The task-event consumer calls :func:`start_error_flows` with a batch's failed runs once their task
logs are stored, before it acknowledges their events: if NATS cannot take the error flows' runs,
the events are redelivered and this is tried again. Each error flow's run has a stable id
(:func:`konnectz_contracts.triggers.flow_failed.error_run_id`) and a ``Nats-Msg-Id``, so a redelivered
event starts it once (JetStream drops the duplicate within its window; later, the task log's run id
is unique and the journal keeps its steps with effects from running twice).

Which flows: the owner's Published flows whose live trigger is ``flow_failed``, naming the failed flow
or none, never the failed flow itself. A failed run of a flow whose own trigger is ``flow_failed``
starts none (no cascade). See docs/on-error.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.models import Konnect
from konnectz_api.task_status import log_status
from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.triggers.flow_failed import FAILED_STATUSES, error_run_id, failed_run_output
from konnectz_runner.bus import publish_run

__all__ = ["error_runs", "start_error_flows"]

log = logging.getLogger(__name__)

_KIND = "flow_failed"


def _named(konnect: Konnect) -> list[int]:
    """The flows an error flow's trigger names (none: every flow)."""
    spec = konnect.published_spec if isinstance(konnect.published_spec, dict) else {}
    trigger = spec.get("trigger")
    flows = trigger.get("flows") if isinstance(trigger, dict) else None
    return [f for f in flows if isinstance(f, int)] if isinstance(flows, list) else []


def error_runs(session: Session, failed: Sequence[TaskEvent]) -> list[RunRequest]:
    """The error flows' runs for these failed runs (one statement per owner), none for an error flow's own failure."""
    out: list[RunRequest] = []
    by_owner: dict[int, list[TaskEvent]] = {}
    for event in failed:
        if log_status(event) in FAILED_STATUSES:
            by_owner.setdefault(event.owner_id, []).append(event)
    for owner_id, events in by_owner.items():
        flows = session.scalars(
            select(Konnect).where(
                Konnect.owner_id == owner_id,
                Konnect.status == "Published",
                Konnect.published_spec["trigger"]["kind"].as_string() == _KIND,
            )
        ).all()
        if not flows:
            continue
        names = dict(
            session.execute(
                select(Konnect.id, Konnect.konnect_name).where(Konnect.id.in_({e.konnect_id for e in events}))
            ).all()
        )
        error_ids = {flow.id for flow in flows}
        for event in events:
            if event.konnect_id in error_ids:  # an error flow failed: no cascade
                continue
            for flow in flows:
                wanted = _named(flow)
                if wanted and event.konnect_id not in wanted:
                    continue
                out.append(
                    RunRequest(
                        run_id=error_run_id(event.run_id, flow.id),
                        konnect_id=flow.id,
                        trigger_output=failed_run_output(event, log_status(event), names.get(event.konnect_id) or ""),
                        received_at=datetime.now(UTC),
                    )
                )
    return out


async def start_error_flows(bus: Bus, sessions: sessionmaker[Session], failed: Sequence[TaskEvent]) -> None:
    """Publish the error flows' runs of these failed runs (raises when NATS does not take one)."""
    if not failed:
        return

    def load() -> list[RunRequest]:
        with sessions() as session:
            return error_runs(session, failed)

    for run in await asyncio.to_thread(load):
        await publish_run(bus.js, run)
        log.info("run %s of error flow %s started for a failed run", run.run_id, run.konnect_id)
