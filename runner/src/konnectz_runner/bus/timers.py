"""Durable timers: a RunRequest stored now and delivered to the run worker at a later instant.

A timer is a JetStream *scheduled message* (NATS 2.12+) in the ``KZ_RUNS`` stream, which allows
message schedules:

- subject ``kz.timers.<konnect_id>.<key>``, body the RunRequest (JSON),
- header ``Nats-Schedule: @at <RFC 3339 UTC>`` and ``Nats-Schedule-Target: kz.runs.<konnect_id>``,
- header ``Nats-Msg-Id: timer:<key>``: a worker that publishes the same timer again (the run was
  redelivered because the worker died between storing the timer and acking the run) is
  deduplicated by JetStream within its duplicate window.

At the due time the server itself publishes the body on ``kz.runs.<konnect_id>`` and purges the
timer, so the run worker's durable consumer receives the run like any other. The timer is file
storage in the stream: it survives a restart of the runner (nothing is held in memory) and of NATS
(the server re-arms the schedules of the stream when it starts; a due time that passed while it
was down fires at once). A due time already in the past when published fires at once, too.

Delays use it (:func:`schedule_continuation`). Nothing here sleeps.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from nats.js import JetStreamContext
from nats.js.api import PubAck

from konnectz_contracts.events import STREAM_RUNS, RunRequest, encode_run, run_subject

__all__ = ["PUBLISH_TIMEOUT_SECONDS", "continuation_key", "schedule_continuation", "schedule_run", "timer_subject"]

PUBLISH_TIMEOUT_SECONDS = 10.0


def timer_subject(konnect_id: int, key: str) -> str:
    return f"kz.timers.{int(konnect_id)}.{key}"


def continuation_key(run_id: str, after_step: str) -> str:
    """A subject-safe key for the continuation of ``run_id`` after ``after_step`` (one per delay of a run)."""
    return hashlib.sha256(f"{run_id}\x00{after_step}".encode()).hexdigest()[:40]


def _rfc3339(instant: datetime) -> str:
    if instant.tzinfo is None:
        raise ValueError("a timer's due time must be timezone-aware")
    instant = instant.astimezone(UTC)
    if instant.microsecond:  # schedules have whole seconds: never fire early
        instant = instant.replace(microsecond=0) + timedelta(seconds=1)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


async def schedule_run(js: JetStreamContext, run: RunRequest, due: datetime, *, key: str) -> PubAck:
    """Store ``run`` to be delivered to the run worker at ``due`` (whole seconds); returns JetStream's ack."""
    headers = {
        "Nats-Schedule": f"@at {_rfc3339(due)}",
        "Nats-Schedule-Target": run_subject(run.konnect_id),
        "Nats-Msg-Id": f"timer:{key}",
    }
    return await js.publish(
        timer_subject(run.konnect_id, key),
        encode_run(run),
        headers=headers,
        stream=STREAM_RUNS,
        timeout=PUBLISH_TIMEOUT_SECONDS,
    )


async def schedule_continuation(js: JetStreamContext, run: RunRequest, due: datetime, after_step: str) -> PubAck:
    """Store the suspended ``run`` (with ``resume`` set) to come back at ``due``."""
    assert run.resume is not None
    return await schedule_run(js, run, due, key=continuation_key(run.run_id, after_step))
