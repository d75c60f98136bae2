"""The worker's quota gate: refused runs become ERROR task events; an unanswered gate retries, then refuses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import nats
import pytest

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.quota import QuotaReply
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.work import NatsQuotaGate
from konnectz_runner.work.quota import QuotaUnavailable, tasks_of
from konnectz_runner.work.worker import MAX_ATTEMPTS, quota_retry_delay

from .test_worker import SPEC, FakeJetStream, make_worker, run_message


class Gate:
    def __init__(self, reply: QuotaReply | None) -> None:
        self.reply = reply
        self.asked: list[str] = []

    async def reserve(self, run: RunRequest, spec: FlowSpec) -> QuotaReply:
        self.asked.append(run.run_id)
        if self.reply is None:
            raise QuotaUnavailable("no quota service answered")
        return self.reply


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(200, json={"ok": 1})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as c:
        c.calls = calls  # type: ignore[attr-defined]
        yield c


def _event(js: FakeJetStream) -> TaskEvent:
    assert len(js.published) == 1
    return TaskEvent.model_validate_json(js.published[0][1])


async def test_allowed_run_executes(http: Any) -> None:
    js = FakeJetStream()
    worker = make_worker(js, http)
    worker.quota = Gate(QuotaReply(allowed=True, task_limit=10, task_consumed=1))
    msg = run_message()
    await worker.handle(msg)
    assert msg.calls == ["ack"] and http.calls and _event(js).status == "SUCCESS"
    assert _event(js).refused is None and tasks_of(SPEC) == 1


async def test_refused_run_is_an_error_event_with_the_reason_and_runs_nothing(http: Any) -> None:
    js = FakeJetStream()
    worker = make_worker(js, http)
    worker.quota = Gate(QuotaReply(allowed=False, reason="Task quota exceeded: 0 left."))
    msg = run_message()
    await worker.handle(msg)
    event = _event(js)
    assert msg.calls == ["ack"] and http.calls == []
    assert event.status == "ERROR" and event.refused == "Task quota exceeded: 0 left."
    assert [(s.step_id, s.app, s.status, s.error) for s in event.steps] == [
        ("quota", "quota", "ERROR", "Task quota exceeded: 0 left.")
    ]


async def test_unanswered_gate_retries_then_refuses_on_the_last_delivery(http: Any) -> None:
    js = FakeJetStream()
    worker = make_worker(js, http)
    worker.quota = Gate(None)
    first = run_message(delivered=1)
    await worker.handle(first)
    assert first.calls == ["nak"] and js.published == []
    last = run_message(delivered=worker.max_deliver)
    await worker.handle(last)
    event = _event(js)
    assert last.calls == ["ack"] and http.calls == []
    assert event.refused is not None and "task quota could not be checked" in event.refused


def test_an_unanswered_quota_check_is_retried_later_each_time_for_about_six_minutes() -> None:
    delays = [quota_retry_delay(n) for n in range(1, MAX_ATTEMPTS)]
    assert delays[:4] == [5.0, 10.0, 20.0, 40.0] and max(delays) == 60.0
    assert 300 <= sum(delays) <= 450  # an api or PostgreSQL restart fits; a dead api refuses within minutes


async def test_nats_gate_without_a_quota_service_is_unavailable(nats_server: Any) -> None:
    nc = await nats.connect(nats_server.admin_url)
    try:
        run = RunRequest.model_validate_json(run_message().data)
        # (A subject of its own: in a combined test session the api's quota service answers kz.quota.reserve.)
        gate = NatsQuotaGate(nc, timeout=0.5, subject="kz.quota.nobody-here")
        with pytest.raises(QuotaUnavailable, match=r"no quota service answered on kz\.quota\.nobody-here"):
            await gate.reserve(run, SPEC)
    finally:
        await nc.close()


async def test_nats_gate_sends_the_runs_asking_together_as_one_request(nats_server: Any) -> None:
    from konnectz_contracts.quota import QuotaReplies, QuotaRequests

    nc = await nats.connect(nats_server.admin_url)
    seen: list[list[str]] = []

    async def answer(msg: Any) -> None:  # allows even run ids only, in the order asked
        requests = QuotaRequests.model_validate_json(msg.data).requests
        seen.append([r.run_id for r in requests])
        replies = [QuotaReply(allowed=int(r.run_id) % 2 == 0, reason=None if int(r.run_id) % 2 == 0 else "odd")
                   for r in requests]  # fmt: skip
        await msg.respond(QuotaReplies(replies=replies).model_dump_json().encode())

    await nc.subscribe("kz.test.many", cb=answer)
    try:
        gate = NatsQuotaGate(nc, timeout=2, subject="kz.test.one", many_subject="kz.test.many")
        base = RunRequest.model_validate_json(run_message().data)
        runs = [base.model_copy(update={"run_id": str(i)}) for i in range(7)]
        replies = await asyncio.gather(*(gate.reserve(r, SPEC) for r in runs))
        assert [r.allowed for r in replies] == [True, False, True, False, True, False, True]
        assert replies[1].reason == "odd"
        assert seen == [[str(i) for i in range(7)]] and gate.requests_sent == 1
    finally:
        await nc.close()


async def test_nats_gate_falls_back_to_one_request_per_run_without_the_batch_subject(nats_server: Any) -> None:
    nc = await nats.connect(nats_server.admin_url)
    asked: list[str] = []

    async def answer(msg: Any) -> None:
        from konnectz_contracts.quota import QuotaRequest

        asked.append(QuotaRequest.model_validate_json(msg.data).run_id)
        await msg.respond(QuotaReply(allowed=True).model_dump_json().encode())

    await nc.subscribe("kz.test.one-only", cb=answer)
    try:
        gate = NatsQuotaGate(nc, timeout=2, subject="kz.test.one-only", many_subject="kz.test.nobody")
        base = RunRequest.model_validate_json(run_message().data)
        replies = await asyncio.gather(
            *(gate.reserve(base.model_copy(update={"run_id": f"r{i}"}), SPEC) for i in range(3))
        )
        assert all(r.allowed for r in replies) and sorted(asked) == ["r0", "r1", "r2"]
    finally:
        await nc.close()


def test_an_owner_is_blocked_at_ingress_only_when_no_task_is_left_and_only_for_a_while() -> None:
    import time

    from konnectz_contracts.quota import QuotaBlock
    from konnectz_runner.work import QuotaBlocks
    from konnectz_runner.work.quota import exhausted

    assert exhausted(QuotaReply(allowed=False, reason="none", task_limit=5, task_consumed=5))
    # Too few for this run, but a smaller run may fit: not blocked.
    assert not exhausted(QuotaReply(allowed=False, reason="short", task_limit=5, task_consumed=4))
    assert not exhausted(QuotaReply(allowed=True, task_limit=5, task_consumed=5))
    assert not exhausted(QuotaReply(allowed=False, reason="Invalid quota request."))  # no limit known

    blocks = QuotaBlocks()
    blocks.note(QuotaBlock(owner_id=7, reason="Task quota exceeded", until=time.time() + 60))
    blocks.note(QuotaBlock(owner_id=8, reason="old", until=time.time() - 1))
    assert blocks.reason(7) == "Task quota exceeded"
    assert blocks.reason(8) is None and blocks.reason(9) is None  # expired, unknown
