"""The shared runner pool scaled out on one machine: 1, 2 and 3 pool runners on a 3-node NATS cluster.

Real processes: three ``nats-server`` nodes clustered with routes (JetStream replicated across them),
and ``python -m konnectz_runner serve`` with ``KONNECTZ_POOL=true`` as the chart's pool Deployment
runs it, each runner connected to a different node. The konnects are in the ``KZ_KONNECTS`` bucket,
as the operator puts them there. The test shows:

- the runs of a webhook konnect are shared by the runners (each executes some; /metrics counts);
- no run is executed twice and none is lost: one API call and one task event per run id;
- a runner killed (SIGKILL) with runs in flight: its runs are taken over by the others;
- a schedule fires once per slot whatever the number of runners: one runner holds the
  ``pool-duties`` lock (KZ_LEADERS); killed, another takes it over within the lock's TTL.

The figures are printed (``-s``) and quoted in docs/kubernetes.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import nats
import nats.js.errors
import pytest

from konnectz_contracts.events import KV_KONNECTS, KV_LEADERS, STREAM_EVENTS, konnect_key
from konnectz_contracts.nats_auth import ADMIN, COMPONENTS, RUNNER, authorization_conf, password_env
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, ScheduleTrigger, WebhookTrigger
from konnectz_contracts.triggers.schedule import AtRegularIntervals
from konnectz_devstack._nats import nats_server_binary
from konnectz_devstack._ports import free_port, wait_for_port
from konnectz_runner.bus import ensure_streams

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pool-simulation")]

WEBHOOK_KONNECT = 910_001
SCHEDULE_KONNECT = 910_002
CALL_SECONDS = 0.2  # each run's API call takes this long, so runs overlap and spread


# --- a 3-node NATS cluster ------------------------------------------------------------------------------
@dataclass
class NatsCluster:
    base: Path
    client_ports: list[int]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    # the users of konnectz_contracts.nats_auth, as the chart and the devstack run NATS
    passwords: dict[str, str] = field(default_factory=lambda: {u: secrets.token_hex(16) for u in (*COMPONENTS, ADMIN)})

    @property
    def urls(self) -> list[str]:
        """The nodes' URLs without credentials (for the runners, which get the runner user)."""
        return [f"nats://127.0.0.1:{p}" for p in self.client_ports]

    @property
    def admin_urls(self) -> list[str]:
        """The nodes' URLs with the test admin user's credentials."""
        return [f"nats://{ADMIN}:{self.passwords[ADMIN]}@127.0.0.1:{p}" for p in self.client_ports]


@pytest.fixture
def nats_cluster(tmp_path: Path) -> Iterator[NatsCluster]:
    client = [free_port() for _ in range(3)]
    routes = [free_port() for _ in range(3)]
    cluster = NatsCluster(tmp_path / "nats", client)
    cluster.base.mkdir(parents=True)
    conf = cluster.base / "nats.conf"
    conf.write_text(authorization_conf((*COMPONENTS, ADMIN)))
    env = {**os.environ, **{password_env(user): pw for user, pw in cluster.passwords.items()}}
    for i in range(3):
        node = cluster.base / f"n{i}"
        node.mkdir(parents=True)
        others = ",".join(f"nats://127.0.0.1:{routes[j]}" for j in range(3) if j != i)
        cluster.procs.append(
            subprocess.Popen(
                [nats_server_binary(), "-c", str(conf), "-js", "-sd", str(node / "js"), "-a", "127.0.0.1",
                 "-p", str(client[i]),
                 "-n", f"kz-{i}", "--cluster_name", "kz", "--cluster", f"nats://127.0.0.1:{routes[i]}",
                 "--routes", others, "-l", str(node / "nats.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            )
        )  # fmt: skip
    try:
        for port in client:
            wait_for_port(port, timeout=20)
        asyncio.run(_wait_for_jetstream(cluster.admin_urls[0]))
        yield cluster
    finally:
        for proc in cluster.procs:
            proc.terminate()
        for proc in cluster.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    # The runners stayed within the runner user's grants (as the devstack's fixtures check).
    logs = [(cluster.base / f"n{i}" / "nats.log") for i in range(3)]
    refused = [line for log in logs if log.exists() for line in log.read_text().splitlines() if "Violation" in line]
    assert not refused, refused[:10]


async def _wait_for_jetstream(url: str) -> None:
    """Until the cluster has elected its JetStream meta leader (the streams can be made)."""
    nc = await nats.connect(url)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                await nc.jetstream().account_info()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.3)
    finally:
        await nc.close()


# --- a slow third-party API --------------------------------------------------------------------------
class SlowApi:
    """Records every call (path and body) and answers after ``CALL_SECONDS``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with outer.lock:
                    outer.calls.append((self.path, body))
                time.sleep(CALL_SECONDS)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                try:
                    self.wfile.write(b"{}")
                except OSError:  # the runner was killed while it waited
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self, path: str) -> list[dict[str, Any]]:
        with self.lock:
            return [body for p, body in self.calls if p == path]


# --- pool runners --------------------------------------------------------------------------------------
@dataclass
class PoolRunner:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def finished(self) -> int:
        """Runs this runner finished (its konnectz_runs_finished counter, all statuses)."""
        text = httpx.get(f"{self.url}/metrics", timeout=5).text
        return int(sum(float(m) for m in re.findall(r"^konnectz_runs_finished_total\{[^}]*\} (\S+)$", text, re.M)))


def start_runner(name: str, nats_url: str, password: str, tmp_path: Path) -> PoolRunner:
    port = free_port()
    log = tmp_path / f"{name}.log"
    env = {
        **os.environ,
        "KONNECTZ_POOL": "true",
        "KONNECTZ_NATS_URL": nats_url,
        "KONNECTZ_NATS_USER": RUNNER,
        "KONNECTZ_NATS_PASSWORD": password,
        "KONNECTZ_ENFORCE_QUOTA": "false",  # no api in this simulation
        "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8",
        "KONNECTZ_WORKER_CONCURRENCY": "4",  # a runner takes a few runs at a time, so the others get some
        "KONNECTZ_MAX_QUEUE_SECONDS": "0",  # a burst is queued (the fixed bound only), not refused
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "konnectz_runner", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    runner = PoolRunner(name, port, proc, log)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{runner.url}/healthz", timeout=2).status_code == 200:
                return runner
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{name} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def wait_for(predicate: Any, *, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


# --- NATS helpers --------------------------------------------------------------------------------------
async def _setup(url: str, specs: list[FlowSpec]) -> None:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await ensure_streams(js)
        kv = await js.key_value(KV_KONNECTS)
        for spec in specs:
            await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    finally:
        await nc.close()


async def _events(url: str, konnect_id: int) -> list[dict[str, Any]]:
    """Every task event of the konnect stored in KZ_EVENTS."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        info = await js.stream_info(STREAM_EVENTS)
        found: list[dict[str, Any]] = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            try:
                msg = await js.get_msg(STREAM_EVENTS, seq)
            except nats.js.errors.NotFoundError:  # deleted
                continue
            if msg.subject == f"kz.events.{konnect_id}" and msg.data:
                found.append(json.loads(msg.data))
        return found
    finally:
        await nc.close()


async def _leader(url: str) -> str | None:
    nc = await nats.connect(url)
    try:
        kv = await nc.jetstream().key_value(KV_LEADERS)
        try:
            entry = await kv.get("pool-duties")
        except Exception:
            return None
        return entry.value.decode() if entry.value else None
    finally:
        await nc.close()


def _send(runners: list[PoolRunner], token: str, numbers: range) -> dict[int, str]:
    """Webhook calls spread over the runners' ingress (round robin): n -> run_id."""
    run_ids = {}
    with httpx.Client(timeout=10) as http:
        for n in numbers:
            runner = runners[n % len(runners)]
            reply = http.post(f"{runner.url}/hooks/{token}", json={"n": n})
            assert reply.status_code == 200, reply.text
            run_ids[n] = reply.json()["run_id"]
    return run_ids


def _fired_lines(runners: list[PoolRunner]) -> Counter[str]:
    """Per fire time, how many runners logged that they fired the schedule konnect for it."""
    fired: Counter[str] = Counter()
    for runner in runners:
        for fire in set(
            re.findall(rf"Schedule of konnect {SCHEDULE_KONNECT} fired for (\S+):", runner.log.read_text())
        ):
            fired[fire] += 1
    return fired


def test_pool_runners_share_runs_take_over_a_killed_runner_and_fire_a_schedule_once(
    nats_cluster: NatsCluster, tmp_path: Path
) -> None:
    api = SlowApi()
    token = secrets.token_urlsafe(24)
    webhook = FlowSpec(
        konnect_id=WEBHOOK_KONNECT, owner_id=1, name="Orders", trigger_id="node-1",
        trigger=WebhookTrigger(token=token),
        steps=[ApiCallStep(id="node-2", name="Call", url=f"{api.url}/orders",
                           body=[KeyValue(key="n", value="{{node-1.n}}")])],
    )  # fmt: skip
    this_minute = datetime.now(UTC).replace(second=0, microsecond=0, tzinfo=None)
    schedule = FlowSpec(
        konnect_id=SCHEDULE_KONNECT, owner_id=1, name="Every minute", trigger_id="node-1",
        trigger=ScheduleTrigger(schedule=AtRegularIntervals(every=1, time_span="Minutes", start=this_minute)),
        steps=[ApiCallStep(id="node-2", name="Tick", url=f"{api.url}/tick",
                           body=[KeyValue(key="slot", value="{{node-1.scheduled_at}}")])],
    )  # fmt: skip
    asyncio.run(_setup(nats_cluster.admin_urls[0], [webhook, schedule]))
    runners: list[PoolRunner] = []
    figures: dict[str, Any] = {}
    sent: dict[int, str] = {}
    try:
        # 1, 2, then 3 runners, each on its own NATS node; 30 runs per runner each time.
        batch = 0
        for count in (1, 2, 3):
            runners.append(
                start_runner(f"runner-{count}", nats_cluster.urls[count - 1], nats_cluster.passwords[RUNNER], tmp_path)
            )
            before = [r.finished() for r in runners]
            numbers = range(batch, batch + 30 * count)
            batch = numbers.stop
            started = time.monotonic()
            sent.update(_send(runners, token, numbers))
            total, expected = batch, sum(before) + len(numbers)
            wait_for(lambda t=total: len(api.bodies("/orders")) >= t, timeout=120, what=f"{total} calls")
            # The counters move after each run's event is stored and acked.
            wait_for(lambda e=expected: sum(r.finished() for r in runners) >= e, timeout=60, what="finished")
            shares = [r.finished() - b for r, b in zip(runners, before, strict=True)]
            seconds = time.monotonic() - started
            figures[f"{count} runner(s)"] = {"runs": len(numbers), "per runner": shares, "seconds": round(seconds, 1),
                                             "runs/s": round(len(numbers) / seconds, 1)}  # fmt: skip
            assert all(share > 0 for share in shares), shares  # every runner took part
        three_up = datetime.now(UTC)
        # One holder of the pool's duties; the schedule's catch-up slot fired by it alone.
        holder = wait_for(lambda: asyncio.run(_leader(nats_cluster.admin_urls[0])), timeout=30, what="a lock holder")
        holders = [r for r in runners if f"/{r.proc.pid}/" in holder]
        assert len(holders) == 1, holder
        wait_for(lambda: api.bodies("/tick"), timeout=30, what="the schedule's first run")

        # Kill the lock holder with runs in flight: the others take over its runs and the lock.
        victim = holders[0]
        numbers = range(batch, batch + 60)
        batch = numbers.stop
        survivors = [r for r in runners if r is not victim]
        sent.update(_send(runners, token, numbers))
        wait_for(lambda: len(api.bodies("/orders")) >= numbers.start + 10, timeout=60, what="runs in flight")
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        killed_at = time.monotonic()
        new_holder = wait_for(
            lambda: (h if (h := asyncio.run(_leader(nats_cluster.admin_urls[1]))) and h != holder else None),
            timeout=30, what="a new lock holder",
        )  # fmt: skip
        figures["lock taken over after (s)"] = round(time.monotonic() - killed_at, 1)
        assert any(f"/{r.proc.pid}/" in new_holder for r in survivors)

        def all_events() -> list[dict[str, Any]] | None:
            found = asyncio.run(_events(nats_cluster.admin_urls[1], WEBHOOK_KONNECT))
            return found if len({x["run_id"] for x in found}) >= len(sent) else None

        events = wait_for(all_events, timeout=120, what="a task event for every run")
        figures["all runs finished after the kill (s)"] = round(time.monotonic() - killed_at, 1)

        # Every run: exactly one task event, at most one API call (a call the killed runner had in
        # flight is not repeated: it ends as an ERROR, in doubt); none lost.
        per_run = Counter(e["run_id"] for e in events)
        assert set(per_run) == set(sent.values())
        assert max(per_run.values()) == 1
        calls = Counter(int(b["n"]) for b in api.bodies("/orders"))
        assert max(calls.values()) == 1, [n for n, c in calls.items() if c > 1]
        statuses = Counter(e["status"] for e in events)
        figures["task events"] = dict(statuses)
        figures["runs taken over from the killed runner"] = sum(1 for e in events if e.get("attempts", 1) > 1)
        assert figures["runs taken over from the killed runner"] >= 1

        # The schedule: each slot ran once and was fired by one runner only, also a slot that came due
        # while three runners (then two) were running.
        wait_for(
            lambda: any(datetime.fromisoformat(b["slot"]) >= three_up for b in api.bodies("/tick")),
            timeout=90, what="a slot fired with several runners up",
        )  # fmt: skip
        slots = Counter(b["slot"] for b in api.bodies("/tick"))
        assert slots and max(slots.values()) == 1, slots
        fired = _fired_lines(runners)
        assert fired and max(fired.values()) == 1, fired
        figures["schedule slots fired"] = len(slots)
    finally:
        for runner in runners:
            if runner.proc.poll() is None:
                runner.proc.send_signal(signal.SIGTERM)
        for runner in runners:
            try:
                runner.proc.wait(20)
            except subprocess.TimeoutExpired:
                runner.proc.kill()
        api.server.shutdown()
    print("\npool simulation:", json.dumps(figures))
