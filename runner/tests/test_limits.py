"""Ingress bounds and bounded storage against a real nats-server (konnectz_contracts.limits).

Hostile or careless input gets a 4xx that says why before anything is stored; what is accepted can
always be stored and always ends as one task event; a finished run's request is gone from KZ_RUNS;
every stream and consumer states its bounds.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from nats.aio.client import Client as NATS
from nats.js.api import RetentionPolicy

from konnectz_contracts import limits
from konnectz_contracts.capture import STREAM_CAPTURES
from konnectz_contracts.events import (
    EVENTS_CONSUMER,
    EVENTS_MAX_DELIVER,
    KV_KONNECTS,
    STREAM_EVENTS,
    STREAM_RUNS,
    RunRequest,
    StepResult,
    TaskEvent,
    Unstorable,
    encode_run,
    fit_event,
    konnect_key,
    run_subject,
)
from konnectz_contracts.quota import (
    QUOTA_MANY_SUBJECT,
    QUOTA_SUBJECT,
    QuotaReplies,
    QuotaReply,
    QuotaRequest,
    QuotaRequests,
)
from konnectz_devstack._nats import NATS_MAX_PAYLOAD as DEVSTACK_MAX_PAYLOAD
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_runner.bus import ensure_streams, publish_run
from konnectz_runner.ingress.webhook import parse_json
from konnectz_runner.work.worker import CONSUMER_MAX_DELIVER

from .test_server import RunningRunner, new_spec, next_event, start_runner, wait_until

pytestmark = pytest.mark.integration


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_the_limits_sit_under_one_another() -> None:
    assert limits.FORM_MAX_BYTES < limits.WEBHOOK_MAX_BYTES < limits.RUN_MAX_BYTES
    assert limits.RUN_MAX_BYTES < limits.EVENT_MAX_BYTES < limits.NATS_MAX_PAYLOAD
    assert limits.CAPTURE_MSG_MAX_BYTES < limits.NATS_MAX_PAYLOAD
    assert limits.MAX_JSON_DEPTH < limits.API_MAX_JSON_DEPTH < 500  # far from Python's recursion limit
    assert DEVSTACK_MAX_PAYLOAD == limits.NATS_MAX_PAYLOAD  # the dev stack's and the tests' nats.conf


def test_json_depth_is_checked_without_recursion() -> None:
    assert parse_json(nested(limits.MAX_JSON_DEPTH)) is not None
    with pytest.raises(limits.TooDeep):
        parse_json(nested(limits.MAX_JSON_DEPTH + 1))
    with pytest.raises(limits.TooDeep):
        parse_json(nested(100_000))  # json's own RecursionError becomes the same refusal
    with pytest.raises(limits.TooDeep):
        limits.check_depth(json.loads("[" * 65 + "]" * 65))  # empty containers count too


def _run(trigger_output: dict[str, Any]) -> RunRequest:
    return RunRequest(run_id="r1", konnect_id=1, trigger_output=trigger_output, received_at=datetime.now(UTC))


def test_a_run_that_cannot_be_stored_is_refused_with_the_reason() -> None:
    with pytest.raises(Unstorable) as surrogate:
        encode_run(_run(json.loads('{"x": "\\ud800"}')))
    assert surrogate.value.status == 400 and "surrogate" in surrogate.value.message
    with pytest.raises(Unstorable) as large:
        encode_run(_run({"x": "\u0001" * (limits.RUN_MAX_BYTES // 6 + 1)}))  # 6 bytes each once escaped
    assert large.value.status == 413 and str(limits.RUN_MAX_BYTES) in large.value.message
    assert len(encode_run(_run({"x": "y" * 1000}))) < 2000


def test_an_event_larger_than_the_stream_takes_is_trimmed_keeping_steps_and_statuses() -> None:
    now = datetime.now(UTC)
    big = "x" * (limits.EVENT_MAX_BYTES // 2)
    steps = [
        StepResult(step_id=f"node-{i}", name="Send", status="SUCCESS", started_at=now, finished_at=now,
                   input={"body": big if i == 2 else "small"}, output={"reply": big if i == 3 else "ok"})
        for i in (2, 3)
    ] + [StepResult(step_id="node-4", name="Fail", status="ERROR", started_at=now, finished_at=now,
                    input={}, output=None, error="boom")]  # fmt: skip
    event = TaskEvent(run_id="r1", konnect_id=1, owner_id=1, konnect_name="k", status="ERROR", started_at=now,
                      finished_at=now, trigger_id="node-1", trigger_output={"body": big}, steps=steps)  # fmt: skip
    fitted, data = fit_event(event)
    assert len(data) <= limits.EVENT_MAX_BYTES < len(event.model_dump_json())
    assert [(s.step_id, s.status, s.error) for s in fitted.steps] == [(s.step_id, s.status, s.error) for s in steps]
    dropped = [fitted.trigger_output, fitted.steps[0].input, fitted.steps[1].output]
    assert sum(1 for d in dropped if isinstance(d, dict) and d.get("truncated")) >= 2
    assert any("too large to keep" in str(d) for d in dropped)
    assert fit_event(fitted)[0] == fitted  # what fits is left alone
    # An event holding a lone surrogate (a step's output) is stored without that value.
    bad = event.model_copy(update={"trigger_output": {"x": "\ud800"}, "steps": steps[2:]})
    fitted_bad, _ = fit_event(bad)
    assert fitted_bad.trigger_output.get("truncated") is True


async def test_nats_and_every_stream_and_consumer_state_their_bounds(nc: NATS, shared_runner: RunningRunner) -> None:
    js = nc.jetstream()
    assert nc.max_payload == limits.NATS_MAX_PAYLOAD  # the server's configuration, not NATS' 1 MB default
    runs = (await js.stream_info(STREAM_RUNS)).config
    assert runs.max_msg_size == limits.RUN_MAX_BYTES and runs.max_age == limits.RUNS_MAX_AGE_SECONDS
    events = (await js.stream_info(STREAM_EVENTS)).config
    assert events.retention == RetentionPolicy.INTEREST
    assert events.max_msg_size == limits.EVENT_MAX_BYTES
    assert events.max_bytes == limits.EVENTS_MAX_BYTES and events.max_age == limits.EVENTS_MAX_AGE_SECONDS
    captures = (await js.stream_info(STREAM_CAPTURES)).config
    assert captures.max_msg_size == limits.CAPTURE_MSG_MAX_BYTES and 0 < (captures.max_age or 0)
    assert captures.max_bytes is not None and captures.max_bytes > 0
    assert (await js.consumer_info(STREAM_RUNS, "runner")).config.max_deliver == CONSUMER_MAX_DELIVER
    assert (await js.consumer_info(STREAM_EVENTS, EVENTS_CONSUMER)).config.max_deliver == EVENTS_MAX_DELIVER


async def _publish(nc: NATS, shared_runner: RunningRunner, url: str) -> tuple[int, str]:
    spec = new_spec(url)
    await (await nc.jetstream().key_value(KV_KONNECTS)).put(
        konnect_key(spec.konnect_id), spec.model_dump_json().encode()
    )
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    assert spec.trigger.kind == "webhook"
    return spec.konnect_id, f"{shared_runner.base}/hooks/{spec.trigger.token}"


async def _stored_runs(nc: NATS, konnect_id: int) -> int:
    info = await nc.jetstream().stream_info(STREAM_RUNS, subjects_filter=run_subject(konnect_id))
    return sum((info.state.subjects or {}).values())


async def _no_stored_runs(nc: NATS, konnect_id: int) -> bool:
    return await _stored_runs(nc, konnect_id) == 0


async def test_hostile_bodies_get_a_4xx_that_says_why_and_nothing_is_stored(
    nc: NATS, shared_runner: RunningRunner, echo: Any
) -> None:
    konnect_id, hook = await _publish(nc, shared_runner, echo.base + "/echo")
    json_type = {"Content-Type": "application/json"}
    cases = [
        # (body, headers, status, words in the message)
        (b'{"x": "\\ud800"}', json_type, 400, "surrogate"),
        (nested(limits.MAX_JSON_DEPTH + 1).encode(), json_type, 400, f"deeper than {limits.MAX_JSON_DEPTH}"),
        (nested(500).encode(), json_type, 400, "deeper than"),
        (nested(1000).encode(), json_type, 400, "deeper than"),  # a RecursionError (500) before
        (nested(2000).encode(), {"Content-Type": "text/plain"}, 400, "deeper than"),
        (b"\x01\x02" * 100_000, {"Content-Type": "text/plain"}, 415, "control character"),
        (bytes(range(256)) * 100, {"Content-Type": "application/octet-stream"}, 415, "not UTF-8"),
        (b"x" * (limits.WEBHOOK_MAX_BYTES + 1), {"Content-Type": "text/plain"}, 413, str(limits.WEBHOOK_MAX_BYTES)),
        # a form field's byte 0x01 is 1 byte sent but 6 stored: refused by the stored size, not the body's
        (
            b'--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n' + b"\x01" * 400_000 + b"\r\n--b--\r\n",
            {"Content-Type": "multipart/form-data; boundary=b"},
            413,
            "once stored as JSON",
        ),
    ]
    async with httpx.AsyncClient(timeout=30) as http:
        for body, headers, status, words in cases:
            reply = await http.post(hook, content=body, headers=headers)
            message = reply.json().get("message", "")
            assert (reply.status_code, words in message) == (status, True), (body[:40], reply.text[:300])
    assert await _stored_runs(nc, konnect_id) == 0


async def test_a_webhook_just_under_the_limit_is_accepted_runs_once_and_leaves_kz_runs(
    nc: NATS, shared_runner: RunningRunner, echo: Any
) -> None:
    """The issue's case: 1,047,999 bytes were acknowledged, then redelivered for ever (maximum payload
    exceeded). Now it ends as one task event, and its request is gone from NATS once it ran."""
    konnect_id, hook = await _publish(nc, shared_runner, echo.base + "/echo")
    padding = "p" * (1_047_999 - len('{"order": {"id": 7}, "pad": ""}'))
    body = json.dumps({"order": {"id": 7}, "pad": padding}).encode()
    assert len(body) == 1_047_999
    async with httpx.AsyncClient(timeout=30) as http:
        reply = await http.post(hook, content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == 200, reply.text
    event, _headers = await next_event(nc.jetstream(), konnect_id, within=20)
    assert event.run_id == reply.json()["run_id"] and event.status == "SUCCESS" and event.attempts == 1
    assert event.trigger_output["pad"] == padding  # kept whole: it fits
    assert [s.status for s in event.steps] == ["SUCCESS"]

    # The accepted request lived in KZ_RUNS only until it had run.
    async def gone() -> bool:
        return await _stored_runs(nc, konnect_id) == 0

    await wait_until(gone, within=10)


async def test_a_transient_failure_is_a_503_with_retry_after(nats_server: Any, echo: Any) -> None:
    running = await start_runner(nats_server, retry_after_seconds=7)
    try:
        spec = new_spec(echo.base + "/echo")
        running.runner.registry.put(spec)
        js = running.runner.js
        running.runner.js = None  # as if NATS went away between the check and the store
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                reply = await http.post(f"{running.base}/hooks/{spec.trigger.token}", json={"a": 1})
        finally:
            running.runner.js = js
        assert reply.status_code == 503 and reply.headers["Retry-After"] == "7"
        assert "try again" in reply.json()["message"]
    finally:
        await running.stop()


@pytest.fixture
def own_server() -> Iterator[NatsServer]:
    """A NATS of this test's own: no other runner shares its consumers."""
    server = NatsServer(Path(tempfile.mkdtemp(prefix="konnectz-nats-quota-")), free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def own_nats(own_server: NatsServer) -> AsyncIterator[NATS]:
    """The test's own NATS, connected as the test admin user."""
    client = await nats.connect(own_server.admin_url)
    await ensure_streams(client.jetstream())
    try:
        yield client
    finally:
        await client.drain()


async def test_over_quota_the_webhook_is_refused_at_ingress_and_nothing_is_stored(
    own_server: NatsServer, own_nats: NATS, echo: Any
) -> None:
    """A quota service (the api's part, played here on its NATS subjects) says the owner has no task
    left: the first run becomes an ERROR event without the request's body; from then on the owner's
    webhooks are answered 402 with the reason, and KZ_RUNS stores nothing for them."""
    reason = "Task quota exceeded: this run needs 1 task(s) but only 0 of the 5 tasks of the Free plan remain."
    asked: list[str] = []

    async def answer(msg: Any) -> None:
        if msg.subject == QUOTA_MANY_SUBJECT:
            requests = QuotaRequests.model_validate_json(msg.data).requests
        else:
            requests = [QuotaRequest.model_validate_json(msg.data)]
        asked.extend(r.run_id for r in requests)
        reply = QuotaReply(allowed=False, reason=reason, task_limit=5, task_consumed=5)
        if msg.subject == QUOTA_MANY_SUBJECT:
            await msg.respond(QuotaReplies(replies=[reply] * len(requests)).model_dump_json().encode())
        else:
            await msg.respond(reply.model_dump_json().encode())

    nc = own_nats
    subs = [await nc.subscribe(QUOTA_SUBJECT, cb=answer), await nc.subscribe(QUOTA_MANY_SUBJECT, cb=answer)]
    running = await start_runner(own_server, enforce_quota=True)
    try:
        konnect_id, hook = await _publish(nc, running, echo.base + "/echo")
        calls_before = len(echo.requests_to("/echo"))
        async with httpx.AsyncClient(timeout=10) as http:
            first = await http.post(hook, json={"secret": "a large body"})
            assert first.status_code == 200
            event, _ = await next_event(nc.jetstream(), konnect_id)
            assert event.status == "ERROR" and event.refused == reason
            assert "secret" not in json.dumps(event.trigger_output)  # only that it was refused
            assert len(echo.requests_to("/echo")) == calls_before  # nothing ran

            async def refused_at_ingress() -> bool:
                reply = await http.post(hook, json={"secret": "again"})
                return reply.status_code == 402 and reason in reply.json()["message"]

            await wait_until(refused_at_ingress, within=10)
            # The refused run's own message leaves KZ_RUNS once its ERROR event is acknowledged,
            # which may come a moment after the event is seen.
            await wait_until(lambda: _no_stored_runs(nc, konnect_id), within=10)
            for _ in range(5):
                reply = await http.post(hook, json={"secret": "x" * 100_000})
                assert reply.status_code == 402 and "nothing was stored" in reply.json()["message"]
        assert await _stored_runs(nc, konnect_id) == 0
        assert len(asked) <= 2  # the refused runs asked once each; the 402s asked nothing
    finally:
        await running.stop()
        for sub in subs:
            await sub.unsubscribe()


async def test_a_kz_events_made_before_gets_its_bounds_and_keeps_its_waiting_events() -> None:
    """An install from before: KZ_EVENTS with limits retention, no bounds, an event not yet stored by
    the api. ensure_streams gives it the api's consumer first, then interest retention and the bounds:
    the waiting event is kept for the api."""
    from nats.js.api import StorageType, StreamConfig

    server = NatsServer(Path(tempfile.mkdtemp(prefix="konnectz-nats-old-")), free_port())
    server.start()
    client = await nats.connect(server.admin_url)
    try:
        js = client.jetstream()
        await js.add_stream(StreamConfig(name=STREAM_EVENTS, subjects=["kz.events.>"], storage=StorageType.FILE))
        await js.publish("kz.events.5", b'{"waiting": true}', stream=STREAM_EVENTS)
        await ensure_streams(js)
        config = (await js.stream_info(STREAM_EVENTS)).config
        assert config.retention == RetentionPolicy.INTEREST and config.max_msg_size == limits.EVENT_MAX_BYTES
        assert (await js.stream_info(STREAM_EVENTS)).state.messages == 1
        consumer = await js.consumer_info(STREAM_EVENTS, EVENTS_CONSUMER)
        assert consumer.num_pending == 1 and consumer.config.max_deliver == EVENTS_MAX_DELIVER
    finally:
        await client.drain()
        server.stop()


async def test_a_run_the_server_stops_offering_ends_as_an_error_task_event_and_leaves_kz_runs(
    own_nats: NATS, echo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every delivery of a run failed to finish it (here: the runner fails unexpectedly and the worker's
    own attempts are set beyond the consumer's max_deliver): when the server stops offering it, the
    worker hears the max-deliveries advisory, stores an ERROR task event that says why and deletes it."""
    from konnectz_runner.apps import NetGuard, parse_networks
    from konnectz_runner.bus import KonnectRegistry
    from konnectz_runner.work import worker as worker_module

    async def broken(*args: Any, **kwargs: Any) -> TaskEvent:
        raise RuntimeError("bug")

    monkeypatch.setattr(worker_module, "execute", broken)
    js = own_nats.jetstream()
    spec = new_spec(echo.base + "/echo")
    registry = KonnectRegistry()
    registry.put(spec)
    async with httpx.AsyncClient() as http:
        worker = worker_module.RunWorker(js, registry, http=http, guard=NetGuard(parse_networks("127.0.0.0/8")),
                                         max_deliver=50, consumer_max_deliver=2)  # fmt: skip
        await worker.start()
        try:
            run = RunRequest(run_id="poison-1", konnect_id=spec.konnect_id, trigger_output={"a": 1},
                             received_at=datetime.now(UTC))  # fmt: skip
            await publish_run(js, run)
            event, _ = await next_event(js, spec.konnect_id, within=30)

            async def gone() -> bool:
                return await _stored_runs(own_nats, spec.konnect_id) == 0

            await wait_until(gone, within=10)  # deleted once its event was stored
        finally:
            await worker.stop()
    assert event.run_id == "poison-1" and event.status == "ERROR" and event.attempts == 2
    assert "ended after 2 deliveries" in (event.steps[-1].error or "")
