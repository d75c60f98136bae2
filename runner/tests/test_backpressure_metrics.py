"""Back-pressure and metrics of the runner process against a real nats-server.

Runs whose API call hangs pile up in KZ_RUNS; past ``max_queued_runs`` the webhook answers 429 with
Retry-After instead of queueing more, and /metrics shows accepted, refused, running and queued runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import pytest
import uvicorn

from konnectz_contracts.events import KV_KONNECTS, konnect_key
from konnectz_contracts.nats_auth import RUNNER
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_runner.apps import parse_networks
from konnectz_runner.bus import ensure_streams
from konnectz_runner.config import Settings
from konnectz_runner.ingress import create_app

pytestmark = pytest.mark.integration


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _metric(text: str, name: str, labels: str = "") -> float:
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#") and labels in line:
            head = line.rsplit(" ", 1)[0]
            if head == name or head.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture
def own_nats() -> Iterator[NatsServer]:
    """A NATS of its own: the shared one holds other tests' runs, which count in the queue depth."""
    base = Path(tempfile.mkdtemp(prefix="konnectz-bp-nats-"))
    server = NatsServer(base, free_port())
    server.start()
    yield server
    server.stop()
    shutil.rmtree(base, ignore_errors=True)


async def test_backpressure_answers_429_and_metrics_move(own_nats: NatsServer) -> None:
    nats_server = own_nats
    # An HTTP server that accepts and never answers: every run's API call hangs.
    hung: list[asyncio.StreamWriter] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hung.append(writer)

    sink = await asyncio.start_server(hang, "127.0.0.1", 0)
    sink_port = sink.sockets[0].getsockname()[1]
    konnect_id = 900_001
    spec = FlowSpec(
        konnect_id=konnect_id,
        owner_id=1,
        name="Slow",
        trigger_id="node-1",
        trigger=WebhookTrigger(token=secrets.token_urlsafe(24)),
        steps=[ApiCallStep(id="node-2", name="Call", url=f"http://127.0.0.1:{sink_port}/x")],
    )
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    await ensure_streams(js)
    await (await js.key_value(KV_KONNECTS)).put(konnect_key(konnect_id), spec.model_dump_json().encode())
    settings = Settings(
        **nats_server.settings(RUNNER),
        allow_private_networks=parse_networks("127.0.0.0/8"),
        http_timeout_seconds=20,
        enforce_quota=False,
        worker_concurrency=2,
        max_queued_runs=4,
        retry_after_seconds=3,
    )
    port = free_port()
    server = _QuietServer(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    base = f"http://127.0.0.1:{port}"
    try:
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
            await asyncio.sleep(0.05)
        hook = f"{base}/hooks/{spec.trigger.token}"
        async with httpx.AsyncClient(timeout=10) as http:
            before = (await http.get(f"{base}/metrics")).text
            codes = []
            for _ in range(30):
                r = await http.post(hook, json={"n": 1})
                codes.append(r.status_code)
                if r.status_code == 429:
                    assert r.headers["Retry-After"] == "3"
                    assert "retry later" in r.json()["message"]
                    break
                await asyncio.sleep(0.1)
            assert codes[-1] == 429, codes
            accepted = codes.count(200)
            assert 4 <= accepted < 30  # refused once the queue passed its bound, not before
            after = (await http.get(f"{base}/metrics")).text
        assert (
            _metric(after, "konnectz_runs_accepted_total", 'source="webhook"')
            - _metric(before, "konnectz_runs_accepted_total", 'source="webhook"')
            == accepted
        )
        assert _metric(after, "konnectz_runs_refused_total", 'reason="backpressure"') >= 1
        assert _metric(after, "konnectz_run_queue_depth") >= 4
        assert _metric(after, "konnectz_runs_running") == 2  # the two hanging runs, on the worker's loop
    finally:
        for writer in hung:
            writer.close()
        sink.close()
        server.should_exit = True
        await asyncio.wait_for(task, 40)
        await nc.close()
