"""The runner process against a real nats-server: KV-driven webhooks, JetStream runs and events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
import uvicorn
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy

from konnectz_contracts.capture import valid_token
from konnectz_contracts.events import (
    KV_KONNECTS,
    STREAM_EVENTS,
    STREAM_RUNS,
    RunRequest,
    TaskEvent,
    event_subject,
    konnect_key,
    run_subject,
)
from konnectz_contracts.nats_auth import RUNNER
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_runner.apps import parse_networks
from konnectz_runner.bus import capturing, close_window, ensure_streams, last_capture, open_window
from konnectz_runner.config import Settings
from konnectz_runner.ingress import create_app
from konnectz_runner.ingress.server import Runner

pytestmark = pytest.mark.integration


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # leave pytest's signal handlers alone
        yield


@dataclass
class RunningRunner:
    base: str
    runner: Runner
    server: _QuietServer
    task: asyncio.Task[None]

    async def stop(self) -> None:
        self.server.should_exit = True
        # Shutdown ends the duties, the worker and a NATS drain (up to 10 s each); at a load of 10 on
        # two cores a runner that had lost NATS once took over 30 s.
        await asyncio.wait_for(self.task, 90)


async def start_runner(nats: NatsServer, **overrides: Any) -> RunningRunner:
    """The runner in this process, connected to ``nats`` as the runner user."""
    settings = Settings(
        **nats.settings(RUNNER),
        allow_private_networks=parse_networks("127.0.0.0/8"),
        http_timeout_seconds=5,
        **{"enforce_quota": False, **overrides},  # no api here: quotas are tested in test_quota.py
    )
    app = create_app(settings)
    port = free_port()
    server = _QuietServer(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise AssertionError("uvicorn stopped before starting")
        await asyncio.sleep(0.02)
    return RunningRunner(f"http://127.0.0.1:{port}", app.state.runner, server, task)


async def wait_until(check: Callable[[], Awaitable[bool]] | Callable[[], bool], within: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        outcome = check()
        if asyncio.iscoroutine(outcome):
            outcome = await outcome
        if outcome:
            return
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


def new_spec(url: str, *, konnect_id: int | None = None, token: str | None = None) -> FlowSpec:
    return FlowSpec(
        konnect_id=konnect_id or secrets.randbelow(10**9) + 10**6,
        owner_id=3,
        name="Forward orders",
        trigger_id="node-1",
        trigger=WebhookTrigger(token=token or secrets.token_urlsafe(32)),
        steps=[
            ApiCallStep(
                id="node-2",
                name="Send",
                method="POST",
                url=url,
                body=[KeyValue(key="order.id", value="{{node-1.order.id}}"), KeyValue(key="via", value="runner")],
            )
        ],
    )


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def next_event(js: JetStreamContext, konnect_id: int, within: float = 15.0) -> tuple[TaskEvent, Any]:
    sub = await js.pull_subscribe(
        event_subject(konnect_id),
        stream=STREAM_EVENTS,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
    )
    try:
        [msg] = await sub.fetch(1, timeout=within)
        await msg.ack()
        return TaskEvent.model_validate_json(msg.data), msg.headers
    finally:
        await sub.unsubscribe()


async def test_healthz(shared_runner: RunningRunner, http: httpx.AsyncClient) -> None:
    reply = await http.get(shared_runner.base + "/healthz")
    assert reply.status_code == 200
    assert reply.json() == {"status": "ok"}


async def test_unknown_webhook_is_404(shared_runner: RunningRunner, http: httpx.AsyncClient) -> None:
    reply = await http.post(shared_runner.base + "/hooks/" + secrets.token_urlsafe(32), json={})
    assert reply.status_code == 404
    assert reply.json() == {"message": "Unknown webhook"}


async def test_published_konnect_runs_from_webhook_to_task_event(
    shared_runner: RunningRunner, nc: NATS, echo: Any, http: httpx.AsyncClient
) -> None:
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    token = spec.trigger.token
    hook = f"{shared_runner.base}/hooks/{token}"

    # Publishing = writing the KV key: the running runner picks it up without a restart.
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_token(token) is not None)
    # A prefix of the token is not the token.
    assert (await http.post(f"{shared_runner.base}/hooks/{token[:-1]}", json={})).status_code == 404

    reply = await http.post(hook, json={"order": {"id": 77}, "customer": "Ada"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["status"] == "accepted"
    run_id = body["run_id"]
    assert len(run_id) == 32

    # The 200 came after JetStream stored the run: it is in KZ_RUNS under its Nats-Msg-Id.
    stored = await js.get_last_msg(STREAM_RUNS, run_subject(spec.konnect_id))
    assert stored.headers is not None and stored.headers["Nats-Msg-Id"] == run_id
    run = RunRequest.model_validate_json(stored.data)
    assert run.run_id == run_id and run.konnect_id == spec.konnect_id and run.source == "webhook"
    assert run.trigger_output == {"order": {"id": 77}, "customer": "Ada"}
    assert run.received_at.tzinfo is not None

    # The worker executed it and published one TaskEvent.
    event, headers = await next_event(js, spec.konnect_id)
    assert headers["Nats-Msg-Id"] == run_id
    assert event.run_id == run_id and event.status == "SUCCESS"
    assert event.owner_id == 3 and event.konnect_name == "Forward orders"
    assert event.trigger_output == {"order": {"id": 77}, "customer": "Ada"}
    [step] = event.steps
    assert step.status == "SUCCESS" and step.output is not None and step.output["status"] == 200
    [received] = echo.requests_to("/echo")
    assert received.json() == {"order": {"id": 77}, "via": "runner"}

    # Updating the konnect takes effect without a restart too.
    failing = spec.model_copy(update={"steps": [spec.steps[0].model_copy(update={"url": echo.base + "/status/404"})]})
    await kv.put(konnect_key(spec.konnect_id), failing.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) == failing)
    reply = await http.put(hook, json={"order": {"id": 78}})
    assert reply.status_code == 200
    await wait_until(lambda: bool(echo.requests_to("/status/404")))
    second_run = reply.json()["run_id"]
    sub = await js.pull_subscribe(event_subject(spec.konnect_id), stream=STREAM_EVENTS)
    events = [TaskEvent.model_validate_json(m.data) for m in await sub.fetch(2, timeout=10)]
    await sub.unsubscribe()
    [second] = [e for e in events if e.run_id == second_run]
    assert second.status == "ERROR"
    assert second.steps[0].error is not None and second.steps[0].error.startswith("HTTP 404 from ")

    # Unpublishing (deleting the key) stops the webhook.
    await kv.delete(konnect_key(spec.konnect_id))
    await wait_until(lambda: shared_runner.runner.registry.by_token(token) is None)
    reply = await http.post(hook, json={})
    assert reply.status_code == 404
    assert reply.json() == {"message": "Unknown webhook"}


async def test_webhook_limits_and_bad_bodies(
    shared_runner: RunningRunner, nc: NATS, echo: Any, http: httpx.AsyncClient
) -> None:
    kv = await nc.jetstream().key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    hook = f"{shared_runner.base}/hooks/{spec.trigger.token}"
    too_big = await http.post(hook, content=b"x" * (1024 * 1024 + 1), headers={"Content-Type": "text/plain"})
    assert too_big.status_code == 413
    assert "larger than 1048576 bytes" in too_big.json()["message"]
    bad = await http.post(hook, content=b"{", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("Invalid JSON body")
    assert (await http.delete(hook)).status_code == 405
    runs_before = (await nc.jetstream().stream_info(STREAM_RUNS)).state.messages
    assert (await http.head(hook)).status_code == 200  # a probe, not a run
    assert (await http.head(f"{shared_runner.base}/hooks/{'y' * 40}")).status_code == 404
    assert (await nc.jetstream().stream_info(STREAM_RUNS)).state.messages == runs_before
    await kv.delete(konnect_key(spec.konnect_id))


class _Lines(logging.Handler):
    """Every record of WARNING or above, formatted as it would be logged (tracebacks included)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


async def test_a_client_that_disconnects_mid_body_is_one_log_line(
    shared_runner: RunningRunner, nc: NATS, echo: Any
) -> None:
    """A sender that goes away in the middle of its body: one warning line, no traceback, no run."""
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    runs_before = (await js.stream_info(STREAM_RUNS)).state.messages
    lines = _Lines()
    loggers = [logging.getLogger(), logging.getLogger("uvicorn")]  # uvicorn's loggers do not propagate
    for logger in loggers:
        logger.addHandler(lines)
    try:
        _, port = shared_runner.base.rsplit(":", 1)
        _reader, writer = await asyncio.open_connection("127.0.0.1", int(port))
        writer.write(
            f"POST /hooks/{spec.trigger.token} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n".encode()
            + b'{"order": '
        )
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()
        await writer.wait_closed()
        await wait_until(lambda: any("disconnect" in line.lower() for line in lines.records), within=10)
        await asyncio.sleep(0.3)  # anything more it would log
    finally:
        for logger in loggers:
            logger.removeHandler(lines)
    text = "\n".join(lines.records)
    assert "Traceback" not in text, text[-3000:]
    said = [line for line in lines.records if "disconnect" in line.lower()]
    assert len(said) == 1 and "\n" not in said[0], said
    assert f"POST webhook of konnect {spec.konnect_id}: the client disconnected before its request" in said[0]
    assert spec.trigger.token not in text  # the webhook's secret stays out of the log
    assert (await js.stream_info(STREAM_RUNS)).state.messages == runs_before  # no run was started
    await kv.delete(konnect_key(spec.konnect_id))


async def test_run_for_a_konnect_loaded_later_waits_and_runs(shared_runner: RunningRunner, nc: NATS, echo: Any) -> None:
    """A run that arrives before its konnect is loaded is not dropped: it waits and then runs."""
    js = nc.jetstream()
    spec = new_spec(echo.base + "/echo")
    run = RunRequest(
        run_id=secrets.token_hex(16), konnect_id=spec.konnect_id, trigger_output={"order": {"id": 9}},
        received_at=datetime.now(UTC),
    )  # fmt: skip
    await js.publish(run_subject(run.konnect_id), run.model_dump_json().encode(), headers={"Nats-Msg-Id": run.run_id})
    await asyncio.sleep(1.5)  # delivered at least once while the konnect is unknown here
    kv = await js.key_value(KV_KONNECTS)
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    event, _ = await next_event(js, spec.konnect_id, within=20)
    assert event.run_id == run.run_id and event.status == "SUCCESS" and event.attempts >= 2
    assert [r.json() for r in echo.requests_to("/echo")] == [{"order": {"id": 9}, "via": "runner"}]
    await kv.delete(konnect_key(spec.konnect_id))


async def test_spec_file_mode_serves_one_konnect(
    nats_server: Any, nc: NATS, echo: Any, http: httpx.AsyncClient
) -> None:
    spec = new_spec(echo.base + "/echo")
    folder = Path(tempfile.mkdtemp(prefix="konnectz-spec-"))
    try:
        spec_file = folder / "flow.json"
        spec_file.write_text(spec.model_dump_json())
        running = await start_runner(nats_server, spec_file=spec_file)
        try:
            assert running.runner.registry.specs() == [spec]
            reply = await http.post(f"{running.base}/hooks/{spec.trigger.token}", data={"order.id": "5"})
            assert reply.status_code == 200
            event, _ = await next_event(nc.jetstream(), spec.konnect_id)
            assert event.run_id == reply.json()["run_id"] and event.status == "SUCCESS"
            assert event.trigger_output == {"order.id": "5"}
            info = await nc.jetstream().consumer_info(STREAM_RUNS, f"runner-{spec.konnect_id}")
            assert info.config.filter_subject == run_subject(spec.konnect_id)
        finally:
            await running.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def test_tick_with_a_bad_spec_file_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "flow.json"
    bad.write_text(json.dumps({"konnect_id": 1}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "konnectz_runner", "tick", "--spec-file", str(bad),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert "not a valid flow spec" in err.decode()


async def test_no_2xx_while_nats_is_down_and_recovery(echo: Any, http: httpx.AsyncClient) -> None:
    base = Path(tempfile.mkdtemp(prefix="konnectz-nats-own-"))
    own = NatsServer(base, free_port())
    own.start()
    try:
        client = await nats.connect(own.admin_url)
        js = client.jetstream()
        await ensure_streams(js)
        spec = new_spec(echo.base + "/echo")
        await (await js.key_value(KV_KONNECTS)).put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
        await client.drain()

        running = await start_runner(own)
        try:
            hook = f"{running.base}/hooks/{spec.trigger.token}"
            assert (await http.post(hook, json={"n": 1})).status_code == 200

            own.stop()
            await wait_until(lambda: not running.runner.nc.is_connected)  # type: ignore[union-attr]
            down = await http.post(hook, json={"n": 2})
            assert down.status_code == 503
            assert "could not be stored" in down.json()["message"]
            health = await http.get(running.base + "/healthz")
            assert health.status_code == 503 and health.json()["status"] == "unavailable"

            own.start()  # same store: the streams and the bucket come back
            await wait_until(lambda: running.runner.nc.is_connected, within=20)  # type: ignore[union-attr]
            assert (await http.get(running.base + "/healthz")).status_code == 200
            again = await http.post(hook, json={"n": 3})
            assert again.status_code == 200, again.text

            # The KV watch survives the restart: a konnect published now is served.
            client = await nats.connect(own.admin_url)
            later = new_spec(echo.base + "/echo")
            await (await client.jetstream().key_value(KV_KONNECTS)).put(
                konnect_key(later.konnect_id), later.model_dump_json().encode()
            )
            await wait_until(lambda: running.runner.registry.by_id(later.konnect_id) is not None, within=20)
            event, _ = await next_event(client.jetstream(), spec.konnect_id, within=20)
            assert event.status == "SUCCESS"
            await client.drain()
        finally:
            await running.stop()
    finally:
        own.stop()
        shutil.rmtree(base, ignore_errors=True)


async def test_capture_serves_a_draft_token_only_while_capturing(
    shared_runner: RunningRunner, nc: NATS, http: httpx.AsyncClient
) -> None:
    js = nc.jetstream()
    token = secrets.token_urlsafe(32)
    hook = f"{shared_runner.base}/hooks/{token}"
    konnect_id = secrets.randbelow(10**9) + 10**6
    assert (await http.post(hook, json={"a": 1})).status_code == 404  # a draft: unknown until captured

    window = await open_window(js, token, konnect_id)
    assert (await open_window(js, token, konnect_id)).since == window.since  # renewing keeps the start
    assert await last_capture(js, konnect_id, window.since) is None
    reply = await http.post(hook + "?src=form", data={"name": "Ada", "tag": ["x", "y"]})
    assert reply.status_code == 200 and reply.json() == {"status": "captured"}
    captured = await last_capture(js, konnect_id, window.since)
    assert captured is not None and captured.konnect_id == konnect_id
    assert captured.trigger_output == {"name": "Ada", "tag": ["x", "y"], "query": {"src": "form"}}
    # nothing ran: a draft has no runs
    with pytest.raises(Exception):  # noqa: B017 - nats raises NotFoundError
        await js.get_last_msg(STREAM_RUNS, run_subject(konnect_id))
    # a request older than a new window does not count
    assert await last_capture(js, konnect_id, datetime.now(UTC)) is None
    too_big = await http.post(hook, content=b"x" * (2 * 1024 * 1024), headers={"Content-Type": "text/plain"})
    assert too_big.status_code == 413

    await close_window(js, token)
    assert (await http.post(hook, json={})).status_code == 404
    # tokens that are not URL-safe base64 are never looked up
    assert not valid_token("a.b.c" * 10) and not valid_token("short") and valid_token(token)
    assert await capturing(js, "../" * 10) is None


async def test_capture_of_a_published_konnect_also_runs_it(
    shared_runner: RunningRunner, nc: NATS, echo: Any, http: httpx.AsyncClient
) -> None:
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    token = spec.trigger.token
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_token(token) is not None)
    window = await open_window(js, token, spec.konnect_id)
    reply = await http.post(f"{shared_runner.base}/hooks/{token}", json={"order": {"id": 5}})
    assert reply.status_code == 200 and reply.json()["status"] == "accepted"
    captured = await last_capture(js, spec.konnect_id, window.since)
    assert captured is not None and captured.trigger_output == {"order": {"id": 5}}
    event, _ = await next_event(js, spec.konnect_id)
    assert event.run_id == reply.json()["run_id"] and event.status == "SUCCESS"
    await close_window(js, token)
