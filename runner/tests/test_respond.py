"""Respond to the webhook (issue 37, item 2): the Respond step, the worker's answers, the ingress's wait.

Units first (the step with a recording responder, the answer of a finished run, the compile rules),
then the runner in this process on the tests' NATS: a webhook held for its run's answer.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError, TriggerInput
from konnectz_contracts.events import KV_KONNECTS, StepResult, TaskEvent, konnect_key
from konnectz_contracts.limits import RESPONSE_MAX_BYTES
from konnectz_contracts.responses import TAKEN, WebhookReply, reply_for_event
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_contracts.steps import COMPILERS
from konnectz_contracts.steps.delay import DelayStep
from konnectz_contracts.steps.respond import NEEDS_WEBHOOK, NO_RESPOND_STEP, Config, check_flow
from konnectz_contracts.triggers.webhook import compile_trigger
from konnectz_devstack.testing import canvas_node, chain_canvas
from konnectz_runner.engine import RESPONDER, run_step
from konnectz_runner.engine.steps.respond import NOBODY_WAITS
from konnectz_runner.ingress.replies import ReplyWaiter
from konnectz_runner.work.replies import ANSWERED, LATE, NOBODY, RunReplies

from .test_server import RunningRunner, wait_until

ORDER = {"order": {"id": 77, "total": 12.5}, "customer": "Ada"}


class Recorder:
    """A responder that keeps what it is sent (the first answer wins, like the worker's)."""

    def __init__(self) -> None:
        self.replies: list[WebhookReply] = []

    async def send(self, reply: WebhookReply) -> str | None:
        self.replies.append(reply)
        return None if len(self.replies) == 1 else ANSWERED


async def _respond(make_ctx: Any, responder: Any, outputs: dict[str, Any] | None = None, **fields: Any) -> Any:
    token = RESPONDER.set(responder)
    try:
        ctx = make_ctx(outputs or {"node-1": ORDER})
        ctx.run_id = "r1"
        return await run_step(Config(id="node-2", name="Respond", **fields), ctx)
    finally:
        RESPONDER.reset(token)


async def test_the_step_sends_its_templated_status_headers_and_body(make_ctx: Any) -> None:
    sent = Recorder()
    outcome = await _respond(
        make_ctx,
        sent,
        status="201",
        header_lines="X-Order: {{node-1.order.id}}\n\nCache-Control: no-store",
        body_template='{"id": {{node-1.order.id}}, "for": "{{node-1.customer}}"}',
    )
    assert outcome.status == "SUCCESS", outcome.error
    (reply,) = sent.replies
    assert reply.status == 201 and reply.run_id == "r1"
    assert reply.headers == {"X-Order": "77", "Cache-Control": "no-store", "Content-Type": "application/json"}
    assert json.loads(reply.body) == {"id": 77, "for": "Ada"}
    assert outcome.output["sent"] is True and outcome.output["status"] == 201
    assert outcome.output["body"] == reply.body and "not_sent" not in outcome.output


async def test_without_a_waiting_caller_the_step_records_what_it_would_send(make_ctx: Any) -> None:
    outcome = await _respond(make_ctx, None, body_template="Thanks {{node-1.customer}}")
    assert outcome.status == "SUCCESS"
    assert outcome.output["sent"] is False and outcome.output["not_sent"] == NOBODY_WAITS
    assert outcome.output["headers"] == {"Content-Type": "text/plain; charset=utf-8"}
    assert outcome.output["body"] == "Thanks Ada"


async def test_a_second_answer_is_recorded_as_not_sent(make_ctx: Any) -> None:
    sent = Recorder()
    await _respond(make_ctx, sent, body_template="first")
    second = await _respond(make_ctx, sent, body_template="second")
    assert second.status == "SUCCESS" and second.output["sent"] is False and second.output["not_sent"] == ANSWERED
    assert [r.body for r in sent.replies] == ["first", "second"]  # the recorder saw it; the worker's refuses it


async def test_a_body_over_the_limit_is_a_502_for_the_caller_and_an_error(make_ctx: Any) -> None:
    sent = Recorder()
    big = "x" * (RESPONSE_MAX_BYTES + 1)
    outcome = await _respond(make_ctx, sent, {"node-1": {"big": big}}, body_template="{{node-1.big}}")
    assert outcome.status == "ERROR"
    limit = RESPONSE_MAX_BYTES
    assert outcome.error == f"The response body is {limit + 1} bytes; a webhook's answer may be at most {limit} bytes"
    (reply,) = sent.replies
    assert reply.status == 502 and json.loads(reply.body)["message"] == outcome.error


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"status": "{{node-1.customer}}"}, "The status 'Ada' is not a number from 200 to 599"),
        ({"status": "101"}, "The status '101' is not a number from 200 to 599"),
        (
            {"header_lines": "X-Name: {{node-1.bad}}"},
            "Headers: the header X-Name holds a line break or a control character",
        ),
        ({"header_lines": "{{node-1.cookies}}"}, "Headers: the header Set-Cookie cannot be set by a Respond step"),
    ],
)
async def test_what_is_only_known_at_run_time_is_checked_then(
    make_ctx: Any, fields: dict[str, str], error: str
) -> None:
    token = RESPONDER.set(Recorder())
    try:
        ctx = make_ctx({"node-1": {**ORDER, "bad": "a\r\nSet-Cookie: x=1", "cookies": {"Set-Cookie": "a=b"}}})
        outcome = await run_step(Config(id="node-2", name="Respond", **fields), ctx)
    finally:
        RESPONDER.reset(token)
    assert outcome.status == "ERROR" and outcome.error is not None and outcome.error.startswith(error)


async def test_headers_from_an_object_and_a_no_content_status(make_ctx: Any) -> None:
    sent = Recorder()
    token = RESPONDER.set(sent)
    try:
        ctx = make_ctx({"node-1": {"h": {"X-A": "1", "X-B": 2}}})
        outcome = await run_step(
            Config(id="n", name="R", status="204", header_lines="{{node-1.h}}", body_template="ignored"), ctx
        )
    finally:
        RESPONDER.reset(token)
    assert outcome.status == "SUCCESS"
    assert sent.replies[0].headers == {"X-A": "1", "X-B": "2"} and sent.replies[0].body == ""


def _event(status: str, steps: list[tuple[str, Any]]) -> TaskEvent:
    now = datetime.now(UTC)
    return TaskEvent(
        run_id="r9",
        konnect_id=1,
        owner_id=1,
        konnect_name="f",
        status=status,  # type: ignore[arg-type]
        started_at=now,
        finished_at=now,
        trigger_id="node-1",
        trigger_output={},
        steps=[
            StepResult(step_id=f"s{i}", name="s", status=s, started_at=now, finished_at=now, input={}, output=o)  # type: ignore[arg-type]
            for i, (s, o) in enumerate(steps)
        ],
    )


def test_the_answer_of_a_finished_run() -> None:
    done = reply_for_event(_event("SUCCESS", [("SUCCESS", {"a": 1}), ("SUCCESS", {"b": "é"}), ("SKIPPED", None)]))
    assert (done.status, json.loads(done.body), done.headers) == (200, {"b": "é"}, {"Content-Type": "application/json"})
    failed = reply_for_event(_event("ERROR", [("SUCCESS", {"a": 1}), ("ERROR", None)]))
    assert failed.status == 500 and json.loads(failed.body) == {
        "message": "The run failed; its task log says why",
        "run_id": "r9",
    }
    huge = reply_for_event(_event("SUCCESS", [("SUCCESS", {"x": "y" * RESPONSE_MAX_BYTES})]))
    assert huge.status == 502 and "a webhook's answer may be at most" in json.loads(huge.body)["message"]


def _node(provider: str, **values: Any) -> Any:
    responses = [{"config_key": k, "value": v} for k, v in values.items()]
    if provider == "webhook":
        canvas = chain_canvas(
            [
                canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook", selectedAddonsValue=values),
                canvas_node("node-2", "ActionNode", "hash", 2, "Hash"),
            ],
            "f",
        )
        return Canvas.model_validate(canvas).node("node-1")
    canvas = chain_canvas(
        [
            canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
            canvas_node("node-2", "ActionNode", provider, 2, "Respond", configResponses=responses),
        ],
        "f",
    )
    return Canvas.model_validate(canvas).node("node-2")


def test_the_respond_node_compiles_and_refuses_what_cannot_be_sent() -> None:
    step = COMPILERS["respond"](_node("respond", status="202", headers="X-A: {{node-1.a}}", body="{{node-1.b}}"))
    assert step == Config(
        id="node-2", name="Respond", status="202", header_lines="X-A: {{node-1.a}}", body_template="{{node-1.b}}"
    )
    for values, message in [
        ({"status": "99"}, "the status must be a number from 200 to 599"),
        ({"status": "600"}, "the status must be a number from 200 to 599"),
        ({"headers": "Set-Cookie: a=b"}, "the header Set-Cookie cannot be set by a Respond step"),
        ({"headers": "Content-Length: 3"}, "the header Content-Length cannot be set"),
        ({"headers": "Transfer-Encoding: chunked"}, "the header Transfer-Encoding cannot be set"),
        ({"headers": "no colon here"}, "Headers: line 1 is not 'Name: value'"),
        ({"headers": "X-A: 1\nx-a: 2"}, "the header x-a is set twice"),
    ]:
        with pytest.raises(CompileError, match=message):
            COMPILERS["respond"](_node("respond", **values))


def test_the_webhook_setting_and_the_flow_rule() -> None:
    given = TriggerInput(webhook_token="t" * 24)
    assert compile_trigger(_node("webhook"), given) == WebhookTrigger(token="t" * 24)
    assert WebhookTrigger(token="t" * 24).model_dump() == {"kind": "webhook", "token": "t" * 24}  # specs unchanged
    held = compile_trigger(_node("webhook", respond="step", respond_timeout_seconds=5), given)
    assert (held.respond, held.respond_timeout_seconds) == ("step", 5)
    for values, message in [
        ({"respond": "later"}, "Respond: choose"),
        ({"respond": "when_done", "respond_timeout_seconds": 121}, "between 1 and 120 seconds"),
        ({"respond": "when_done", "respond_timeout_seconds": "ten"}, "a whole number of seconds"),
    ]:
        with pytest.raises(CompileError, match=message):
            compile_trigger(_node("webhook", **values), given)
    respond = [Config(id="node-2", name="R")]
    assert check_flow(WebhookTrigger(token="t" * 24), respond) == NEEDS_WEBHOOK
    assert check_flow(WebhookTrigger(token="t" * 24, respond="when_done"), respond) == NEEDS_WEBHOOK
    assert check_flow(WebhookTrigger(token="t" * 24, respond="step"), respond) is None
    assert check_flow(WebhookTrigger(token="t" * 24, respond="step"), []) == NO_RESPOND_STEP


# --- the runner in this process: the ingress holds the webhook for its run's answer -------------------------


def _spec(steps: list[Any], respond: str, timeout: int = 10) -> FlowSpec:
    return FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6,
        owner_id=3,
        name="Answer",
        trigger_id="node-1",
        trigger=WebhookTrigger(token=secrets.token_urlsafe(32), respond=respond, respond_timeout_seconds=timeout),  # type: ignore[arg-type]
        steps=steps,
    )


async def _publish(runner: RunningRunner, nc: NATS, spec: FlowSpec) -> str:
    kv = await nc.jetstream().key_value(KV_KONNECTS)
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: runner.runner.registry.by_id(spec.konnect_id) == spec)
    assert isinstance(spec.trigger, WebhookTrigger)
    return f"{runner.base}/hooks/{spec.trigger.token}"


async def test_a_respond_step_answers_the_held_webhook(shared_runner: RunningRunner, nc: NATS, echo: Any) -> None:
    respond = Config(
        id="node-3",
        name="Respond",
        status="{{node-2.status}}",
        header_lines="X-Order: {{node-1.order.id}}",
        body_template="<p>Order {{node-1.order.id}} for {{node-1.customer}}</p>",
    )
    call = ApiCallStep(id="node-2", name="Send", method="POST", url=echo.base + "/echo")
    hook = await _publish(shared_runner, nc, _spec([call, respond], "step"))
    async with httpx.AsyncClient(timeout=20) as http:
        reply = await http.post(hook, json=ORDER)
    assert reply.status_code == 200, reply.text
    assert reply.text == "<p>Order 77 for Ada</p>"
    assert reply.headers["x-order"] == "77" and reply.headers["content-type"] == "text/plain; charset=utf-8"
    assert (
        reply.headers["content-security-policy"] == "sandbox" and reply.headers["x-content-type-options"] == "nosniff"
    )
    assert len(echo.requests_to("/echo")) == 1  # answered after the step before it ran


async def test_when_done_answers_with_the_last_output_and_at_once_as_before(
    shared_runner: RunningRunner, nc: NATS, echo: Any
) -> None:
    call = ApiCallStep(id="node-2", name="Send", method="POST", url=echo.base + "/echo")
    done = await _publish(shared_runner, nc, _spec([call], "when_done"))
    failing = ApiCallStep(id="node-2", name="Send", method="GET", url=echo.base + "/status/404")
    fails = await _publish(shared_runner, nc, _spec([failing], "when_done"))
    at_once = await _publish(shared_runner, nc, _spec([call], "at_once"))
    async with httpx.AsyncClient(timeout=20) as http:
        reply = await http.post(done, json=ORDER)
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
        assert reply.json()["status"] == 200 and reply.json()["body"]["path"] == "/echo"  # the API call's output
        failed = await http.post(fails, json=ORDER)
        assert failed.status_code == 500 and failed.json()["message"] == "The run failed; its task log says why"
        first = await http.post(at_once, json=ORDER)
        assert first.status_code == 200 and set(first.json()) == {"status", "run_id"}


async def test_past_the_timeout_or_in_a_delay_the_caller_gets_202(
    shared_runner: RunningRunner, nc: NATS, echo: Any
) -> None:
    slow = ApiCallStep(id="node-2", name="Slow", method="GET", url=echo.base + "/slow")  # 1.5 s
    late = await _publish(
        shared_runner, nc, _spec([slow, Config(id="node-3", name="Respond", body_template="late")], "step", 1)
    )
    delay = DelayStep(id="node-2", name="Wait", mode="for", amount=5, unit="minutes")
    waits = await _publish(shared_runner, nc, _spec([delay, Config(id="node-3", name="R", body_template="x")], "step"))
    async with httpx.AsyncClient(timeout=20) as http:
        started = time.monotonic()
        reply = await http.post(late, json=ORDER)
        took = time.monotonic() - started
        assert reply.status_code == 202 and reply.json()["status"] == "accepted" and len(reply.json()["run_id"]) == 32
        assert 0.9 < took < 1.5, took
        started = time.monotonic()
        waited = await http.post(waits, json=ORDER)
        assert waited.status_code == 202 and "the run waits" in waited.json()["message"]
        assert time.monotonic() - started < 5
    assert shared_runner.runner.replies.waiting == {}  # every held request forgotten once answered


async def test_the_ingress_takes_the_first_answer_and_says_so(nc: NATS) -> None:
    waiter = ReplyWaiter()
    await waiter.start(nc)
    held = waiter.expect()
    run = type("Run", (), {"respond_to": held.subject, "run_id": "r1", "resume": None})()
    replies = RunReplies(nc, run)  # type: ignore[arg-type]
    answer = asyncio.create_task(held.wait(5))
    assert await replies.send(WebhookReply(run_id="r1", body="one")) is None
    assert (await answer) == WebhookReply(run_id="r1", body="one")
    assert await replies.send(WebhookReply(run_id="r1", body="two")) == ANSWERED
    again = RunReplies(nc, run)  # type: ignore[arg-type]  # a redelivery: the ingress no longer waits
    assert await again.send(WebhookReply(run_id="r1", body="three")) == LATE
    gone = type("Run", (), {"respond_to": "kz.responses.nobody.x", "run_id": "r2", "resume": None})()
    assert await RunReplies(nc, gone).send(WebhookReply(run_id="r2")) == NOBODY  # type: ignore[arg-type]
    assert TAKEN == b"taken"
    # A run back from a delay had its 202 when it suspended: it answers nothing. One back from a wait for
    # a call (or an approval) did not: its caller may still be held, so it may answer.
    delayed = type(
        "Run", (), {"respond_to": "kz.responses.p.x", "run_id": "r3", "resume": type("C", (), {"wait": None})()}
    )()
    waited = type(
        "Run", (), {"respond_to": "kz.responses.p.y", "run_id": "r4", "resume": type("C", (), {"wait": 1})()}
    )()
    assert RunReplies(nc, delayed).resumed is True  # type: ignore[arg-type]
    assert RunReplies(nc, waited).resumed is False  # type: ignore[arg-type]


async def test_the_answer_crosses_from_another_runner_s_worker(nats_server: Any, nc: NATS, echo: Any) -> None:
    """The ingress of one runner, the worker of others (their own NATS connections): an ingress whose
    worker is stopped still gets its runs' answers."""
    from .test_server import start_runner

    ingress_only = await start_runner(nats_server)
    try:
        assert ingress_only.runner.worker_thread is not None
        await ingress_only.runner.worker_thread.stop()
        ingress_only.runner.worker_thread = None
        spec = _spec([Config(id="node-2", name="Respond", status="201", body_template="{{node-1.customer}}")], "step")
        hook = await _publish(ingress_only, nc, spec)
        other = await start_runner(nats_server)  # the worker that runs it
        try:
            async with httpx.AsyncClient(timeout=20) as http:
                reply = await http.post(hook, json=ORDER)
            assert (reply.status_code, reply.text) == (201, "Ada")
        finally:
            await other.stop()
    finally:
        await ingress_only.stop()
