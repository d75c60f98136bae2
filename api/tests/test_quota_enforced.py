"""Quotas the runner enforces: a real RunWorker, real NATS request-reply to the api, real PostgreSQL."""

import asyncio
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import nats
from sqlalchemy import select, update

from konnectz_api.crud import quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import QuotaReservation, User
from konnectz_api.services.task_events import store_event
from konnectz_contracts.events import RunRequest
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_runner.apps import NetGuard
from konnectz_runner.bus import KonnectRegistry, ensure_streams, publish_run
from konnectz_runner.work import NatsQuotaGate, RunWorker
from konnectz_runner.work.quota import refused_event


def _set(owner_id, *, limit, consumed):
    with get_sessionmaker()() as s:
        s.execute(update(User).where(User.id == owner_id).values(task_limit=limit, task_consumed=consumed))
        s.commit()


def _spec(konnect_id, owner_id, steps=2):
    return FlowSpec(
        konnect_id=konnect_id,
        owner_id=owner_id,
        name="Quota flow",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="q" * 24),
        steps=[ApiCallStep(id=f"node-{i + 2}", name=f"S{i}", url="http://service.test/x") for i in range(steps)],
    )


def _run(konnect_id):
    return RunRequest(
        run_id=uuid.uuid4().hex, konnect_id=konnect_id, trigger_output={"n": 1}, received_at=datetime.now(UTC)
    )


def test_reservations_are_atomic_idempotent_and_settled(client, api):
    _, owner_id, konnect_id = api.owner_and_konnect()
    _set(owner_id, limit=100, consumed=0)
    sessions = get_sessionmaker()

    def reserve(run_id):
        with sessions() as s:
            return quota.reserve(s, run_id=run_id, konnect_id=konnect_id, owner_id=owner_id, tasks=3).allowed

    run_ids = [uuid.uuid4().hex for _ in range(60)]
    with ThreadPoolExecutor(8) as pool:
        allowed = list(pool.map(reserve, run_ids))
    assert allowed.count(True) == 33  # 33 * 3 = 99 fit under 100, never more
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (100, 99)
    first = run_ids[allowed.index(True)]
    assert reserve(first) is True  # a redelivered run is not reserved twice
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (100, 99)
        r = quota.reserve(s, run_id="x", konnect_id=konnect_id, owner_id=owner_id, tasks=3)
        assert not r.allowed
        assert (
            r.reason is not None and "needs 3 task(s) but only 1 of the 100 tasks of the Free plan remain" in r.reason
        )
        # Another owner's konnect is refused whatever its quota.
        r = quota.reserve(s, run_id="y", konnect_id=konnect_id, owner_id=owner_id + 1, tasks=0)
        assert not r.allowed and "does not belong" in (r.reason or "")
        # Settling: the run reserved 3 and ran 1 action (a filter stopped it): 2 are given back, once.
        quota.settle(s, run_id=first, owner_id=owner_id, tasks=1)
        s.commit()
        quota.settle(s, run_id=first, owner_id=owner_id, tasks=1)  # no reservation left: debits 1 more
        s.rollback()
        assert quota.usage(s, owner_id=owner_id) == (100, 97)
        assert s.get(QuotaReservation, first) is None


def test_a_batch_of_reservations_is_decided_in_order_and_counted_once(client, api):
    _, owner_id, konnect_id = api.owner_and_konnect()
    _set(owner_id, limit=10, consumed=2)
    sessions = get_sessionmaker()
    with sessions() as s:
        out = quota.reserve_many(
            s,
            requests=[
                ("a", konnect_id, owner_id, 3),  # 5
                ("b", konnect_id, owner_id, 4),  # 9
                ("a", konnect_id, owner_id, 3),  # the same run again: allowed, not counted
                ("c", konnect_id, owner_id, 2),  # would be 11: refused
                ("d", konnect_id, owner_id, 1),  # 10: a smaller one after it still fits
                ("e", konnect_id, owner_id + 1, 1),  # not this owner's konnect
            ],
        )
    assert [r.allowed for r in out] == [True, True, True, False, True, False]
    assert [r.task_consumed for r in out[:5]] == [5, 9, 9, 9, 10]
    assert out[3].reason is not None and "needs 2 task(s) but only 1 of the 10 tasks" in out[3].reason
    assert "does not belong" in (out[5].reason or "")
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (10, 10)
        assert set(s.scalars(select(QuotaReservation.run_id).where(QuotaReservation.owner_id == owner_id))) == {
            "a",
            "b",
            "d",
        }
        again = quota.reserve_many(
            s, requests=[("b", konnect_id, owner_id, 4), ("f", konnect_id, owner_id, 1), ("c", konnect_id, owner_id, 2)]
        )
    # A redelivery is allowed; the quota is spent; a refused run delivered again is decided again (its
    # refused reservation was not kept, so it is not taken for one reserved before).
    assert [r.allowed for r in again] == [True, False, False]
    # Batches racing from several threads (api replicas) never overdraw: 40 runs of 1 task, 25 fit.
    _set(owner_id, limit=25, consumed=0)

    def batch(i):
        with sessions() as s:
            reqs = [(f"race-{i}-{j}", konnect_id, owner_id, 1) for j in range(5)]
            return sum(r.allowed for r in quota.reserve_many(s, requests=reqs))

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(batch, range(8))) == 25
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (25, 25)


def test_a_refused_run_is_an_error_task_log_and_counts_nothing(client, api):
    headers, owner_id, konnect_id = api.owner_and_konnect()
    _set(owner_id, limit=10, consumed=10)
    event = refused_event(_spec(konnect_id, owner_id), _run(konnect_id), "Task quota exceeded: no.")
    with get_sessionmaker()() as s:
        assert store_event(s, event) is True
    with get_sessionmaker()() as s:
        assert quota.usage(s, owner_id=owner_id) == (10, 10)
    logs = client.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
    assert logs[0]["status"] == "REFUSED"
    # Only that it was refused and why: not the request's body (a sender over quota cannot fill storage).
    assert logs[0]["data"] == {
        "node-1": {"refused": True, "message": "The run was refused, so its request was not kept."},
        "quota": {"error": "Task quota exceeded: no."},
    }


async def _wait_logs(client, headers, konnect_id, count, within=20.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        r = await asyncio.to_thread(client.get, f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers)
        logs = r.json()["task_logs"]
        if len(logs) >= count:
            return logs
        await asyncio.sleep(0.1)
    raise AssertionError(f"expected {count} task logs")


async def test_the_worker_reserves_over_nats_and_refuses_over_quota(client, api, nats_server):
    headers, owner_id, konnect_id = api.owner_and_konnect()
    _set(owner_id, limit=5, consumed=0)
    calls = []

    def service(request):
        calls.append(request.url.path)
        return httpx.Response(200, json={"ok": True})

    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    await ensure_streams(js)
    registry = KonnectRegistry()
    registry.put(_spec(konnect_id, owner_id, steps=2))
    guard = NetGuard()

    async def accept_all(url):
        return httpx.URL(str(url))

    guard.check_url = accept_all
    async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as http:
        worker = RunWorker(js, registry, http=http, guard=guard, only_konnect=konnect_id, quota=NatsQuotaGate(nc))
        await worker.start()
        try:
            for _ in range(3):  # 2 tasks each: the first two runs fit in 5, the third does not
                await publish_run(js, _run(konnect_id))
            logs = await _wait_logs(client, headers, konnect_id, 3)
        finally:
            await worker.stop()
    assert sorted(log["status"] for log in logs) == ["REFUSED", "SUCCESS", "SUCCESS"]
    refused = next(log for log in logs if log["status"] == "REFUSED")
    assert (
        "Task quota exceeded: this run needs 2 task(s) but only 1 of the 5 tasks" in refused["data"]["quota"]["error"]
    )
    assert len(calls) == 4  # the refused run called nothing
    with get_sessionmaker()() as s:
        assert quota.usage(s, owner_id=owner_id) == (5, 4)
        assert s.scalar(select(QuotaReservation).where(QuotaReservation.owner_id == owner_id)) is None
    usage = client.get("/api/v1/users/usage", headers=headers).json()
    assert usage["task_consumed"] == 4 and usage["task_available"] == 1

    # A one-task run still fits: the api answers the gate directly too.
    reply = await NatsQuotaGate(nc, timeout=2).reserve(_run(konnect_id), _spec(konnect_id, owner_id, steps=1))
    assert reply.allowed and reply.task_consumed == 5
    await nc.close()
