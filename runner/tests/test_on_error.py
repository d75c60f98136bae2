"""A step's error policy (konnectz_contracts.on_error): retries and continue on error, against a real
local HTTP server that fails as told (conftest.EchoServer's /flaky route)."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from konnectz_contracts.events import RunRequest
from konnectz_contracts.on_error import CanvasOnError, OnError, Retry, compile_on_error, retry_delay
from konnectz_contracts.run_control import RunControl
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import execute
from konnectz_runner.engine.flow import idempotency_key

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))


def flow(*steps: ApiCallStep, deadline: int | None = None) -> FlowSpec:
    return FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Flaky",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=list(steps),
        **({"run_control": RunControl(deadline_seconds=deadline)} if deadline else {}),
    )


def run(run_id: str = "r1") -> RunRequest:
    return RunRequest(run_id=run_id, konnect_id=5, trigger_output={"n": 1}, received_at=datetime.now(UTC))


def call(url: str, on_error: OnError | None, step_id: str = "node-2", **extra: Any) -> ApiCallStep:
    return ApiCallStep(id=step_id, name="Call", method="POST", url=url, on_error=on_error, **extra)


def retry(attempts: int = 3, *, on: list[Any] | None = None, delay: float = 0.05, **extra: Any) -> OnError:
    return OnError(
        retry=Retry(attempts=attempts, delay_seconds=delay, backoff="fixed", **({"on": on} if on else {}), **extra)
    )


@pytest.fixture
async def http() -> Any:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


async def test_a_step_is_retried_on_5xx_with_one_idempotency_key_and_each_attempt_is_logged(
    echo: Any, http: httpx.AsyncClient
) -> None:
    step = call(echo.base + "/flaky/a?fail=2&code=503", retry(3))
    event = await execute(flow(step), run(), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    [result] = event.steps
    assert result.status == "SUCCESS" and result.output is not None and result.output["status"] == 200
    assert result.retries is not None and [(a.number, a.failure, a.status) for a in result.retries] == [
        (1, "server", 503),
        (2, "server", 503),
    ]
    assert all("HTTP 503" in a.error and a.waited_seconds == 0.05 for a in result.retries)
    sent = echo.requests_to("/flaky/a")
    assert len(sent) == 3
    keys = {r.headers.get("Idempotency-Key") for r in sent}
    assert keys == {idempotency_key("r1", "node-2", None)}  # the same on every attempt
    assert keys.pop().startswith("kz-")


async def test_other_4xx_are_never_retried_and_a_step_without_a_policy_sends_no_key(
    echo: Any, http: httpx.AsyncClient
) -> None:
    event = await execute(flow(call(echo.base + "/flaky/b?fail=5&code=400", retry(3))), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert event.steps[0].retries is None and "HTTP 400" in (event.steps[0].error or "")
    assert len(echo.requests_to("/flaky/b")) == 1
    event = await execute(flow(call(echo.base + "/flaky/c?fail=5&code=503", None)), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR" and len(echo.requests_to("/flaky/c")) == 1
    assert "Idempotency-Key" not in echo.requests_to("/flaky/c")[0].headers
    # A key the step sets itself is kept.
    own = call(
        echo.base + "/flaky/d?fail=1&code=503", retry(1), headers=[KeyValue(key="Idempotency-Key", value="mine")]
    )
    await execute(flow(own), run(), http=http, guard=LOCAL)
    assert [r.headers.get("Idempotency-Key") for r in echo.requests_to("/flaky/d")] == ["mine", "mine"]


async def test_retries_run_out_and_only_the_failures_named_are_retried(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(flow(call(echo.base + "/flaky/e?fail=9&code=502", retry(2))), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert len(event.steps[0].retries or []) == 2 and len(echo.requests_to("/flaky/e")) == 3
    only_429 = retry(3, on=["rate_limited"])
    event = await execute(flow(call(echo.base + "/flaky/f?fail=9&code=500", only_429)), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR" and len(echo.requests_to("/flaky/f")) == 1


async def test_a_429_waits_for_its_retry_after_unless_it_is_longer_than_a_retry_may_wait(
    echo: Any, http: httpx.AsyncClient
) -> None:
    began = time.monotonic()
    step = call(echo.base + "/flaky/g?fail=1&code=429&retry_after=1", retry(2, delay=0.01))
    event = await execute(flow(step), run(), http=http, guard=LOCAL)
    assert event.status == "SUCCESS" and time.monotonic() - began >= 1.0
    assert event.steps[0].retries is not None and event.steps[0].retries[0].waited_seconds == 1.0
    step = call(echo.base + "/flaky/h?fail=1&code=429&retry_after=86400", retry(2, delay=0.01))
    event = await execute(flow(step), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR" and "Retry-After 86400 s is longer than a retry waits" in (
        event.steps[0].error or ""
    )
    assert len(echo.requests_to("/flaky/h")) == 1


async def test_a_connection_that_cannot_be_made_is_retried(http: httpx.AsyncClient) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    event = await execute(flow(call(f"http://127.0.0.1:{port}/x", retry(1))), run(), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert [a.failure for a in event.steps[0].retries or []] == ["connection"]


async def test_continue_on_error_makes_the_error_the_steps_output_and_the_run_goes_on(
    echo: Any, http: httpx.AsyncClient
) -> None:
    failing = call(echo.base + "/flaky/i?fail=9&code=404", OnError(continue_run=True))
    after = ApiCallStep(
        id="node-3",
        name="Report",
        method="POST",
        url=echo.base + "/echo",
        body=[
            KeyValue(key="status", value="{{node-2.error.status}}"),
            KeyValue(key="why", value="{{node-2.error.message}}"),
        ],
    )
    event = await execute(flow(failing, after), run(), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    first, second = event.steps
    assert first.status == "ERROR" and first.continued is True and "HTTP 404" in (first.error or "")
    assert first.output is not None and first.output["error"]["status"] == 404
    assert second.status == "SUCCESS"
    assert echo.requests_to("/echo")[0].json() == {"status": 404, "why": first.error}
    # Without continue_run the same failure ends the run there.
    event = await execute(
        flow(call(echo.base + "/flaky/j?fail=9&code=404", None), after), run(), http=http, guard=LOCAL
    )
    assert event.status == "ERROR" and len(event.steps) == 1


async def test_retries_then_continue(echo: Any, http: httpx.AsyncClient) -> None:
    policy = OnError(retry=Retry(attempts=1, delay_seconds=0.01, backoff="fixed"), continue_run=True)
    event = await execute(flow(call(echo.base + "/flaky/k?fail=9&code=503", policy)), run(), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert event.steps[0].continued and len(event.steps[0].retries or []) == 1


class _CancelAfter:
    """A run watch that reports the run cancelled from its ``after``-th check on."""

    def __init__(self, after: int) -> None:
        self.checks = 0
        self.after = after

    async def cancelled(self) -> str | None:
        self.checks += 1
        return "ann@example.com" if self.checks >= self.after else None

    async def at_step(self, step_id: str) -> None:
        pass


async def test_a_cancel_stops_the_waiting_and_the_attempts_so_far_are_in_the_log(
    echo: Any, http: httpx.AsyncClient
) -> None:
    step = call(echo.base + "/flaky/l?fail=9&code=503", retry(5, delay=30))
    began = time.monotonic()
    event = await execute(
        flow(step), run(), http=http, guard=LOCAL, watch=_CancelAfter(3)
    )  # checks: the run, the step, its wait
    assert time.monotonic() - began < 5  # not the 30 s backoff
    assert event.status == "CANCELLED" and event.cancelled_by == "ann@example.com"
    assert event.steps[0].status == "ERROR" and len(event.steps[0].retries or []) == 1


async def test_no_retry_waits_past_the_runs_deadline(echo: Any, http: httpx.AsyncClient) -> None:
    step = call(echo.base + "/flaky/m?fail=9&code=503", retry(3, delay=120, max_delay_seconds=120))
    began = time.monotonic()
    event = await execute(flow(step, deadline=60), run(), http=http, guard=LOCAL)
    assert time.monotonic() - began < 5
    assert event.status == "ERROR" and "not retried: the run's deadline comes first" in (event.steps[0].error or "")


def test_the_backoff_and_the_canvas_settings() -> None:
    exponential = Retry(attempts=5, delay_seconds=2, max_delay_seconds=10)
    assert [retry_delay(exponential, n) for n in (1, 2, 3, 4)] == [2, 4, 8, 10]
    assert retry_delay(exponential, 1, retry_after=7) == 7
    assert retry_delay(exponential, 1, retry_after=1) == 2
    assert retry_delay(exponential, 1, retry_after=301) is None
    assert compile_on_error(None) is None
    assert compile_on_error(CanvasOnError()) is None  # nothing asked for
    compiled = compile_on_error(CanvasOnError(retries=3, retryOn=["server", "server", "timeout"], continueOnError=True))
    assert compiled is not None and compiled.continue_run
    assert compiled.retry is not None and compiled.retry.attempts == 3 and compiled.retry.on == ["server", "timeout"]
    with pytest.raises(ValidationError):
        CanvasOnError(retries=11)
    with pytest.raises(ValidationError):
        CanvasOnError(retryOn=["teapot"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one kind of failure"):
        compile_on_error(CanvasOnError(retries=1, retryOn=[]))
    with pytest.raises(ValidationError, match="max_delay_seconds must be at least delay_seconds"):
        Retry(attempts=1, delay_seconds=10, max_delay_seconds=5)
