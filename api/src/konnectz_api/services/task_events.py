"""Persists task events from JetStream as task logs (one per run, deduplicated on run_id).

Events are fetched many at a time (up to ``task_events_batch``) and stored in one transaction:
one multi-row INSERT of the task logs (``ON CONFLICT (run_id) DO NOTHING``, so a redelivered run is
harmless), one of their tasks, one DELETE of their quota reservations and one UPDATE per owner to
settle the tasks. A batch that cannot be stored is retried one event at a time, so one bad event
cannot hold back the others. Payloads larger than ``task_payload_inline_bytes`` go to
``task_payloads`` (:mod:`konnectz_api.crud.task_payloads`).

No event is retried for ever: one that could not be stored is handed back with a growing delay
(2 s doubling to 60 s); while the database is unreachable that goes on (up to the consumer's
``max_deliver``, :data:`~konnectz_contracts.events.EVENTS_MAX_DELIVER`, about 3 hours), but an event the
database refuses for its content (:data:`POISON_ATTEMPTS` times) is stored without its data, as an
ERROR task log that says why (:func:`without_data`); so is any event on its last delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC
from typing import Any

import orjson
import psycopg
from nats.aio.msg import Msg
from nats.js.errors import FetchTimeoutError
from psycopg.types.array import ListBinaryDumper
from psycopg.types.json import Jsonb
from pydantic import ValidationError
from sqlalchemy import TextClause, delete, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api import observability
from konnectz_api.bus import Bus
from konnectz_api.core.config import get_settings
from konnectz_api.core.jsontext import dumps
from konnectz_api.crud import requests, task_payloads
from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import Konnect, QuotaReservation, User
from konnectz_api.services.deployer import Deployer, DeployError
from konnectz_api.services.error_flows import start_error_flows
from konnectz_api.services.failure_alerts import alert_failures
from konnectz_api.task_status import log_status
from konnectz_contracts.events import EVENTS_MAX_DELIVER, STREAM_EVENTS, SUBJECTS_EVENTS, TaskEvent
from konnectz_runner import Outage
from konnectz_runner.bus import events_consumer_config

log = logging.getLogger(__name__)
DURABLE = "api-task-logs"  # konnectz_contracts.events.EVENTS_CONSUMER
#: Deliveries of an event the database refuses for its content before it is stored without its data.
POISON_ATTEMPTS = 3


def _transient(error: BaseException) -> bool:
    """A failure of the database connection (retry), not of the event's content."""
    import psycopg
    from sqlalchemy.exc import (  # local: its TimeoutError would hide the builtin one the consumer catches
        DisconnectionError,
        InterfaceError,
        OperationalError,
        TimeoutError,
    )

    return isinstance(
        error, OperationalError | InterfaceError | DisconnectionError | TimeoutError | psycopg.OperationalError
    ) or isinstance(error, OSError)


def without_data(event: TaskEvent, error: BaseException, attempts: int) -> TaskEvent:
    """The event as an ERROR task log without its data: the request and the steps' inputs and outputs
    are replaced by why (the steps, their statuses and errors stay)."""
    reason = (
        f"The task log could not be stored as the runner sent it ({type(error).__name__}: {str(error)[:300]}); "
        f"it was stored without its data after {attempts} attempts."
    )
    return event.model_copy(
        update={
            "status": "ERROR",
            "trigger_output": {"dropped": True, "message": reason},
            "steps": [
                s.model_copy(update={"input": {}, "output": None, "error": s.error and s.error[:2000]})
                for s in event.steps
            ],
            # Nothing of what was sent that the database could refuse: bounded numbers, no ids.
            "attempts": max(1, min(event.attempts, 1000)),
            "konnect_name": event.konnect_name[:200],
            "trace_id": None,
            "span_id": None,
            "replay_of": None,
            "called_by": None,
        }
    )


def _revision(event: TaskEvent) -> int | None:
    """The revision the run executed, when it is one the column can hold (else unknown)."""
    revision = event.revision
    return revision if revision is not None and 1 <= revision <= 2**31 - 1 else None


def _called_by(event: TaskEvent) -> dict[str, Any] | None:
    """Call a flow: the run that called this one, for the task log."""
    link = event.called_by
    if link is None:
        return None
    return {
        "konnect_id": link.konnect_id,
        "konnect_name": link.konnect_name,
        "run_id": link.run_id,
        "step_id": link.step_id,
    }


def _calls(event: TaskEvent) -> list[dict[str, Any]] | None:
    """Call a flow: the runs this run's Call a Flow steps and its Agents' sub-flow tools started, for the
    task log."""
    found = []
    for step in event.steps:
        output = step.output or {}
        if step.app == "call_flow" and isinstance(output.get("run_id"), str):
            found.append(
                {
                    "step_id": step.step_id,
                    "run_id": output["run_id"][:64],
                    "flow_id": output.get("flow_id"),
                    "flow_name": str(output.get("flow_name") or "")[:200],
                }
            )
        elif step.app == "agent" and isinstance(output.get("tool_calls"), list):
            for call in output["tool_calls"]:
                detail = call.get("detail") if isinstance(call, dict) and call.get("kind") == "flow" else None
                if isinstance(detail, dict) and isinstance(detail.get("run_id"), str):
                    found.append(
                        {
                            "step_id": step.step_id,
                            "run_id": detail["run_id"][:64],
                            "flow_id": detail.get("flow_id") if isinstance(detail.get("flow_id"), int) else None,
                            "flow_name": str(detail.get("flow_name") or "")[:200],
                        }
                    )
    return found[:1000] or None


def retry_delay(attempts: int) -> float:
    """Seconds before an event that could not be stored is offered again: 2, 4, 8, ... up to 60."""
    return float(min(2 ** max(attempts, 1), 60))


def _log_data(event: TaskEvent) -> dict[str, Any]:
    """The task log's key/value map: the trigger's data and each step's output, by node id."""
    data: dict[str, Any] = {event.trigger_id: event.trigger_output}
    for step in event.steps:
        data[step.step_id] = step.output if step.error is None else {"error": step.error}
    return data


LOG_COLUMNS = {
    "run_id": "text",
    "owner_id": "bigint",
    "konnect_id": "bigint",
    "status": "text",
    "started_at": "timestamptz",
    "task_date": "timestamptz",
    "data": "jsonb",
    "trace_id": "text",
    "attempts": "integer",
    "replay_of": "text",
    "revision": "integer",  # revisions
    "cancelled_by": "text",
    "called_by": "jsonb",  # call a flow
    "calls": "jsonb",
}
TASK_COLUMNS = {
    "task_log_id": "bigint",
    "position": "integer",
    "step_id": "text",
    "app_name": "text",
    "status": "text",
    "started_at": "timestamptz",
    "task_date": "timestamptz",
    "data": "jsonb",
}


def _unnest_insert(table: str, columns: dict[str, str], suffix: str = "") -> TextClause:
    names = ", ".join(columns)
    arrays = ", ".join(f"CAST(:{c} AS {t}[])" for c, t in columns.items())
    return text(f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}){suffix}")  # noqa: S608 (constants)


_INSERT_LOGS = _unnest_insert("task_logs", LOG_COLUMNS, " ON CONFLICT (run_id) DO NOTHING RETURNING run_id, id")
_INSERT_TASKS = _unnest_insert("tasks", TASK_COLUMNS)


def _json(value: Any) -> bytes:
    """The JSON text stored in a JSONB column (non-string keys allowed, as orjson writes them)."""
    return dumps(value, orjson.OPT_NON_STR_KEYS)


class _BinaryArray(list[Any]):
    """A JSONB column of a batch, sent to PostgreSQL in binary: psycopg's text format escapes every
    quote of every JSON value with a regular expression, a third of the api's CPU storing task events
    (issue 34); the binary format sends each value's bytes as they are."""


# Every connection made after this takes it (psycopg copies the global adapters when it connects); the
# module is imported by the app before its engines connect.
psycopg.adapters.register_dumper(_BinaryArray, ListBinaryDumper)


def _columns(rows: list[dict[str, Any]], columns: dict[str, str]) -> dict[str, list[Any]]:
    """The rows as one array per column (JSON ones as psycopg Jsonb values, in binary)."""
    return {
        c: _BinaryArray(Jsonb(r[c], dumps=_json) for r in rows) if t == "jsonb" else [r[c] for r in rows]
        for c, t in columns.items()
    }


def store_events(session: Session, events: Sequence[TaskEvent], *, inline_limit: int | None = None) -> list[bool]:
    """Insert the runs in one transaction; per event, False when it was stored before (a redelivery)
    or its konnect is gone. Commits."""
    events = list(events)
    limit = inline_limit if inline_limit is not None else get_settings().task_payload_inline_bytes
    ids = {e.konnect_id for e in events}
    owners = dict(session.execute(select(Konnect.id, Konnect.owner_id).where(Konnect.id.in_(ids))).all())
    valid: dict[str, TaskEvent] = {}
    for position, event in enumerate(events):
        owner = owners.get(event.konnect_id)
        if owner is not None and event.owner_id == 0:  # a run no runner could load: its konnect's owner
            event = events[position] = event.model_copy(update={"owner_id": owner})
        if owner != event.owner_id:
            log.warning(
                "dropping task event %s: konnect %s unknown for owner %s",
                event.run_id,
                event.konnect_id,
                event.owner_id,
            )
        elif event.run_id not in valid:
            valid[event.run_id] = event
    if not valid:
        session.rollback()
        return [False] * len(events)
    rows = []
    external: list[tuple[str, int, int, Any]] = []  # run_id, position, size, data
    for event in valid.values():
        data, size = task_payloads.offload(jsonb_safe(_log_data(event)), limit=limit)
        if size is not None:
            external.append((event.run_id, task_payloads.LOG_POSITION, size, jsonb_safe(_log_data(event))))
        rows.append(
            {
                "run_id": event.run_id,
                "owner_id": event.owner_id,
                "konnect_id": event.konnect_id,
                "status": log_status(event),
                "started_at": event.started_at,
                "task_date": event.finished_at,
                "data": data,
                "trace_id": event.trace_id,
                "attempts": event.attempts,
                "replay_of": event.replay_of,
                "revision": _revision(event),
                "cancelled_by": event.cancelled_by,
                "called_by": jsonb_safe(_called_by(event)),
                "calls": jsonb_safe(_calls(event)),
            }
        )
    # One fixed statement whatever the batch size (columns as arrays, unnest): prepared once per
    # connection. SQLAlchemy's multi-row VALUES had a different text for every batch size, which
    # psycopg parsed afresh each time (about a sixth of the api's CPU under load).
    inserted: dict[str, int] = dict(session.execute(_INSERT_LOGS, _columns(rows, LOG_COLUMNS)).all())
    if not inserted:
        session.rollback()
        return [False] * len(events)
    tasks = []
    for run_id, task_log_id in inserted.items():
        for position, step in enumerate(valid[run_id].steps):
            record: dict[str, Any] = {"input": step.input, "output": step.output, "error": step.error}
            if step.stop is not None:  # a filter that did not pass: why the run (or its item) stopped
                record["stop"] = step.stop
            if step.path is not None:  # a step on a router's path: "<router id>/<path name>"
                record["path"] = step.path
            if step.wait_reason is not None:  # rate budgets: the step waited for its app account's budget
                record["wait_reason"] = step.wait_reason
                record["waited_seconds"] = step.waited_seconds
            if step.retries:  # on_error: the attempts that failed before the last one
                record["retries"] = [a.model_dump(mode="json") for a in step.retries]
            if step.continued:  # on_error: it failed and the run went on
                record["continued"] = True
            if step.wait is not None:  # waits: whom it waited for, since, until, what resumed it
                record["wait"] = step.wait.model_dump(mode="json")
            full = jsonb_safe(record)
            data, size = task_payloads.offload(full, limit=limit)
            if size is not None:
                external.append((run_id, position, size, full))
            tasks.append(
                {
                    "task_log_id": task_log_id,
                    "position": position,
                    "step_id": step.step_id,
                    "app_name": step.name,
                    "status": step.status,
                    "started_at": step.started_at,
                    "task_date": step.finished_at,
                    "data": data,
                }
            )
    if tasks:
        session.execute(_INSERT_TASKS, _columns(tasks, TASK_COLUMNS))
    task_payloads.store(session, ((inserted[r], p, s, d) for r, p, s, d in external if r in inserted))
    # Every executed action counts one task, settled once (only for runs this insert created) against
    # what the run reserved before it executed. A refused run executed nothing and counts none.
    reserved = dict(
        session.execute(
            delete(QuotaReservation)
            .where(QuotaReservation.run_id.in_(list(inserted)))
            .returning(QuotaReservation.run_id, QuotaReservation.tasks)
        ).all()
    )
    debits: dict[int, int] = defaultdict(int)
    for run_id in inserted:
        event = valid[run_id]
        # A step of a router path that was not chosen (SKIPPED) did not run: it counts no task.
        executed = 0 if event.refused is not None else sum(s.status != "SKIPPED" for s in event.steps)
        debits[event.owner_id] += executed - int(reserved.get(run_id) or 0)
    for owner_id, tasks_count in sorted(debits.items()):
        if tasks_count:
            session.execute(
                update(User).where(User.id == owner_id).values(task_consumed=User.task_consumed + tasks_count)
            )
    session.commit()
    out: list[bool] = []
    for event in events:  # the same run twice in one batch is stored (and reported stored) once
        out.append(event.run_id in inserted and valid.get(event.run_id) is event)
        if out[-1]:
            del inserted[event.run_id]
    return out


def store_event(session: Session, event: TaskEvent) -> bool:
    """Insert one run; False when it was stored before (a redelivery) or its konnect is gone."""
    return store_events(session, [event])[0]


def _counts_today(sessions: sessionmaker[Session], events: list[TaskEvent]) -> dict[int, tuple[int, int]]:
    """(runs, failures) of each event's konnect on the UTC day of its run, from the task logs
    (one query on the (owner, konnect, status, date) index)."""
    if not events:
        return {}
    day = min(e.finished_at for e in events).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    pairs = {(e.owner_id, e.konnect_id) for e in events}
    sql = text(
        "SELECT konnect_id, count(*), count(*) FILTER (WHERE status = 'ERROR') FROM task_logs "
        "WHERE (owner_id, konnect_id) IN "
        "(SELECT * FROM unnest(CAST(:owners AS bigint[]), CAST(:konnects AS bigint[]))) "
        "AND task_date >= :day GROUP BY konnect_id"
    )
    with sessions() as session:
        rows = session.execute(
            sql, {"owners": [o for o, _ in pairs], "konnects": [k for _, k in pairs], "day": day}
        ).all()
    return {int(k): (int(runs), int(failures)) for k, runs, failures in rows}


def _store_batch(
    sessions: sessionmaker[Session], events: list[TaskEvent]
) -> tuple[list[bool | None], Exception | None]:
    """Store the batch in one transaction; if that fails, one by one (None: that event failed, and
    the last error)."""
    try:
        with sessions() as session:
            return list(store_events(session, events)), None
    except Exception as exc:
        if len(events) == 1:
            return [None], exc
        log.debug("storing %d task events together failed (%s); one by one", len(events), exc)
    out: list[bool | None] = []
    error: Exception | None = None
    for event in events:
        try:
            with sessions() as session:
                out.append(store_events(session, [event])[0])
        except Exception as exc:
            error = exc
            out.append(None)
    return out, error


#: A failed run's event is handed back at most this many times for its error flows (then acked: its
#: task log is stored; the error flows' runs were not, and the api's log says so).
ERROR_FLOW_ATTEMPTS = 5


async def _start_error_flows(
    bus: Bus, sessions: sessionmaker[Session], events: list[TaskEvent], outcomes: list[bool | None]
) -> set[str]:
    """Start the error flows of the batch's failed runs whose task logs are stored (now or before); the
    run ids whose error flows could not be started (their events are handed back)."""
    failed = [e for e, stored in zip(events, outcomes, strict=True) if stored is not None and e.status == "ERROR"]
    if not failed:
        return set()
    try:
        await start_error_flows(bus, sessions, failed)
    except Exception as exc:  # NATS (or the database) unavailable: the events are redelivered
        why = exc or type(exc).__name__
        log.warning("error flows not started for %d failed run(s), retrying: %s", len(failed), why)
        return {e.run_id for e in failed}
    return set()


async def consume_task_events(
    bus: Bus, sessions: sessionmaker[Session], stop: asyncio.Event, deployer: Deployer | None = None
) -> None:
    await bus.ready.wait()
    js = bus.js
    batch = get_settings().task_events_batch
    config = events_consumer_config(max_ack_pending=max(1000, 4 * batch))
    # Create or update: a consumer made by an older api gets the bounded max_deliver.
    await js.add_consumer(STREAM_EVENTS, config=config)
    sub = await js.pull_subscribe(SUBJECTS_EVENTS, durable=DURABLE, stream=STREAM_EVENTS, config=config)

    fetching = Outage("Task events (NATS)", log)
    storing = Outage("Storing task events (database)", log)

    while not stop.is_set():
        try:
            msgs = await sub.fetch(batch=batch, timeout=1)
        except (FetchTimeoutError, TimeoutError):
            continue
        except Exception as exc:  # NATS reconnecting: wait and retry, messages stay in the stream
            fetching.failed(exc)
            await asyncio.sleep(1)
            continue
        fetching.ok()
        observability.QUEUE_DEPTH.set(msgs[-1].metadata.num_pending if msgs else 0)
        events: list[TaskEvent] = []
        good: list[Msg] = []
        for msg in msgs:
            try:
                events.append(TaskEvent.model_validate_json(msg.data))
                good.append(msg)
            except ValidationError as exc:
                log.error("invalid task event on %s dropped: %s", msg.subject, exc)
                await msg.term()
        if not events:
            continue
        started = time.perf_counter()
        outcomes, error = await asyncio.to_thread(_store_batch, sessions, events)
        if error is not None:  # one line per outage, not a traceback per event
            failed = sum(1 for o in outcomes if o is None)
            storing.failed(error, f" ({failed} task event(s) will be redelivered)")
        else:
            storing.ok()
        observability.record_stored(events, outcomes, time.perf_counter() - started)
        # Error flows (docs/on-error.md): started before the failed runs' events are acked, so when NATS
        # does not take them the events come back and they are started then (once: stable run ids).
        retry_later = await _start_error_flows(bus, sessions, events, outcomes)
        latest: dict[int, TaskEvent] = {}
        finished: list[TaskEvent] = []
        for msg, event, stored in zip(good, events, outcomes, strict=True):
            if stored is not None and event.run_id in retry_later:
                if msg.metadata.num_delivered < ERROR_FLOW_ATTEMPTS:
                    with contextlib.suppress(Exception):
                        await msg.nak(delay=retry_delay(msg.metadata.num_delivered))
                    continue
                log.error("run %s: its error flows were not started after %d tries", event.run_id, ERROR_FLOW_ATTEMPTS)
            if stored is None:
                attempts = msg.metadata.num_delivered
                assert error is not None
                if attempts >= EVENTS_MAX_DELIVER - 1 or (not _transient(error) and attempts >= POISON_ATTEMPTS):
                    stub = without_data(event, error, attempts)
                    _stored, stub_error = await asyncio.to_thread(_store_batch, sessions, [stub])
                    if stub_error is None:
                        log.error("run %s: %s", event.run_id, stub.trigger_output["message"])
                        await msg.ack()
                        continue
                with contextlib.suppress(Exception):
                    await msg.nak(delay=retry_delay(attempts))
                continue
            await msg.ack()
            if stored:
                latest[event.konnect_id] = event
                finished.append(event)
        if finished:  # run control: failure alerts (a courtesy: the task logs are stored)
            try:
                await alert_failures(bus, sessions, get_settings(), finished)
            except Exception as exc:
                log.warning("failure alerts were not sent: %s", exc or type(exc).__name__)
        if deployer is not None and latest:
            try:
                today = await asyncio.to_thread(_counts_today, sessions, list(latest.values()))
            except Exception as exc:  # the counts are a courtesy too
                log.warning("could not count today's runs: %s", exc)
                today = {}
            for event in latest.values():  # the resource shows the latest run of each konnect
                runs, failures = today.get(event.konnect_id, (None, None))
                try:
                    await deployer.record_run(event, runs_today=runs, failures_today=failures)
                except DeployError as exc:  # the task log holds the run; the resource status is a courtesy
                    log.warning("run %s: %s", event.run_id, exc)


async def purge_payloads_forever(sessions: sessionmaker[Session], settings: Any) -> None:
    """The retention job: every ``task_payload_purge_interval_seconds``, delete payloads older than
    ``task_payload_retention_days`` and replace the accepted requests of runs older than
    ``request_retention_days`` by a stub (:mod:`konnectz_api.crud.requests`; 0 keeps them)."""
    while True:
        try:

            def _purge() -> tuple[int, int]:
                with sessions() as session:
                    payloads = task_payloads.purge(session, older_than_days=settings.task_payload_retention_days)
                kept = requests.purge_shared(sessions, older_than_days=settings.request_retention_days)
                return payloads, kept

            purged, purged_requests = await asyncio.to_thread(_purge)
            if purged:
                log.info("purged %d task-log payloads older than %d days", purged, settings.task_payload_retention_days)
            if purged_requests:
                log.info(
                    "purged the requests of %d runs older than %d days",
                    purged_requests,
                    settings.request_retention_days,
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("purging task-log payloads and requests failed: %s", exc or type(exc).__name__)
        await asyncio.sleep(settings.task_payload_purge_interval_seconds)
