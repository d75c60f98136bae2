"""The worker's quota gate: refused runs become ERROR task events; an unanswered gate retries, then refuses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import nats
import pytest

from konnectz_runner.events import RunRequest, TaskEvent
from konnectz_runner.quota import NatsQuotaGate, QuotaReply, QuotaUnavailable, tasks_of
from konnectz_runner.spec import FlowSpec

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


async def test_nats_gate_without_a_quota_service_is_unavailable(nats_server: Any) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        run = RunRequest.model_validate_json(run_message().data)
        # (A subject of its own: in a combined test session the api's quota service answers kz.quota.reserve.)
        gate = NatsQuotaGate(nc, timeout=0.5, subject="kz.quota.nobody-here")
        with pytest.raises(QuotaUnavailable, match=r"no quota service answered on kz\.quota\.nobody-here"):
            await gate.reserve(run, SPEC)
    finally:
        await nc.close()
