"""The deadline through real processes: ``python -m konnectz_runner serve`` (spec-file mode) on the
runner tests' NATS, a local slow server. A slow step is interrupted at the deadline; a run in a
delay longer than the deadline ends when the deadline passes (ERROR on the delay step); while
running or waiting the run has its KZ_ACTIVE entry, and none once its TaskEvent is stored."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from konnectz_contracts.events import STREAM_EVENTS, TaskEvent, event_subject
from konnectz_contracts.run_control import RunControl
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_contracts.steps.delay import DelayStep
from konnectz_devstack._ports import free_port
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import start_runner_process
from konnectz_runner.bus import ensure_streams, list_active
from konnectz_runner.bus import run_state_buckets as buckets
from konnectz_runner.engine.flow import deadline_error

pytestmark = pytest.mark.integration

SLOW_SECONDS = 8.0


class _Handler(JsonHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Handler.hits.append(self.path)
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        self._reply(200, {"ok": True})


async def event_of(js: Any, konnect_id: int, wait: float) -> TaskEvent:
    sub = await js.pull_subscribe(
        event_subject(konnect_id), stream=STREAM_EVENTS, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    )
    try:
        (msg,) = await sub.fetch(1, timeout=wait)
        return TaskEvent.model_validate_json(msg.data)
    finally:
        await sub.unsubscribe()


@pytest.fixture
def server() -> Any:
    _Handler.hits = []
    local = LocalServer(_Handler)
    yield local
    local.stop()


@pytest.mark.parametrize("where", ["slow step", "delay"])
async def test_the_deadline_stops_a_run(nats_server: Any, server: LocalServer, where: str) -> None:
    base = Path(tempfile.mkdtemp(prefix="konnectz-deadline-"))
    runner: asyncio.subprocess.Process | None = None
    nc = await nats.connect(nats_server.admin_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js)
        middle: Any = (
            ApiCallStep(id="node-3", name="Slow", method="POST", url=server.url + "/slow")
            if where == "slow step"
            else DelayStep(id="node-3", name="Wait", mode="for", amount=1, unit="hours")
        )
        spec = FlowSpec(
            konnect_id=secrets.randbelow(10**9) + 1, owner_id=3, name="Bounded", trigger_id="node-1",
            trigger=WebhookTrigger(token=secrets.token_urlsafe(32)),
            steps=[ApiCallStep(id="node-2", name="First", method="POST", url=server.url + "/first"), middle,
                   ApiCallStep(id="node-4", name="Last", method="POST", url=server.url + "/last")],
            run_control=RunControl(deadline_seconds=3),
        )  # fmt: skip
        spec_file = base / "flow.json"
        spec_file.write_text(spec.model_dump_json())
        port = free_port()
        runner = await start_runner_process(nats_server, spec_file, port, base / "runner.log")
        clock = time.monotonic()
        async with httpx.AsyncClient(timeout=5) as http:
            reply = await http.post(f"http://127.0.0.1:{port}/hooks/{spec.trigger.token}", json={"x": 1})
        assert reply.status_code == 200
        run_id = reply.json()["run_id"]

        active, _cancels = await buckets(js)
        expected = "RUNNING" if where == "slow step" else "WAITING"
        for _ in range(50):
            entries = await list_active(active, spec.owner_id, spec.konnect_id)
            if entries and (entries[0].status, entries[0].step_id) == (expected, "node-3"):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"no {expected} entry: {entries}")
        assert entries[0].run_id == run_id

        event = await event_of(js, spec.konnect_id, wait=20)
        elapsed = time.monotonic() - clock
        assert event.run_id == run_id
        assert event.status == "ERROR"
        assert [(s.step_id, s.status) for s in event.steps] == [("node-2", "SUCCESS"), ("node-3", "ERROR")]
        assert event.steps[-1].error == deadline_error(3)
        assert 2.5 < elapsed < SLOW_SECONDS, f"stopped after {elapsed:.1f} s, not at the 3 s deadline"
        await asyncio.sleep(0.5)
        assert await list_active(active, spec.owner_id, spec.konnect_id) == []
        assert "/last" not in _Handler.hits
    except BaseException:
        log = base / "runner.log"
        print(log.read_text(errors="replace")[-20000:] if log.exists() else "no runner log")  # the report shows it
        raise
    finally:
        if runner is not None and runner.returncode is None:
            runner.terminate()
            await runner.wait()
        await nc.close()
        shutil.rmtree(base, ignore_errors=True)
