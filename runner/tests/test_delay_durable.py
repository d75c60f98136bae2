"""A pending delay survives a SIGKILL of the runner and of NATS, and fires exactly once.

Real processes: ``python -m konnectz_runner serve`` (spec-file mode) and a nats-server of its own
(this test restarts it). The flow is webhook -> delay until ``{{node-1.when}}`` -> API call to a
local server; the delay is a few seconds so the test stays short (the minute-long units are unit
tests in steps/test_delay.py; the mechanism does not depend on the length).
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import signal
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from konnectz_contracts.events import STREAM_EVENTS, STREAM_RUNS, SUBJECTS_TIMERS, TaskEvent, event_subject
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_contracts.steps.delay import DelayStep
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_devstack.testing import start_runner_process
from konnectz_runner.bus import ensure_streams

pytestmark = pytest.mark.integration

DELAY_SECONDS = 8


async def timers_pending(nats_url: str) -> int:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().stream_info(STREAM_RUNS, subjects_filter=SUBJECTS_TIMERS)
        return sum((info.state.subjects or {}).values())
    finally:
        await nc.close()


async def events_of(nats_url: str, konnect_id: int) -> list[TaskEvent]:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        sub = await js.pull_subscribe(
            event_subject(konnect_id), stream=STREAM_EVENTS, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        try:
            msgs = await sub.fetch(10, timeout=1.0)
        except (nats.errors.TimeoutError, TimeoutError):  # fetch raises either
            msgs = []
        await sub.unsubscribe()
        return [TaskEvent.model_validate_json(m.data) for m in msgs]
    finally:
        await nc.close()


@pytest.mark.parametrize("delay", ["until a time 8 s ahead", "for 1 minute (unit 514)"])
async def test_pending_delay_survives_sigkill_of_runner_and_nats(echo: Any, delay: str) -> None:
    minute = delay.startswith("for")
    base = Path(tempfile.mkdtemp(prefix="konnectz-delay-"))
    own = NatsServer(base / "nats", free_port())
    own.start()
    runner: asyncio.subprocess.Process | None = None
    try:
        client = await nats.connect(own.admin_url)
        await ensure_streams(client.jetstream())
        await client.close()
        spec = FlowSpec(
            konnect_id=secrets.randbelow(10**9) + 1, owner_id=1, name="Remind later", trigger_id="node-1",
            trigger=WebhookTrigger(token=secrets.token_urlsafe(32)),
            steps=[
                DelayStep(id="node-2", name="Wait", mode="for", amount=1, unit="minutes")
                if minute
                else DelayStep(id="node-2", name="Wait", mode="until", until="{{node-1.when}}"),
                ApiCallStep(id="node-3", name="Remind", method="POST", url=echo.base + "/echo",
                            body=[KeyValue(key="order", value="{{node-1.order}}")]),
            ],
        )  # fmt: skip
        spec_file = base / "flow.json"
        spec_file.write_text(spec.model_dump_json())
        log = base / "runner.log"
        port = free_port()
        runner = await start_runner_process(own, spec_file, port, log)

        posted = datetime.now(UTC)
        due = posted.replace(microsecond=0) + timedelta(seconds=DELAY_SECONDS)
        async with httpx.AsyncClient(timeout=5) as http:
            reply = await http.post(f"http://127.0.0.1:{port}/hooks/{spec.trigger.token}",
                                    json={"order": "A-17", "when": due.isoformat()})  # fmt: skip
        assert reply.status_code == 200
        run_id = reply.json()["run_id"]

        for _ in range(100):  # the run reached the delay: its continuation is a stored timer
            if await timers_pending(own.admin_url) == 1:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("no timer was stored: " + log.read_text())
        if minute:  # one minute after the step ran (it ran just after the webhook was accepted)
            due = posted + timedelta(minutes=1, seconds=1)

        runner.send_signal(signal.SIGKILL)
        await runner.wait()
        assert own.proc is not None
        own.proc.kill()  # NATS dies too, without a chance to flush anything
        own.proc.wait()
        own.proc = None
        own.start()
        assert datetime.now(UTC) < due, "the machine was too slow to restart everything before the due time"
        assert echo.received == []
        assert await timers_pending(own.admin_url) == 1  # the timer is still there after the restart

        # The timer fires while no runner is up: the run waits in the stream for the next one.
        await asyncio.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 1.5)
        assert echo.received == []
        assert await timers_pending(own.admin_url) == 0
        runner = await start_runner_process(own, spec_file, port, log)

        for _ in range(150):
            if echo.requests_to("/echo"):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(3.0)  # room for a duplicate to show up
        assert [r.json() for r in echo.requests_to("/echo")] == [{"order": "A-17"}]
        [event] = await events_of(own.admin_url, spec.konnect_id)
        assert event.run_id == run_id and event.status == "SUCCESS", event.model_dump_json()
        assert [s.step_id for s in event.steps] == ["node-2", "node-3"]
        if minute:
            resume_at = datetime.fromisoformat(event.steps[0].output["resume_at"].replace("Z", "+00:00"))
            assert posted + timedelta(minutes=1) <= resume_at <= posted + timedelta(minutes=1, seconds=2)
            assert event.finished_at >= resume_at
        else:
            assert event.steps[0].output == {"resume_at": due.isoformat().replace("+00:00", "Z"), "waited": True}
            assert event.finished_at >= due
    finally:
        if runner is not None and runner.returncode is None:
            runner.kill()
            await runner.wait()
        own.stop()
        shutil.rmtree(base, ignore_errors=True)


async def test_delay_for_a_running_runner_resumes_on_time(nats_server: Any, echo: Any) -> None:
    base = Path(tempfile.mkdtemp(prefix="konnectz-delay-"))
    runner: asyncio.subprocess.Process | None = None
    try:
        spec = FlowSpec(
            konnect_id=secrets.randbelow(10**9) + 1, owner_id=1, name="Soon", trigger_id="node-1",
            trigger=WebhookTrigger(token=secrets.token_urlsafe(32)),
            steps=[
                ApiCallStep(id="node-2", name="Before", method="POST", url=echo.base + "/echo",
                            body=[KeyValue(key="when", value="before")]),
                DelayStep(id="node-3", name="Wait", mode="until", until="{{node-1.when}}"),
                ApiCallStep(id="node-4", name="After", method="POST", url=echo.base + "/echo",
                            body=[KeyValue(key="when", value="after"),
                                  KeyValue(key="before_status", value="{{node-2.status}}")]),
            ],
        )  # fmt: skip
        spec_file = base / "flow.json"
        spec_file.write_text(spec.model_dump_json())
        port = free_port()
        runner = await start_runner_process(nats_server, spec_file, port, base / "runner.log")
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
        async with httpx.AsyncClient(timeout=5) as http:
            reply = await http.post(
                f"http://127.0.0.1:{port}/hooks/{spec.trigger.token}", json={"when": due.isoformat()}
            )
        assert reply.status_code == 200
        for _ in range(150):
            if len(echo.requests_to("/echo")) == 2:
                break
            await asyncio.sleep(0.1)
        arrived = datetime.now(UTC)
        assert [r.json() for r in echo.requests_to("/echo")] == [{"when": "before"},
                                                                 {"when": "after", "before_status": 200}]  # fmt: skip
        assert due <= arrived < due + timedelta(seconds=8)
        [event] = await events_of(nats_server.admin_url, spec.konnect_id)
        assert [s.step_id for s in event.steps] == ["node-2", "node-3", "node-4"]
        assert event.steps[0].finished_at < due <= event.steps[2].started_at  # not a moment early
    finally:
        if runner is not None and runner.returncode is None:
            runner.kill()
            await runner.wait()
        shutil.rmtree(base, ignore_errors=True)
