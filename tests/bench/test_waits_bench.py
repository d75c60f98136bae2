"""`make bench` (waits): N runs waiting for a call hold no worker slot; memory with them; call-to-resume time.

A runner in spec-file mode with its own nats-server hosts Webhook -> Wait for a call (timeout 1 day) ->
API call to a local sink. The bench starts N runs (KONNECTZ_BENCH_WAITS, default 10,000), waits until
every one is stored in KZ_WAITS, then reports:

- the runner's runs executing (its ``konnectz_runs_running`` gauge: 0, no worker slot is held) and
  the RSS of the runner and of nats-server before and with the N waiting runs; KZ_WAITS' bytes;
- the time from a call to the run's resume, per call from sending the call to the sink receiving the
  step after the wait (so it includes the ingress, the compare-and-set, the publish, the worker's
  fetch and one HTTP step): first KONNECTZ_BENCH_WAIT_ONE_BY_ONE links (default 200) called one at a
  time (the mechanism's own latency, no queueing), then KONNECTZ_BENCH_WAIT_CALLS more (default 1,000)
  at a steady KONNECTZ_BENCH_WAIT_RATE (default 50/s): p50, p95, p99, and the resumes per second.

Writes JSON to bench-results/waits-<time>.json. Skipped unless KONNECTZ_BENCH=1.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import nats
import pytest

from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_contracts.steps.wait import Config as WaitConfig
from konnectz_contracts.waits import KV_WAITS, resume_url
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._platform import REPO_ROOT
from konnectz_devstack._ports import free_port
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import start_runner_process
from konnectz_runner.bus import ensure_streams

pytestmark = pytest.mark.skipif(os.environ.get("KONNECTZ_BENCH") != "1", reason="run with `make bench`")

WAITING = int(os.environ.get("KONNECTZ_BENCH_WAITS", "10000"))
CALLS = int(os.environ.get("KONNECTZ_BENCH_WAIT_CALLS", "1000"))
ONE_BY_ONE = int(os.environ.get("KONNECTZ_BENCH_WAIT_ONE_BY_ONE", "200"))
RATE = float(os.environ.get("KONNECTZ_BENCH_WAIT_RATE", "50"))
KEY = "bench-credentials-key-" + "0" * 24


class Sink(JsonHandler):
    arrived: dict[int, float] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with Sink.lock:
            Sink.arrived.setdefault(int(body["n"]), time.monotonic())
        self._reply(200, {"ok": True})


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def _start_runs(hook: str, count: int) -> dict[int, str]:
    """Post ``count`` webhooks (32 at a time, retried on 429/503): run id per n."""
    run_ids: dict[int, str] = {}
    queue = list(range(count))

    async def sender(http: httpx.AsyncClient) -> None:
        while queue:
            n = queue.pop()
            while True:
                try:  # the same Idempotency-Key when sent again: one run per n
                    reply = await http.post(hook, json={"n": n}, headers={"Idempotency-Key": f"bench-{n}"})
                except httpx.TransportError:  # a kept-alive connection the server closed meanwhile
                    continue
                if reply.status_code == 200:
                    run_ids[n] = reply.json()["run_id"]
                    break
                await asyncio.sleep(0.2)

    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=32)) as http:
        await asyncio.gather(*(sender(http) for _ in range(32)))
    return run_ids


async def _waits_stored(nats_url: str) -> tuple[int, int]:
    """(entries, bytes) of KZ_WAITS; (-1, -1) when a loaded NATS does not answer in time."""
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream(timeout=30).stream_info(f"KV_{KV_WAITS}")
        return info.state.messages, info.state.bytes
    except (nats.errors.TimeoutError, TimeoutError):
        return -1, -1
    finally:
        await nc.close()


async def _running(port: int) -> float:
    async with httpx.AsyncClient(timeout=5) as http:
        text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    line = next(line for line in text.splitlines() if line.startswith("konnectz_runs_running "))
    return float(line.split()[1])


async def _call_all(urls: dict[int, str], rate: float) -> dict[int, float]:
    sent: dict[int, float] = {}
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=64)) as http:

        async def call(n: int) -> None:
            sent[n] = time.monotonic()
            for attempt in range(3):
                try:
                    reply = await http.post(urls[n], json={"answer": n})
                except httpx.TransportError:  # a kept-alive connection the server closed meanwhile
                    continue
                # 410 after a lost reply: the first attempt resumed the run (a call decides once)
                assert reply.status_code == 200 or (attempt and reply.status_code == 410), reply.text
                return
            raise AssertionError(f"the call of run {n} failed three times")

        tasks = []
        start = time.monotonic()
        for i, n in enumerate(urls):
            await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
            tasks.append(asyncio.create_task(call(n)))
        await asyncio.gather(*tasks)
    return sent


def _percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def _summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(latencies), 1),
        "p95": round(_percentile(latencies, 95), 1),
        "p99": round(_percentile(latencies, 99), 1),
        "max": round(max(latencies), 1),
    }


async def _one_by_one(urls: dict[int, str]) -> list[float]:
    """Each link called after the previous run resumed: ms from the call to the sink."""
    found: list[float] = []
    async with httpx.AsyncClient(timeout=30) as http:
        for n, url in urls.items():
            sent = time.monotonic()
            try:
                assert (await http.post(url, json={"answer": n})).status_code == 200
            except httpx.TransportError:  # sent again: 410 then means the first one resumed it
                assert (await http.post(url, json={"answer": n})).status_code in (200, 410)
            while n not in Sink.arrived:
                assert time.monotonic() - sent < 60, f"run {n} did not resume"
                await asyncio.sleep(0.001)
            found.append((Sink.arrived[n] - sent) * 1000)
    return found


async def test_waits_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    Sink.arrived = {}
    sink = LocalServer(Sink, request_queue_size=128)
    base = Path(tempfile.mkdtemp(prefix="konnectz-waits-bench-"))
    own = NatsServer(base / "nats", free_port())
    own.start()
    runner: asyncio.subprocess.Process | None = None
    port = free_port()
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", KEY)
    monkeypatch.setenv("KONNECTZ_WEBHOOK_BASE_URL", f"http://127.0.0.1:{port}")
    try:
        client = await nats.connect(own.admin_url)
        await ensure_streams(client.jetstream())
        await client.close()
        spec = FlowSpec(
            konnect_id=secrets.randbelow(10**9) + 1, owner_id=1, name="Wait bench", trigger_id="node-1",
            trigger=WebhookTrigger(token=secrets.token_urlsafe(32)),
            steps=[
                WaitConfig(id="node-2", name="Wait", timeout=1, timeout_unit="days"),
                ApiCallStep(id="node-3", name="After", method="POST", url=sink.url + "/after",
                            body=[KeyValue(key="n", value="{{node-1.n}}")]),
            ],
        )  # fmt: skip
        (base / "flow.json").write_text(spec.model_dump_json())
        runner = await start_runner_process(own, base / "flow.json", port, base / "runner.log")
        assert own.proc is not None
        await asyncio.sleep(2.0)
        idle = {"runner": rss_mib(runner.pid), "nats": rss_mib(own.proc.pid)}
        clock = time.monotonic()
        run_ids = await _start_runs(f"http://127.0.0.1:{port}/hooks/{spec.trigger.token}", WAITING)
        for _ in range(1200):
            stored, stored_bytes = await _waits_stored(own.admin_url)
            if stored >= WAITING:
                break
            await asyncio.sleep(0.5)
        else:
            raise AssertionError(f"only {stored} of {WAITING} waits stored")
        suspended_in = time.monotonic() - clock
        await asyncio.sleep(3.0)
        running = await _running(port)
        holding = {"runner": rss_mib(runner.pid), "nats": rss_mib(own.proc.pid)}
        assert running == 0, f"{running} runs hold a worker slot"
        assert Sink.arrived == {}

        ordered = list(run_ids)
        first = {n: resume_url(spec.konnect_id, run_ids[n], "node-2") or "" for n in ordered[:ONE_BY_ONE]}
        alone = await _one_by_one(first)
        chosen = ordered[ONE_BY_ONE : ONE_BY_ONE + CALLS]
        urls = {n: resume_url(spec.konnect_id, run_ids[n], "node-2") or "" for n in chosen}
        clock = time.monotonic()
        sent = await _call_all(urls, RATE)
        for _ in range(600):
            if all(n in Sink.arrived for n in chosen):
                break
            await asyncio.sleep(0.1)
        latencies = [(Sink.arrived[n] - sent[n]) * 1000 for n in chosen if n in Sink.arrived]
        assert len(latencies) == len(chosen), f"{len(chosen) - len(latencies)} calls did not resume their run"
        resumed_per_second = len(chosen) / (max(Sink.arrived[n] for n in chosen) - clock)
        result = {
            "waiting_runs": WAITING,
            "suspend_all_seconds": round(suspended_in, 1),
            "runs_holding_a_worker_slot": running,
            "rss_mib_idle": {k: round(v, 1) for k, v in idle.items()},
            "rss_mib_with_waiting_runs": {k: round(v, 1) for k, v in holding.items()},
            "kz_waits_bytes": stored_bytes,
            "call_to_resume_ms_one_by_one": {"calls": len(alone), **_summary(alone)},
            "call_to_resume_ms_at_rate": {"calls": len(chosen), "rate_per_second": RATE, **_summary(latencies)},
            "resumed_per_second_at_rate": round(resumed_per_second, 1),
            "load_average_1min": os.getloadavg()[0],
        }
        print("\nwaits bench:", json.dumps(result, indent=2))
        out = REPO_ROOT / "bench-results" / f"waits-{time.strftime('%Y%m%d-%H%M%S')}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    finally:
        if runner is not None and runner.returncode is None:
            runner.terminate()
            await runner.wait()
        own.stop()
        sink.stop()
