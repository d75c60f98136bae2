"""Durable waits in NATS: ``KZ_WAITS`` (one entry per waiting run) and ``KZ_REVISIONS`` (the specs
suspended runs started on). Contract: :mod:`konnectz_contracts.waits`; how it fits: docs/waits.md.

A wait is decided once, by a compare-and-set on its entry (``kv.update(..., last=revision)``):

- a call (:func:`decide_call`, the ingress' ``/resume/<token>``): the entry becomes ``decided: call``
  with the call's body; then the resumed run is published (``Nats-Msg-Id: resume:<key>``). The
  timeout's timer stays: when it fires, the worker finds the wait decided and drops it. A call that
  comes before the run reached the wait stores an *early* entry: the run resumes at once when it
  gets there (:func:`store_waiting`).
- the timeout (:func:`on_delivery`, in the worker): the timer delivers the waiting run; the worker
  decides ``timeout`` (or ``cancel``, when run control cancelled the run and woke it) and goes on.

Crashes: a call decided but not published (the ingress died between the two) is published by the
timer's delivery (which finds the decision and publishes the same resumed run, deduplicated by its
Msg-Id) or by the next call to the link (answered 410 all the same). A delivery that finds the wait
resumed already and is a first delivery (``num_delivered`` 1) is a duplicate and dropped; a
redelivery of the message that resumed it (its worker died) goes on, its steps' journal keeping
what already ran from running again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from konnectz_contracts.events import STREAM_RUNS, RunRequest, encode_run, run_subject
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.waits import KV_REVISIONS, KV_WAITS, WAITS_TTL_SECONDS, WaitEntry, revision_key, wait_key
from konnectz_runner.bus.kv import kv_config

__all__ = [
    "CallAnswer",
    "bucket_configs",
    "decide_call",
    "load_revision",
    "on_delivery",
    "publish_resumed",
    "remember_revision",
    "store_waiting",
    "wait_buckets",
    "wait_status",
]

log = logging.getLogger(__name__)

_PUBLISH_TIMEOUT = 10.0
_TRIES = 8


def bucket_configs(replicas: int = 1) -> list[Any]:
    """KZ_WAITS and KZ_REVISIONS as Konnectz creates them."""
    return [
        kv_config(KV_WAITS, ttl=WAITS_TTL_SECONDS, replicas=replicas),
        kv_config(KV_REVISIONS, ttl=WAITS_TTL_SECONDS, replicas=replicas),
    ]


async def wait_buckets(js: JetStreamContext) -> tuple[KeyValue, KeyValue]:
    """(KZ_WAITS, KZ_REVISIONS); they exist once ensure_streams ran."""
    return await js.key_value(KV_WAITS), await js.key_value(KV_REVISIONS)


def _now() -> datetime:
    return datetime.now(UTC)


async def _read(kv: KeyValue, key: str) -> tuple[WaitEntry, int] | None:
    try:
        entry = await kv.get(key)
    except KeyNotFoundError:
        return None
    if not entry.value or entry.revision is None:
        return None
    try:
        return WaitEntry.model_validate_json(entry.value), entry.revision
    except ValidationError:
        return None


def _encode(entry: WaitEntry) -> bytes:
    return entry.model_dump_json(exclude_defaults=True).encode()


def resumed_run(entry: WaitEntry) -> RunRequest:
    """The waiting run of ``entry`` with its wait decided as the entry says."""
    assert entry.run is not None and entry.run.resume is not None and entry.run.resume.wait is not None
    wait = entry.run.resume.wait.model_copy(
        update={"decided": entry.decided, "decided_at": entry.decided_at, "body": entry.body}
    )
    return entry.run.model_copy(update={"resume": entry.run.resume.model_copy(update={"wait": wait})})


async def publish_resumed(js: JetStreamContext, entry: WaitEntry) -> None:
    """Publish the resumed run of a wait decided by a call (the same Msg-Id each time: stored once)."""
    run = resumed_run(entry)
    assert run.resume is not None and run.resume.wait is not None
    await js.publish(
        run_subject(run.konnect_id),
        encode_run(run),
        headers={"Nats-Msg-Id": f"resume:{run.resume.wait.key}"},
        stream=STREAM_RUNS,
        timeout=_PUBLISH_TIMEOUT,
    )


async def store_waiting(js: JetStreamContext, kv: KeyValue, waiting: RunRequest) -> bool:
    """Store the wait of ``waiting`` (its continuation's wait undecided). True when a call came before
    the run got here (an early entry): the resumed run is published at once and no timer is needed."""
    assert waiting.resume is not None and waiting.resume.wait is not None
    wait = waiting.resume.wait
    entry = WaitEntry(
        run_id=waiting.run_id,
        konnect_id=waiting.konnect_id,
        step_id=waiting.resume.after_step,
        since=wait.since,
        until=wait.until,
        run=waiting,
    )
    for _ in range(_TRIES):
        try:
            await kv.create(wait.key, _encode(entry))
            return False
        except KeyWrongLastSequenceError:
            pass
        found = await _read(kv, wait.key)
        if found is None:
            continue
        stored, revision = found
        if stored.decided != "call" or stored.run is not None:
            return stored.decided == "call"  # stored by an earlier delivery of this run
        decided = stored.model_copy(update={"run": waiting, "since": wait.since, "until": wait.until})
        try:
            await kv.update(wait.key, _encode(decided), last=revision)
        except KeyWrongLastSequenceError:
            continue
        await publish_resumed(js, decided)
        log.info("Run %s: its wait %s was called before it began: resumed at once", waiting.run_id, entry.step_id)
        return True
    raise RuntimeError(f"the wait of run {waiting.run_id} could not be stored (its entry kept changing)")


class CallAnswer:
    """What the resume endpoint answers: an HTTP status and a JSON body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body


def _used(entry: WaitEntry) -> str:
    at = (entry.decided_at or _now()).isoformat().replace("+00:00", "Z")
    if entry.decided == "call":
        return f"This link was used already: the run was resumed by a call at {at}"
    if entry.decided == "timeout":
        return f"This link has expired: the wait timed out at {at}"
    return f"This link has expired: the run was cancelled at {at}"


async def decide_call(
    js: JetStreamContext, kv: KeyValue, konnect_id: int, run_id: str, step_id: str, body: dict[str, Any]
) -> CallAnswer:
    """Decide the wait of (``run_id``, ``step_id``) by a call with ``body``: once (200), or 410 when it
    was decided before (used, timed out, cancelled); 202 when the run has not reached the wait yet."""
    key = wait_key(run_id, step_id)
    for _ in range(_TRIES):
        found = await _read(kv, key)
        now = _now()
        if found is None:
            early = WaitEntry(
                run_id=run_id, konnect_id=konnect_id, step_id=step_id, decided="call", decided_at=now, body=body
            )
            early.early = True
            try:
                await kv.create(key, _encode(early))
            except KeyWrongLastSequenceError:
                continue
            return CallAnswer(202, {"status": "accepted", "run_id": run_id, "note": "resumes when it reaches the wait"})
        entry, revision = found
        if entry.konnect_id != konnect_id:
            return CallAnswer(404, {"error": "No such wait"})
        if entry.decided is not None:
            if entry.decided == "call" and entry.resumed_at is None and entry.run is not None:
                await publish_resumed(js, entry)  # its first publish may have been lost
            return CallAnswer(410, {"error": _used(entry), "decided": entry.decided})
        decided = entry.model_copy(update={"decided": "call", "decided_at": now, "body": body})
        encode_run(resumed_run(decided))  # Unstorable (413) before anything is decided
        try:
            await kv.update(key, _encode(decided), last=revision)
        except KeyWrongLastSequenceError:
            continue  # another call (or the timeout) decided first
        # The timeout's timer is left to fire: its delivery finds the wait decided and is dropped. Deleting
        # it now would cost NATS about 30 ms with 10,000 timers in KZ_RUNS (docs/waits.md, Bench).
        await publish_resumed(js, decided)
        return CallAnswer(200, {"status": "resumed", "run_id": run_id})
    return CallAnswer(409, {"error": "The wait is being decided; try again"})


async def wait_status(kv: KeyValue, konnect_id: int, run_id: str, step_id: str) -> CallAnswer:
    """What a GET of the resume URL answers: the wait's state, changing nothing."""
    found = await _read(kv, wait_key(run_id, step_id))
    if found is None or found[0].konnect_id != konnect_id:
        return CallAnswer(404, {"error": "No run waits on this link (yet)"})
    entry = found[0]
    if entry.decided is not None:
        return CallAnswer(410, {"error": _used(entry), "decided": entry.decided})
    until = entry.until.isoformat().replace("+00:00", "Z") if entry.until else None
    return CallAnswer(200, {"status": "waiting", "run_id": run_id, "until": until, "resume_with": "POST"})


async def on_delivery(
    js: JetStreamContext,
    kv: KeyValue,
    run: RunRequest,
    num_delivered: int,
    cancelled: Callable[[], Awaitable[bool]],
) -> RunRequest | None:
    """The run to execute for this delivery of a waiting run, or None to drop the delivery.

    A resumed run (decided by a call) marks its entry resumed. The timeout's timer (or a cancel's wake)
    decides the wait ``timeout`` (``cancel``) unless a call did first: then it is dropped (after
    publishing the call's resumed run again, in case its first publish was lost)."""
    assert run.resume is not None and run.resume.wait is not None
    wait = run.resume.wait
    for _ in range(_TRIES):
        found = await _read(kv, wait.key)
        now = _now()
        if found is None:  # the entry is gone (expired, or a bucket made anew): the timer decides
            if wait.decided is not None:
                return run
            return _decided(run, "timeout", now)
        entry, revision = found
        if entry.resumed_at is not None:
            # Resumed already: a first delivery is a duplicate; a redelivery is the message that resumed
            # it, whose worker died (a timer's, when the call decided, was to be dropped all the same).
            if num_delivered == 1 or (wait.decided is None and entry.decided == "call"):
                return None
            return _decided(run, entry.decided or "timeout", entry.decided_at)
        if wait.decided is None and entry.decided == "call":
            if entry.run is not None:
                await publish_resumed(js, entry)
            return None
        decision = entry.decided or wait.decided
        if decision is None:
            decision = "cancel" if await cancelled() else "timeout"
        done = entry.model_copy(
            update={"decided": decision, "decided_at": entry.decided_at or now, "run": None, "body": None}
        )
        done.resumed_at = now
        try:
            await kv.update(wait.key, _encode(done), last=revision)
        except KeyWrongLastSequenceError:
            continue
        if wait.decided is not None:
            return run
        return _decided(run, decision, done.decided_at)
    raise RuntimeError(f"the wait of run {run.run_id} could not be decided (its entry kept changing)")


def _decided(run: RunRequest, decision: Any, at: datetime | None) -> RunRequest:
    assert run.resume is not None and run.resume.wait is not None
    wait = run.resume.wait.model_copy(update={"decided": decision, "decided_at": at or _now()})
    return run.model_copy(update={"resume": run.resume.model_copy(update={"wait": wait})})


async def remember_revision(kv: KeyValue, spec: FlowSpec, known: set[str]) -> None:
    """Keep ``spec`` as its revision (once per process), so runs suspended on it resume on it."""
    if spec.revision is None:
        return
    key = revision_key(spec.konnect_id, spec.revision)
    if key in known:
        return
    await kv.put(key, spec.model_dump_json().encode())
    known.add(key)


async def load_revision(kv: KeyValue, konnect_id: int, revision: int) -> FlowSpec | None:
    """The spec of ``konnect_id``'s ``revision`` kept by :func:`remember_revision` (None: not kept)."""
    try:
        entry = await kv.get(revision_key(konnect_id, revision))
    except (KeyNotFoundError, BucketNotFoundError):
        return None
    if not entry.value:
        return None
    try:
        return FlowSpec.model_validate_json(entry.value)
    except ValidationError:
        return None
