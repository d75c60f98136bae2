"""The worker's ack discipline, with a fake JetStream (the real one is covered in test_server.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_runner.apps import NetGuard
from konnectz_runner.bus import KonnectRegistry
from konnectz_runner.work import RunWorker
from konnectz_runner.work import worker as worker_module

SPEC = FlowSpec(konnect_id=8, owner_id=1, name="K", trigger_id="node-1", trigger=WebhookTrigger(token="k" * 24),
                steps=[ApiCallStep(id="node-2", name="S", url="http://service.test/x")])  # fmt: skip


class FakeMsg:
    def __init__(self, data: bytes, delivered: int = 1) -> None:
        self.data = data
        self.subject = "kz.runs.8"
        self.metadata = SimpleNamespace(num_delivered=delivered)
        self.calls: list[str] = []

    async def ack(self) -> None:
        self.calls.append("ack")

    async def nak(self, delay: float | None = None) -> None:
        self.calls.append("nak")

    async def term(self) -> None:
        self.calls.append("term")

    async def in_progress(self) -> None:
        self.calls.append("in_progress")


class FakeJetStream:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.published: list[tuple[str, bytes, dict[str, str]]] = []

    async def publish(self, subject: str, payload: bytes, *, headers: dict[str, str], **_: Any) -> Any:
        if self.fail:
            raise TimeoutError("no ack")
        self.published.append((subject, payload, headers))
        return SimpleNamespace(stream="KZ_EVENTS", seq=len(self.published), duplicate=False)


def run_message(delivered: int = 1, konnect_id: int = 8) -> FakeMsg:
    run = RunRequest(run_id="run-1", konnect_id=konnect_id, trigger_output={"a": 1}, received_at=datetime.now(UTC))
    return FakeMsg(run.model_dump_json().encode(), delivered)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": 1}))) as c:
        yield c


def make_worker(js: FakeJetStream, http: httpx.AsyncClient) -> RunWorker:
    registry = KonnectRegistry()
    registry.put(SPEC)
    guard = NetGuard()

    async def accept_all(url: Any) -> httpx.URL:  # the fake service has no address to check
        return httpx.URL(str(url))

    guard.check_url = accept_all  # type: ignore[method-assign]
    return RunWorker(js, registry, http=http, guard=guard)  # type: ignore[arg-type]


async def test_event_is_published_before_the_run_is_acked(http: httpx.AsyncClient) -> None:
    js = FakeJetStream()
    msg = run_message()
    await make_worker(js, http).handle(msg)  # type: ignore[arg-type]
    [(subject, payload, headers)] = js.published
    assert subject == "kz.events.8" and headers == {"Nats-Msg-Id": "run-1"}
    event = TaskEvent.model_validate_json(payload)
    assert event.status == "SUCCESS" and event.steps[0].output == {
        "status": 200,
        "headers": {"content-length": "8", "content-type": "application/json"},
        "body": {"ok": 1},
    }
    assert msg.calls == ["ack"]


async def test_run_is_not_acked_when_the_event_cannot_be_stored(http: httpx.AsyncClient) -> None:
    msg = run_message()
    await make_worker(FakeJetStream(fail=True), http).handle(msg)  # type: ignore[arg-type]
    assert "ack" not in msg.calls  # JetStream redelivers it after ack_wait


async def test_unexpected_failure_is_retried_then_reported(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> TaskEvent:
        raise RuntimeError("bug")

    monkeypatch.setattr(worker_module, "execute", broken)
    js = FakeJetStream()
    early = run_message(delivered=1)
    await make_worker(js, http).handle(early)  # type: ignore[arg-type]
    assert early.calls == ["nak"] and js.published == []

    last = run_message(delivered=worker_module.MAX_DELIVER)
    await make_worker(js, http).handle(last)  # type: ignore[arg-type]
    assert last.calls == ["ack"]
    event = TaskEvent.model_validate_json(js.published[0][1])
    assert event.status == "ERROR" and event.run_id == "run-1"
    assert event.steps[0].error == "The runner could not execute this run: RuntimeError: bug"


async def test_invalid_and_unknown_runs(http: httpx.AsyncClient) -> None:
    js = FakeJetStream()
    garbage = FakeMsg(b"not json")
    await make_worker(js, http).handle(garbage)  # type: ignore[arg-type]
    assert garbage.calls == ["term"]


def test_the_shared_pool_consumes_only_pool_runs(monkeypatch):
    from konnectz_contracts import events
    from konnectz_runner.work import consumer_for

    assert consumer_for(None) == ("runner", "kz.runs.>")  # make dev: every run
    assert consumer_for(7) == ("runner-7", "kz.runs.7")  # a dedicated runner
    monkeypatch.setattr(events, "_runs_prefix", events._runs_prefix)  # restored after the test
    events.use_pool_subjects()
    assert events.run_subject(7) == "kz.runs.pool.7"  # not matched by a dedicated runner's filter
    assert consumer_for(None) == ("runner-pool", "kz.runs.pool.>")


async def test_a_run_for_a_konnect_not_loaded_waits_then_ends_as_error(http: httpx.AsyncClient) -> None:
    """Not acked and dropped: handed back with a growing delay, then one ERROR task event saying why."""
    js = FakeJetStream()
    delays: list[float | None] = []
    for attempt in range(1, worker_module.MAX_ATTEMPTS):
        msg = run_message(konnect_id=999, delivered=attempt)
        msg.nak = lambda delay=None: _record(delays, delay)  # type: ignore[method-assign]
        await make_worker(js, http).handle(msg)  # type: ignore[arg-type]
        assert msg.calls == [] and js.published == []
    assert delays == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0]
    last = run_message(konnect_id=999, delivered=worker_module.MAX_ATTEMPTS)
    await make_worker(js, http).handle(last)  # type: ignore[arg-type]
    assert last.calls == ["ack"]
    [(subject, payload, headers)] = js.published
    event = TaskEvent.model_validate_json(payload)
    assert subject == "kz.events.999" and headers == {"Nats-Msg-Id": "run-1"}
    assert event.status == "ERROR" and event.attempts == worker_module.MAX_ATTEMPTS and event.owner_id == 0
    assert event.refused is not None and "konnect 999 was not loaded" in event.refused
    assert event.trigger_output == {"a": 1} and event.steps[0].error == event.refused


async def _record(into: list[float | None], delay: float | None) -> None:
    into.append(delay)


async def test_attempts_are_reported(http: httpx.AsyncClient) -> None:
    js = FakeJetStream()
    msg = run_message(delivered=3)
    await make_worker(js, http).handle(msg)  # type: ignore[arg-type]
    event = TaskEvent.model_validate_json(js.published[0][1])
    assert event.status == "SUCCESS" and event.attempts == 3 and msg.calls == ["ack"]


class FakeSteps:
    """The step journal's bucket, holding the results of earlier deliveries."""

    def __init__(self, entries: dict[str, bytes]) -> None:
        self.entries = entries

    async def get(self, key: str) -> Any:
        from nats.js.errors import KeyNotFoundError

        if key not in self.entries:
            raise KeyNotFoundError
        return SimpleNamespace(value=self.entries[key])


async def test_a_run_that_cannot_complete_keeps_its_finished_steps(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from konnectz_contracts.events import StepResult
    from konnectz_runner.engine import JournalEntry, step_key

    now = datetime.now(UTC)
    done = StepResult(step_id="node-2", name="S", status="SUCCESS", started_at=now, finished_at=now,
                      input={"x": 1}, output={"status": 200})  # fmt: skip

    async def broken(*args: Any, **kwargs: Any) -> TaskEvent:
        raise RuntimeError("bug after node-2")

    monkeypatch.setattr(worker_module, "execute", broken)
    js = FakeJetStream()
    worker = make_worker(js, http)
    worker._steps = FakeSteps({step_key("run-1", "node-2"): JournalEntry(result=done).model_dump_json().encode()})  # type: ignore[assignment]
    last = run_message(delivered=worker_module.MAX_ATTEMPTS)
    await worker.handle(last)  # type: ignore[arg-type]
    assert last.calls == ["ack"]
    event = TaskEvent.model_validate_json(js.published[0][1])
    assert event.status == "ERROR"
    assert [(s.step_id, s.status) for s in event.steps] == [("node-2", "SUCCESS"), ("node-1", "ERROR")]
    assert event.steps[0].output == {"status": 200}
    assert "RuntimeError: bug after node-2" in (event.steps[1].error or "")


class TooLargeForNats(FakeJetStream):
    """A NATS whose max_payload is below Konnectz's limits: the first (whole) event is refused."""

    async def publish(self, subject: str, payload: bytes, *, headers: dict[str, str], **kw: Any) -> Any:
        import nats.errors

        if len(payload) > 64 * 1024:
            raise nats.errors.MaxPayloadError
        return await super().publish(subject, payload, headers=headers, **kw)


async def test_an_event_nats_refuses_as_too_large_is_stored_trimmed_not_retried(http: httpx.AsyncClient) -> None:
    js = TooLargeForNats()
    run = RunRequest(run_id="run-1", konnect_id=8, trigger_output={"big": "x" * 200_000}, received_at=datetime.now(UTC))
    msg = FakeMsg(run.model_dump_json().encode())
    await make_worker(js, http).handle(msg)  # type: ignore[arg-type]
    assert msg.calls == ["ack"]  # not handed back: it would fail the same way for ever
    event = TaskEvent.model_validate_json(js.published[0][1])
    assert event.status == "SUCCESS" and [s.status for s in event.steps] == ["SUCCESS"]
    assert event.trigger_output["truncated"] is True and "too large to keep" in event.trigger_output["message"]
