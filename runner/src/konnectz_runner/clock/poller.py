"""Polling konnects: one request per interval, one run per new item, a cursor in ``KZ_POLLS``.

:func:`poll_once` sends the trigger's request: a catalogue app's trigger event through the generic
HTTP step's :func:`~konnectz_runner.engine.steps.app_event.call_event`
(:func:`~konnectz_runner.engine.app_items`: credentials from the api's credential broker at poll
time, retries on 429/5xx honouring Retry-After, pages, one refresh of an expired OAuth2 token), a
plain ``url`` trigger as it is (guarded and
redirect-safe like an API-call step, secret headers dropped on a cross-origin redirect). It picks
the new items with
:func:`~konnectz_contracts.triggers.polling.new_items`, stores one RunRequest per item (source
``polling``; the run id is derived from konnect and item, so an item is run once even if two
pollers see it), then stores the cursor. A failed poll stores the cursor with ``last_error`` and
starts nothing. ``konnectz-runner cursor --konnect-id N`` prints a cursor.

:class:`LocalPoller` polls every polling konnect of the runner's registry each
``interval_seconds``; it runs in local mode and in a konnect's own Deployment (spec-file mode).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from konnectz_contracts.errors import StepError
from konnectz_contracts.events import KV_POLLS, RunRequest, Unstorable, konnect_key
from konnectz_contracts.model import utcnow
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.apps import Budgets, NetGuard, outbound
from konnectz_runner.bus import KonnectRegistry, publish_run
from konnectz_runner.clock.ticking import Ticking, TriggerKey, keyed_triggers
from konnectz_runner.engine import MAX_POLL_BYTES, app_items

if TYPE_CHECKING:
    pass
from konnectz_contracts.triggers.polling import Cursor, PollingTrigger, fingerprint, new_items, pick_new, since_value

__all__ = ["LocalPoller", "poll_once", "read_cursor"]

log = logging.getLogger(__name__)

_RUN_ID_NAMESPACE = uuid.UUID("5e0c2a57-9f1d-4b8e-a6f3-2d4c8b1e7a90")


async def read_cursor(js: JetStreamContext, konnect_id: int) -> tuple[Cursor, int | None]:
    """The konnect's cursor and its KV revision (None: no cursor yet)."""
    kv = await js.key_value(KV_POLLS)
    try:
        entry = await kv.get(konnect_key(konnect_id))
    except KeyNotFoundError:
        return Cursor(), None
    if not entry.value:
        return Cursor(), entry.revision
    try:
        return Cursor.model_validate_json(entry.value), entry.revision
    except ValueError:
        log.warning("Ignoring a bad %s entry for konnect %s", KV_POLLS, konnect_id)
        return Cursor(), entry.revision


async def _store_cursor(js: JetStreamContext, konnect_id: int, cursor: Cursor, revision: int | None) -> bool:
    """Store the cursor if nobody else did since it was read; False when another poller won."""
    kv = await js.key_value(KV_POLLS)
    value = cursor.model_dump_json().encode()
    try:
        if revision is None:
            await kv.create(konnect_key(konnect_id), value)
        else:
            await kv.update(konnect_key(konnect_id), value, last=revision)
    except KeyWrongLastSequenceError:
        return False
    except Exception as exc:  # create on an existing key reports "wrong last sequence" as a BadRequest
        if "wrong last sequence" in str(exc).lower():
            return False
        raise
    return True


def _request(trigger: PollingTrigger, cursor: Cursor) -> httpx.Request:
    params: list[tuple[str, str | int | float | bool | None]] = [(p.key, p.value) for p in trigger.params]
    since = since_value(trigger, cursor)
    if since is not None and trigger.since_param:
        params.append((trigger.since_param, since))
    headers = {h.key: h.value for h in trigger.headers}
    headers.setdefault("Accept", "application/json")
    return httpx.Request(trigger.method, trigger.url or "", params=params, headers=headers)


def _output(item: Any) -> dict[str, Any]:
    return item if isinstance(item, dict) else {"value": item}


async def poll_once(
    js: JetStreamContext,
    spec: FlowSpec,
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    now: datetime | None = None,
    budgets: Budgets | None = None,
) -> list[RunRequest]:
    """Poll the konnect's app once; returns the runs started (none on the first poll)."""
    trigger = spec.trigger
    if not isinstance(trigger, PollingTrigger):
        raise ValueError(f"konnect {spec.konnect_id} has no polling trigger")
    now = now or utcnow()
    cursor, revision = await read_cursor(js, spec.konnect_id)
    source = fingerprint(trigger)
    if cursor.source is None and cursor.initialized:  # a cursor stored before sources were fingerprinted
        cursor = cursor.model_copy(update={"source": source})
    elif cursor.source != source:  # never polled, or another source before a re-publish: record afresh
        cursor = Cursor(source=source)
    secret = [h.key for h in trigger.headers if h.secret]
    try:
        if trigger.app_id is not None:
            found = await app_items(
                trigger,
                cursor,
                konnect_id=spec.konnect_id,
                owner_id=spec.owner_id,
                timezone=spec.timezone,
                http=http,
                guard=guard,
                budgets=budgets,
            )
            items, cursor_next, warnings = pick_new(trigger, found, cursor, now)
        else:
            assert trigger.url is not None
            response, raw = await outbound.send(http, guard, _request(trigger, cursor), MAX_POLL_BYTES,
                                                secret_headers=secret)  # fmt: skip
            if response.status_code >= 400:
                snippet = raw.decode(response.encoding or "utf-8", errors="replace")[:200]
                raise StepError(f"HTTP {response.status_code} from {outbound.display_url(response.url)}: {snippet}")
            items, cursor_next, warnings = new_items(trigger, outbound.parse_body(response, raw), cursor, now)
    except (StepError, ValueError, httpx.HTTPError) as exc:
        message = str(exc) or type(exc).__name__
        log.warning("Polling konnect %s failed: %s", spec.konnect_id, message)
        failed = cursor.model_copy(update={"polled_at": now, "last_error": message})
        await _store_cursor(js, spec.konnect_id, failed, revision)
        return []
    for warning in warnings:
        log.info("Polling konnect %s: %s", spec.konnect_id, warning)
    runs = [
        RunRequest(
            run_id=uuid.uuid5(_RUN_ID_NAMESPACE, f"poll:{spec.konnect_id}:{key}").hex,
            konnect_id=spec.konnect_id,
            trigger_output=_output(item),
            received_at=now,
            source="polling",
        )
        for key, item in items
    ]
    stored: list[RunRequest] = []
    for run in runs:  # stored before the cursor: a crash in between re-polls and re-stores the same run ids
        try:
            await publish_run(js, run)
        except Unstorable as exc:  # an item that can never be stored: skipped (said so), not re-polled for ever
            message = f"An item was skipped: {exc.message}"
            log.warning("Polling konnect %s: %s", spec.konnect_id, message)
            cursor_next = cursor_next.model_copy(update={"last_error": message})
            continue
        stored.append(run)
    runs = stored
    if not await _store_cursor(js, spec.konnect_id, cursor_next, revision):
        log.info("Konnect %s was polled by another runner at the same time", spec.konnect_id)
    return runs


class LocalPoller(Ticking):
    """Polls the polling konnects of a registry each ``interval_seconds`` (at most
    ``max_interval_seconds`` apart when given: ``KONNECTZ_MAX_POLL_INTERVAL_SECONDS``)."""

    task_name = "konnectz-poller"
    failure = "Polling failed"

    def __init__(
        self,
        js: JetStreamContext,
        registry: KonnectRegistry,
        *,
        http: httpx.AsyncClient,
        guard: NetGuard,
        wake: float = 1.0,
        clock: Callable[[], datetime] = utcnow,
        max_interval_seconds: float | None = None,
    ) -> None:
        self.js = js
        self.budgets = Budgets(js)
        self.registry = registry
        self.http = http
        self.guard = guard
        self.wake = wake
        self.clock = clock
        self.max_interval_seconds = max_interval_seconds
        self._next: dict[TriggerKey, datetime] = {}

    def period(self) -> float:
        return float(self.wake)

    async def tick(self) -> list[RunRequest]:
        """Poll every konnect whose interval has passed; returns the runs started."""
        now = self.clock()
        due: list[FlowSpec] = []
        for spec, trigger, key in keyed_triggers(self.registry.specs(), PollingTrigger, self._next):
            if key in self._next and now < self._next[key]:
                continue
            interval = float(trigger.interval_seconds)
            if self.max_interval_seconds is not None:
                interval = min(interval, self.max_interval_seconds)
            self._next[key] = now + timedelta(seconds=interval)
            due.append(spec)
        # Concurrently: one slow app does not hold up the others.
        results = await asyncio.gather(
            *(
                poll_once(self.js, spec, http=self.http, guard=self.guard, now=now, budgets=self.budgets)
                for spec in due
            ),
            return_exceptions=True,
        )
        started: list[RunRequest] = []
        for spec, result in zip(due, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("Polling konnect %s failed: %s", spec.konnect_id, result or type(result).__name__)
            else:
                started += result
        return started
