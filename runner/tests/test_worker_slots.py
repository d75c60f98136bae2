"""The worker and a konnect's concurrency limit, against a real nats-server: a run waiting for a
slot shows as QUEUED and does not hold the worker back from the runs of other konnects."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from datetime import UTC, datetime
from typing import Any

import httpx
import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from konnectz_contracts.events import STREAM_EVENTS, RunRequest, TaskEvent, event_subject
from konnectz_contracts.run_control import KV_ACTIVE, ActiveRun, CancelRequest, RunControl, active_key
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.bus import KonnectRegistry, ensure_streams, publish_run, request_cancel
from konnectz_runner.bus import run_state_buckets as buckets
from konnectz_runner.work import RunWorker
from konnectz_runner.work.slots import Slots, slots_bucket

pytestmark = pytest.mark.integration


def flow(konnect_id: int, url: str, limit: int | None) -> FlowSpec:
    return FlowSpec(
        konnect_id=konnect_id, owner_id=4, name=f"K{konnect_id}", trigger_id="node-1",
        trigger=WebhookTrigger(token=secrets.token_urlsafe(24)),
        steps=[ApiCallStep(id="node-2", name="Call", method="POST", url=url)],
        run_control=RunControl(max_concurrency=limit) if limit else None,
    )  # fmt: skip


async def events_of(js: Any, konnect_id: int) -> list[TaskEvent]:
    sub = await js.pull_subscribe(
        event_subject(konnect_id), stream=STREAM_EVENTS, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    )
    try:
        msgs = await sub.fetch(10, timeout=0.5)
    except (nats.errors.TimeoutError, TimeoutError):  # fetch raises either
        msgs = []
    await sub.unsubscribe()
    return [TaskEvent.model_validate_json(m.data) for m in msgs]


async def test_a_queued_run_waits_in_order_without_blocking_other_konnects(nats_server: Any, echo: Any) -> None:
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    await ensure_streams(js)
    base = secrets.randbelow(10**8) * 10 + 1
    limited, free = flow(base, echo.base + "/echo", 1), flow(base + 1, echo.base + "/echo", None)
    registry = KonnectRegistry()
    registry.put(limited)
    registry.put(free)
    slots = Slots(await slots_bucket(js))
    assert await slots.try_acquire(limited.konnect_id, "held-elsewhere", 0, 1)  # another runner's run
    async with httpx.AsyncClient() as http:
        worker = RunWorker(js, registry, http=http, guard=NetGuard(parse_networks("127.0.0.0/8")), concurrency=1)
        await worker.start()
        try:
            now = datetime.now(UTC)
            waiting = [
                RunRequest(run_id=f"a{base}-{i}", konnect_id=limited.konnect_id, trigger_output={}, received_at=now)
                for i in range(3)
            ]
            for run in waiting:
                await publish_run(js, run)
            other = RunRequest(run_id=f"b{base}", konnect_id=free.konnect_id, trigger_output={}, received_at=now)
            await publish_run(js, other)
            # The other konnect's run goes through although the worker's one place is taken by waiters.
            async with asyncio.timeout(20):
                while not await events_of(js, free.konnect_id):  # noqa: ASYNC110 - polling NATS
                    await asyncio.sleep(0.2)
            assert await events_of(js, limited.konnect_id) == []
            active = await js.key_value(KV_ACTIVE)
            first = ActiveRun.model_validate_json(
                (await active.get(active_key(limited.owner_id, limited.konnect_id, waiting[0].run_id))).value
            )
            assert first.status == "QUEUED" and first.konnect_id == limited.konnect_id
            holders, queue = await slots.holders(limited.konnect_id)
            assert holders == ["held-elsewhere"] and queue == [run.run_id for run in waiting]
            # A queued run that is cancelled leaves the queue and ends at once, before its first step.
            _active, cancels = await buckets(js)
            await request_cancel(cancels, CancelRequest(run_id=waiting[1].run_id, by="ops@example.com", at=now))
            async with asyncio.timeout(20):
                while not (ended := await events_of(js, limited.konnect_id)):  # noqa: ASYNC110
                    await asyncio.sleep(0.2)
            assert [(e.run_id, e.status, e.cancelled_by, e.steps) for e in ended] == [
                (waiting[1].run_id, "CANCELLED", "ops@example.com", [])
            ]
            assert (await slots.holders(limited.konnect_id))[1] == [waiting[0].run_id, waiting[2].run_id]
            await slots.release(limited.konnect_id, "held-elsewhere")
            async with asyncio.timeout(30):
                while len(done := await events_of(js, limited.konnect_id)) < 3:  # noqa: ASYNC110
                    await asyncio.sleep(0.2)
            done = [e for e in done if e.status != "CANCELLED"]
            assert {e.status for e in done} == {"SUCCESS"}
            # One at a time, in the order they arrived.
            starts = sorted(done, key=lambda e: e.steps[0].started_at)
            assert [e.run_id for e in starts] == [waiting[0].run_id, waiting[2].run_id]
            for earlier, later in itertools.pairwise(starts):
                assert earlier.steps[0].finished_at <= later.steps[0].started_at
            assert await slots.holders(limited.konnect_id) == ([], [])
            with pytest.raises(nats.js.errors.KeyNotFoundError):
                await active.get(active_key(limited.owner_id, limited.konnect_id, waiting[0].run_id))
        finally:
            await worker.stop(grace=5)
            await nc.close()
