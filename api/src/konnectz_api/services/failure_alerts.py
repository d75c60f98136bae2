"""Failure alerts (run control): when a run of a flow with ``run_control.alert`` fails, e-mail its owner
and/or run another flow of the same owner with the failed run's details.

At most one alert per flow per ``digest_minutes`` (:mod:`konnectz_api.crud.failure_alerts`, in
PostgreSQL so every api process shares it): failures in between are counted; the next alert says
"N more failures since <time>", and :func:`flush_digests_forever` sends the count of a flow whose
failures stopped once its interval has passed.

Which runs: task logs with status ERROR or IN_DOUBT (a step failed). REFUSED runs (no task left) and
cancelled runs send no alert. The alert flow must be another Published flow of the same owner when the
alert goes out; otherwise the alert is e-mail only (and says so in the log). Its run's request (the
alert flow's trigger data) is :func:`alert_request`. Alerts are sent at most once: an e-mail that could
not be sent is logged, not retried.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.core.config import Settings
from konnectz_api.crud import failure_alerts
from konnectz_api.crud.failure_alerts import Due
from konnectz_api.models import Konnect, User
from konnectz_api.services.mail import send_mail
from konnectz_api.task_status import log_status
from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.run_control import FailureAlert
from konnectz_runner.bus import publish_run

__all__ = [
    "ALERTED_STATUSES",
    "FLUSH_SECONDS",
    "alert_failures",
    "alert_request",
    "flush_digests_forever",
    "send_due_digests",
]

log = logging.getLogger(__name__)

ALERTED_STATUSES = ("ERROR", "IN_DOUBT")
#: How often counted failures whose digest interval has passed are sent.
FLUSH_SECONDS = 30.0
_ALERT_NAMESPACE = uuid.UUID("6b7a2d61-6c65-7274-2d72-756e732d6964")
_MAX_ERROR_CHARS = 2000


def _alert_of(konnect: Konnect) -> FailureAlert | None:
    spec = konnect.published_spec or {}
    raw = (spec.get("run_control") or {}).get("alert") if isinstance(spec, dict) else None
    if not raw:
        return None
    try:
        return FailureAlert.model_validate(raw)
    except ValueError:
        return None


def _failed_step(event: TaskEvent) -> tuple[str | None, str | None, str | None]:
    """(step id, step name, error) of the step that failed."""
    for step in event.steps:
        if step.error is not None or step.status == "ERROR":
            return step.step_id, step.name, (step.error or "")[:_MAX_ERROR_CHARS]
    return None, None, None


def alert_request(konnect: Konnect, event: TaskEvent | None, due: Due) -> dict[str, Any]:
    """The trigger data of the alert flow's run: the failed run's details and the failures counted."""
    step_id, step_name, error = _failed_step(event) if event is not None else (None, None, None)
    return {
        "konnect_id": konnect.id,
        "konnect_name": konnect.konnect_name or (konnect.published_spec or {}).get("name") or "",
        "run_id": event.run_id if event is not None else None,
        "failed_at": event.finished_at.isoformat() if event is not None else None,
        "step_id": step_id,
        "step": step_name,
        "error": error,
        "more_failures": due.more,
        "more_since": due.since.isoformat() if due.since is not None else None,
    }


def _mail_text(settings: Settings, user: User, details: dict[str, Any]) -> tuple[str, str]:
    name = details["konnect_name"] or f"flow {details['konnect_id']}"
    base = settings.public_url.rstrip("/")
    link = f"{base}/logs (the flow: {base}/create/{details['konnect_id']})"
    more = (
        f"\n{details['more_failures']} more failures since {details['more_since']}.\n"
        if details["more_failures"]
        else ""
    )
    if details["run_id"] is None:  # a digest of counted failures
        subject = f"Konnectz: {name} failed {details['more_failures']} times"
        body = f"Your flow {name} failed {details['more_failures']} times since {details['more_since']}.\n"
    else:
        subject = f"Konnectz: {name} failed"
        body = (
            f"Your flow {name} failed at {details['failed_at']}.\n\n"
            f"Step: {details['step'] or '-'} ({details['step_id'] or '-'})\n"
            f"Error: {details['error'] or '-'}\nRun: {details['run_id']}\n{more}"
        )
    text = (
        f"Hi {user.first_name},\n\n{body}\nSee its history: {link}\n\n"
        "You get at most one such mail per flow per digest interval (the flow's Run settings).\n"
    )
    return subject, text


def _alert_flow(session: Session, alert: FailureAlert, owner_id: int) -> Konnect | None:
    if alert.run_konnect_id is None:
        return None
    other = session.get(Konnect, alert.run_konnect_id)
    if other is None or other.owner_id != owner_id or other.status != "Published":
        log.warning("failure alert: flow %s is not a Published flow of owner %s", alert.run_konnect_id, owner_id)
        return None
    return other


async def _send(
    bus: Bus, sessions: sessionmaker[Session], settings: Settings, konnect_id: int, event: TaskEvent | None, due: Due
) -> None:
    def load() -> tuple[Konnect, FailureAlert, User, Konnect | None] | None:
        with sessions() as session:
            konnect = session.get(Konnect, konnect_id)
            alert = _alert_of(konnect) if konnect is not None else None
            if konnect is None or alert is None:
                return None
            user = session.get(User, konnect.owner_id)
            if user is None:
                return None
            other = _alert_flow(session, alert, konnect.owner_id)
            session.expunge_all()
            return konnect, alert, user, other

    found = await asyncio.to_thread(load)
    if found is None:
        return
    konnect, alert, user, other = found
    details = alert_request(konnect, event, due)
    if alert.email:
        subject, text = _mail_text(settings, user, details)
        try:
            await asyncio.to_thread(send_mail, settings, to=user.email, subject=subject, text=text)
        except OSError as exc:
            log.error("failure alert mail for flow %s failed: %s", konnect.id, exc)
    if other is not None:
        key = event.run_id if event is not None else f"digest/{konnect.id}/{datetime.now(UTC).isoformat()}"
        run = RunRequest(
            run_id=uuid.uuid5(_ALERT_NAMESPACE, f"{key}/alert").hex,  # stored once, even if sent twice
            konnect_id=other.id,
            trigger_output={"failure": details},
            received_at=datetime.now(UTC),
            source="webhook",
        )
        try:
            await publish_run(bus.js, run)
        except Exception as exc:
            log.error("failure alert: flow %s was not started: %s", other.id, exc or type(exc).__name__)


async def alert_failures(
    bus: Bus, sessions: sessionmaker[Session], settings: Settings, events: Sequence[TaskEvent]
) -> None:
    """Alert (or count for the next digest) the stored runs that failed, of flows with an alert."""
    failed = [e for e in events if log_status(e) in ALERTED_STATUSES]
    if not failed:
        return

    def claims() -> list[tuple[TaskEvent, Due]]:
        out: list[tuple[TaskEvent, Due]] = []
        with sessions() as session:
            ids = {e.konnect_id for e in failed}
            konnects = {k.id: k for k in session.execute(select(Konnect).where(Konnect.id.in_(ids))).scalars()}
            alerts = {kid: _alert_of(k) for kid, k in konnects.items()}
            for event in sorted(failed, key=lambda e: e.finished_at):
                alert = alerts.get(event.konnect_id)
                konnect = konnects.get(event.konnect_id)
                if alert is None or konnect is None or konnect.owner_id != event.owner_id:
                    continue
                due = failure_alerts.claim(
                    session,
                    konnect_id=event.konnect_id,
                    owner_id=konnect.owner_id,
                    digest_minutes=alert.digest_minutes,
                    failed_at=event.finished_at,
                    now=datetime.now(UTC),
                )
                if due is not None:
                    out.append((event, due))
        return out

    for event, due in await asyncio.to_thread(claims):
        await _send(bus, sessions, settings, event.konnect_id, event, due)


async def send_due_digests(bus: Bus, sessions: sessionmaker[Session], settings: Settings) -> int:
    """Send the counted failures of flows whose digest interval has passed; how many were sent."""

    def due() -> list[tuple[int, Due]]:
        out: list[tuple[int, Due]] = []
        with sessions() as session:
            for row in failure_alerts.due_digests(session):
                konnect = session.get(Konnect, row.konnect_id)
                alert = _alert_of(konnect) if konnect is not None else None
                if alert is None:
                    continue
                flushed = failure_alerts.flush(
                    session, konnect_id=row.konnect_id, digest_minutes=alert.digest_minutes, now=datetime.now(UTC)
                )
                if flushed is not None:
                    out.append((row.konnect_id, flushed))
        return out

    sent = await asyncio.to_thread(due)
    for konnect_id, flushed in sent:
        await _send(bus, sessions, settings, konnect_id, None, flushed)
    return len(sent)


async def flush_digests_forever(bus: Bus, sessions: sessionmaker[Session], settings: Settings) -> None:
    """Every :data:`FLUSH_SECONDS`: :func:`send_due_digests`."""
    await bus.ready.wait()
    while True:
        try:
            await send_due_digests(bus, sessions, settings)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("sending failure digests failed: %s", exc or type(exc).__name__)
        await asyncio.sleep(FLUSH_SECONDS)
