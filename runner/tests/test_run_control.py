"""Run control in the engine: cancel at a step boundary, the deadline (a slow step against a real
local server, a delay past it), with a fake :class:`RunWatch` (the worker's is NATS-backed and is
tested through real processes in tests/integration/test_run_control.py)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.run_control import RunControl
from konnectz_contracts.spec import FlowSpec, WebhookTrigger
from konnectz_contracts.steps import api_call
from konnectz_contracts.steps.delay import DelayStep
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import Suspended, execute
from konnectz_runner.engine.flow import deadline_error

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))
SLOW_SECONDS = 4.0


class _Handler(JsonHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Handler.hits.append(self.path)
        if self.path.startswith("/slow"):
            time.sleep(SLOW_SECONDS)
        self._reply(200, {"ok": True})


@pytest.fixture
def server() -> Iterator[LocalServer]:
    _Handler.hits = []
    local = LocalServer(_Handler)
    yield local
    local.stop()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


class FakeWatch:
    """Cancelled (by ``by``) once ``after`` steps have started."""

    def __init__(self, by: str | None = None, after: int = 0) -> None:
        self.by = by
        self.after = after
        self.steps: list[str] = []

    async def cancelled(self) -> str | None:
        return self.by if self.by is not None and len(self.steps) >= self.after else None

    async def at_step(self, step_id: str) -> None:
        self.steps.append(step_id)


def post(server: LocalServer, step_id: str, path: str = "/fast") -> api_call.Config:
    return api_call.Config(id=step_id, name=f"Post {step_id}", method="POST", url=server.url + path)


def spec(*steps: Any, deadline: int | None = None) -> FlowSpec:
    return FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Orders",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=list(steps),
        run_control=RunControl(deadline_seconds=deadline) if deadline else None,
    )


def run() -> RunRequest:
    return RunRequest(run_id="r1", konnect_id=5, trigger_output={"a": 1}, received_at=datetime.now(UTC))


async def test_cancel_before_a_step_ends_the_run_cancelled(server: LocalServer, http: httpx.AsyncClient) -> None:
    watch = FakeWatch(by="ann@example.com", after=1)  # cancelled while the first step runs
    event = await execute(
        spec(post(server, "node-2"), post(server, "node-3")), run(), http=http, guard=LOCAL, watch=watch
    )
    assert isinstance(event, TaskEvent)
    assert event.status == "CANCELLED"
    assert event.cancelled_by == "ann@example.com"
    assert [s.step_id for s in event.steps] == ["node-2"]  # the step before the cancel, and no more
    assert _Handler.hits == ["/fast"]


async def test_queued_run_cancelled_runs_no_step(server: LocalServer, http: httpx.AsyncClient) -> None:
    event = await execute(spec(post(server, "node-2")), run(), http=http, guard=LOCAL, watch=FakeWatch(by="bo@x.io"))
    assert isinstance(event, TaskEvent)
    assert (event.status, event.cancelled_by, event.steps) == ("CANCELLED", "bo@x.io", [])
    assert _Handler.hits == []


async def test_not_cancelled_runs_every_step(server: LocalServer, http: httpx.AsyncClient) -> None:
    watch = FakeWatch()
    event = await execute(
        spec(post(server, "node-2"), post(server, "node-3")), run(), http=http, guard=LOCAL, watch=watch
    )
    assert isinstance(event, TaskEvent)
    assert event.status == "SUCCESS" and event.cancelled_by is None
    assert watch.steps == ["node-2", "node-3"]


async def test_deadline_interrupts_a_slow_step(server: LocalServer, http: httpx.AsyncClient) -> None:
    clock = time.monotonic()
    event = await execute(
        spec(post(server, "node-2"), post(server, "node-3", "/slow"), post(server, "node-4"), deadline=1),
        run(),
        http=http,
        guard=LOCAL,
    )
    elapsed = time.monotonic() - clock
    assert isinstance(event, TaskEvent)
    assert elapsed < SLOW_SECONDS - 1, f"the slow step was not interrupted ({elapsed:.1f} s)"
    assert event.status == "ERROR"
    assert [(s.step_id, s.status) for s in event.steps] == [("node-2", "SUCCESS"), ("node-3", "ERROR")]
    assert event.steps[-1].error == deadline_error(1) == "Stopped: the run passed its deadline of 1 s"
    assert "/fast" in _Handler.hits and _Handler.hits.count("/fast") == 1  # node-4 never ran


async def test_the_deadline_holds_when_its_timer_fires_before_the_wall_clock_agrees(
    server: LocalServer, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline's timer runs on the loop's monotonic clock. When it fires a moment before the wall
    clock reaches the deadline (seen on a loaded machine), the step still ends with the deadline's error,
    not with a TimeoutError that the worker takes for a NATS outage (and redelivers, in doubt)."""
    from konnectz_runner.engine import flow as engine

    # The wall clock has not reached the deadline yet whenever it is asked.
    monkeypatch.setattr(engine._Control, "passed", lambda self: False)
    event = await execute(
        spec(post(server, "node-2"), post(server, "node-3", "/slow"), deadline=1), run(), http=http, guard=LOCAL
    )
    assert isinstance(event, TaskEvent)
    assert [(s.step_id, s.status) for s in event.steps][-1] == ("node-3", "ERROR")
    assert event.steps[-1].error == deadline_error(1)


async def test_a_delay_past_the_deadline_ends_at_the_deadline(server: LocalServer, http: httpx.AsyncClient) -> None:
    flow = spec(post(server, "node-2"), DelayStep(id="node-3", name="Wait", amount=1, unit="hours"),
                post(server, "node-4"), deadline=60)  # fmt: skip
    suspended = await execute(flow, run(), http=http, guard=LOCAL)
    assert isinstance(suspended, Suspended)
    started = suspended.continuation.started_at
    # The timer is set for the deadline, not for the hour.
    assert suspended.resume_at == started + timedelta(seconds=60)
    # The timer fires at the deadline (here: a continuation that started 61 s ago).
    early = started - timedelta(seconds=61)
    back = run().model_copy(update={"resume": suspended.continuation.model_copy(update={"started_at": early})})
    event = await execute(flow, back, http=http, guard=LOCAL)
    assert isinstance(event, TaskEvent)
    assert event.status == "ERROR"
    assert [(s.step_id, s.status) for s in event.steps] == [("node-2", "SUCCESS"), ("node-3", "ERROR")]
    assert event.steps[-1].error == deadline_error(60)
    assert _Handler.hits == ["/fast"]  # node-4 never ran


async def test_a_delay_within_the_deadline_goes_on(server: LocalServer, http: httpx.AsyncClient) -> None:
    flow = spec(DelayStep(id="node-2", name="Wait", amount=1, unit="minutes"), post(server, "node-3"), deadline=3600)
    suspended = await execute(flow, run(), http=http, guard=LOCAL)
    assert isinstance(suspended, Suspended)
    assert suspended.resume_at == suspended.continuation.resume_at
    assert suspended.resume_at < suspended.continuation.started_at + timedelta(seconds=3600)
    back = run().model_copy(update={"resume": suspended.continuation})
    event = await execute(flow, back, http=http, guard=LOCAL)
    assert isinstance(event, TaskEvent) and event.status == "SUCCESS"


async def test_a_waiting_run_cancelled_ends_with_the_steps_before(server: LocalServer, http: httpx.AsyncClient) -> None:
    flow = spec(post(server, "node-2"), DelayStep(id="node-3", name="Wait", amount=1, unit="hours"),
                post(server, "node-4"))  # fmt: skip
    suspended = await execute(flow, run(), http=http, guard=LOCAL, watch=FakeWatch())
    assert isinstance(suspended, Suspended)
    back = run().model_copy(update={"resume": suspended.continuation})
    event = await execute(flow, back, http=http, guard=LOCAL, watch=FakeWatch(by="ann@example.com"))
    assert isinstance(event, TaskEvent)
    assert (event.status, event.cancelled_by) == ("CANCELLED", "ann@example.com")
    assert [s.step_id for s in event.steps] == ["node-2", "node-3"]
    assert _Handler.hits == ["/fast"]
