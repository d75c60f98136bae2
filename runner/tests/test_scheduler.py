"""Schedules against a real nats-server: one run per fire, the CronJob ``tick``, the local loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import nats
import pytest
import uvicorn
from nats.aio.client import Client as NATS
from nats.js.api import ConsumerConfig, DeliverPolicy

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
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, ScheduleTrigger
from konnectz_contracts.triggers.schedule import fire_run_id
from konnectz_devstack._ports import free_port
from konnectz_runner.apps import parse_networks
from konnectz_runner.bus import KonnectRegistry, ensure_streams
from konnectz_runner.clock import LocalScheduler, fire_due
from konnectz_runner.clock.scheduler import last_fire
from konnectz_runner.config import Settings
from konnectz_runner.ingress import create_app

pytestmark = pytest.mark.integration


def z(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def schedule_spec(schedule: dict[str, Any], url: str = "https://example.com/", timezone: str = "UTC") -> FlowSpec:
    return FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6, owner_id=2, name="Every so often", trigger_id="node-1",
        trigger=ScheduleTrigger.model_validate({"schedule": schedule}), timezone=timezone,
        steps=[ApiCallStep(id="node-2", name="Ping", method="POST", url=url,
                           body=[KeyValue(key="at", value="{{node-1.scheduled_at}}")])],
    )  # fmt: skip


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # leave pytest's signal handlers alone
        yield


EVERY_7 = {"schedule_type": "AtRegularIntervals", "every": 7, "time_span": "Minutes", "start": "2026-06-01T00:00"}


@pytest.fixture(scope="module")
async def nc(nats_server: Any) -> AsyncIterator[NATS]:
    client = await nats.connect(nats_server.admin_url)
    await ensure_streams(client.jetstream())
    yield client
    await client.drain()


async def stored_events(nc: NATS, konnect_id: int) -> list[TaskEvent]:
    sub = await nc.jetstream().pull_subscribe(
        event_subject(konnect_id), stream=STREAM_EVENTS, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    )
    try:
        msgs = await sub.fetch(20, timeout=0.5)
    except (nats.errors.TimeoutError, TimeoutError):  # fetch raises either
        msgs = []
    await sub.unsubscribe()
    return [TaskEvent.model_validate_json(m.data) for m in msgs]


async def stored_runs(nc: NATS, konnect_id: int) -> list[RunRequest]:
    sub = await nc.jetstream().pull_subscribe(
        run_subject(konnect_id), stream=STREAM_RUNS, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    )
    try:
        msgs = await sub.fetch(20, timeout=0.5)
    except (nats.errors.TimeoutError, TimeoutError):  # fetch raises either
        msgs = []
    await sub.unsubscribe()
    return [RunRequest.model_validate_json(m.data) for m in msgs]


async def test_fire_due_and_last_fire(nc: NATS) -> None:
    js = nc.jetstream()
    spec = schedule_spec(EVERY_7)
    first = await fire_due(js, spec, z("2026-06-01T00:07:20"))
    assert first is not None and first.scheduled_for == z("2026-06-01T00:07")
    assert first.run_id == fire_run_id(spec.konnect_id, z("2026-06-01T00:07")) and first.source == "schedule"
    assert first.trigger_output["scheduled_at"] == "2026-06-01T00:07:00Z"
    assert await last_fire(js, spec.konnect_id) == z("2026-06-01T00:07")
    assert await fire_due(js, spec, z("2026-06-01T00:07:40")) is None  # the same fire again
    assert await fire_due(js, spec, z("2026-06-01T00:12")) is None  # a tick that is not a fire
    second = await fire_due(js, spec, z("2026-06-01T00:14:05"))
    assert second is not None and second.scheduled_for == z("2026-06-01T00:14")
    assert [r.run_id for r in await stored_runs(nc, spec.konnect_id)] == [first.run_id, second.run_id]


async def test_local_scheduler_ticks_when_the_next_fire_is_due(nc: NATS) -> None:
    spec = schedule_spec({"schedule_type": "Everyday", "schedule_time": "09:00"}, timezone="Europe/Berlin")
    registry = KonnectRegistry()
    registry.put(spec)
    now = [z("2026-03-28T12:00")]
    scheduler = LocalScheduler(nc.jetstream(), registry, clock=lambda: now[0])
    assert await scheduler.tick() == []  # 09:00 CET was 4 hours ago: beyond the grace
    now[0] = z("2026-03-29T06:59:59")
    assert await scheduler.tick() == []
    now[0] = z("2026-03-29T07:00:01")  # 09:00 CEST, the day the clocks went forward
    [run] = await scheduler.tick()
    assert run.scheduled_for == z("2026-03-29T07:00")
    assert await scheduler.tick() == []
    registry.remove(spec.konnect_id)
    assert await scheduler.tick() == [] and scheduler._next == {}


async def test_tick_command_for_a_cronjob_starts_and_runs_the_due_fire_once(
    nc: NATS, echo: Any, nats_server: Any
) -> None:
    spec = schedule_spec({"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Minutes",
                          "start": "2026-01-01T00:00"}, url=echo.base + "/echo")  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="konnectz-spec-"))
    try:
        spec_file = folder / "flow.json"
        spec_file.write_text(spec.model_dump_json())

        async def tick(*extra: str) -> tuple[int | None, str, str]:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "konnectz_runner", "tick", "--spec-file", str(spec_file), *extra,
                env={**os.environ, **nats_server.env(RUNNER), "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8"},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, out.decode().strip(), err.decode()

        code, run_id, err = await tick()
        assert code == 0 and run_id, err
        # The tick executed its run before exiting: the request was made, the event stored, and the
        # run's message deleted from KZ_RUNS (its request now lives in the task event).
        [request] = echo.requests_to("/echo")
        [event] = await stored_events(nc, spec.konnect_id)
        assert event.run_id == run_id and event.status == "SUCCESS"
        assert request.json() == {"at": event.trigger_output["scheduled_at"]}
        scheduled_for = datetime.fromisoformat(event.trigger_output["scheduled_at"])
        assert datetime.now(UTC) - scheduled_for < timedelta(minutes=2)
        assert await stored_runs(nc, spec.konnect_id) == []

        again = await tick("--no-run")
        if again[1]:  # the minute turned between the two ticks: that is the next fire (stored, not run)
            assert [r.run_id for r in await stored_runs(nc, spec.konnect_id)] == [again[1]]
        else:
            assert again[0] == 0 and await stored_runs(nc, spec.konnect_id) == []
        assert len(echo.requests_to("/echo")) == 1  # --no-run executes nothing

        webhook = FlowSpec.model_validate(
            {**spec.model_dump(mode="json"), "trigger": {"kind": "webhook", "token": "w" * 32}}
        )
        spec_file.write_text(webhook.model_dump_json())
        code, _, err = await tick()
        assert code == 1 and "only schedules tick" in err
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def test_local_runner_starts_a_due_schedule_end_to_end(nats_server: Any, nc: NATS, echo: Any) -> None:
    spec = schedule_spec({"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Minutes",
                          "start": "2026-01-01T00:00"}, url=echo.base + "/echo")  # fmt: skip
    js = nc.jetstream()
    await (await js.key_value(KV_KONNECTS)).put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    settings = Settings(  # no api here: quotas are tested in test_quota.py
        **nats_server.settings(RUNNER), allow_private_networks=parse_networks("127.0.0.0/8"), enforce_quota=False
    )
    app = create_app(settings)
    server = _QuietServer(uvicorn.Config(app, host="127.0.0.1", port=free_port(), lifespan="on", log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if echo.requests_to("/echo"):
                break
            await asyncio.sleep(0.05)
        [request] = echo.requests_to("/echo")[:1]
        assert request.json()["at"].endswith(":00Z")
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        await (await js.key_value(KV_KONNECTS)).delete(konnect_key(spec.konnect_id))


async def test_a_schedule_published_while_running_first_fires_at_the_next_slot(nc: NATS) -> None:
    """Published at 10:23:51 to run every 5 minutes from 10:23: the first run is 10:28 (what the
    trigger's test answered as "Next run"), not at once for the 10:23 slot."""
    running = schedule_spec(EVERY_7)
    registry = KonnectRegistry()
    registry.put(running)
    now = [z("2026-06-01T10:23:51")]
    scheduler = LocalScheduler(nc.jetstream(), registry, clock=lambda: now[0])
    await scheduler.tick()  # the runner's first pass: specs present at start catch up within the grace
    published = schedule_spec(
        {"schedule_type": "AtRegularIntervals", "every": 5, "time_span": "Minutes", "start": "2026-06-01T10:23"}
    )
    registry.put(published)
    now[0] = z("2026-06-01T10:23:52")
    assert [r for r in await scheduler.tick() if r.konnect_id == published.konnect_id] == []
    now[0] = z("2026-06-01T10:27:59")
    assert [r for r in await scheduler.tick() if r.konnect_id == published.konnect_id] == []
    now[0] = z("2026-06-01T10:28:00")
    [run] = [r for r in await scheduler.tick() if r.konnect_id == published.konnect_id]
    assert run.scheduled_for == z("2026-06-01T10:28")
    assert await stored_runs(nc, published.konnect_id) == [run]


async def test_the_runner_starting_still_catches_up_a_fire_within_the_grace(nc: NATS) -> None:
    spec = schedule_spec(
        {"schedule_type": "AtRegularIntervals", "every": 5, "time_span": "Minutes", "start": "2026-06-01T10:23"}
    )
    registry = KonnectRegistry()
    registry.put(spec)
    scheduler = LocalScheduler(nc.jetstream(), registry, clock=lambda: z("2026-06-01T10:24:30"))
    [run] = await scheduler.tick()
    assert run.scheduled_for == z("2026-06-01T10:23")
