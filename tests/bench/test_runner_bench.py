"""`make bench` (the runner part): the whole stack under webhook load, then a runner hosting many konnects.

Starts the real stack with the durable settings (PostgreSQL with fsync on; NATS JetStream with its
default sync interval unless KONNECTZ_BENCH_NATS_SYNC=always), a real HTTP sink (nginx from Debian),
publishes the 3-step flow Webhook -> Filter (amount > 10) -> Formatter (upper-case a name) -> API call
POST to the sink, and drives its webhook with wrk (Debian) at 4 and 32 connections and with vegeta
(built from the Go module proxy) at a fixed 200 requests/s. Per phase it reports:

- acknowledged requests/s and p50/p99 acknowledgement latency (from the load generator);
- executions persisted per second: task logs in PostgreSQL / (last task log - load start);
- drain time: last task log - load end;
- acknowledged-but-missing (a 2xx run_id without a task log) and doubled (one request stored twice,
  or one request's side effect seen twice by the sink);
- peak RSS of the runner and of the api (process trees);

then the idle RSS and publish-to-live time (KV put -> webhook answered) of a runner hosting 1,
1,000 and 100,000 konnects. The ``respond<rate>`` phase (docs/webhook-response.md) drives two flows
at ``rate`` requests/s with vegeta, one after the other: Webhook (at once) -> Formatter, and Webhook
(answered by a Respond step) -> Respond, and reports the p50/p99 the Respond step adds over the
immediate answer. Prints a table and writes JSON to bench-results/runner-<time>.json.

Knobs: KONNECTZ_BENCH_SECONDS (per phase, default 10), KONNECTZ_BENCH_SCALE ("1,1000,100000"),
KONNECTZ_BENCH_NATS_SYNC (unset or "always"), KONNECTZ_BENCH_PG_FSYNC (default 1),
KONNECTZ_BENCH_RUNNER_ENV (extra runner env, "K=V,K=V"), KONNECTZ_BENCH_PHASES
("c4,c32,r200,respond100,scale").
Skipped unless KONNECTZ_BENCH=1.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from konnectz_contracts.nats_auth import RUNNER
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._platform import REPO_ROOT, Platform
from konnectz_devstack._ports import free_port, wait_for_port
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import api_call_settings, sign_up, wait_until

pytestmark = pytest.mark.skipif(os.environ.get("KONNECTZ_BENCH") != "1", reason="run with `make bench`")

SECONDS = float(os.environ.get("KONNECTZ_BENCH_SECONDS", "10"))
SCALE = [int(n) for n in os.environ.get("KONNECTZ_BENCH_SCALE", "1,1000,100000").split(",") if n]
PHASES = os.environ.get("KONNECTZ_BENCH_PHASES", "c4,c32,r200,respond100,scale").split(",")
# Runner processes (KONNECTZ_RUNNER_PROCESSES): one per core of this machine by default.
RUNNER_PROCESSES = int(os.environ.get("KONNECTZ_BENCH_RUNNER_PROCESSES", str(min(os.cpu_count() or 1, 4))))
NATS_SYNC = os.environ.get("KONNECTZ_BENCH_NATS_SYNC") or None
PG_FSYNC = os.environ.get("KONNECTZ_BENCH_PG_FSYNC", "1") == "1"
TOOLS = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz")) / "tools"
VEGETA = "github.com/tsenart/vegeta/v12@v12.12.0"
RESULTS = REPO_ROOT / "bench-results"


# --- tools ---------------------------------------------------------------------------------------
def _apt_install(binary: str, package: str) -> str:
    found = shutil.which(binary) or (f"/usr/sbin/{binary}" if Path(f"/usr/sbin/{binary}").exists() else None)
    if found:
        return found
    if os.geteuid() != 0:
        pytest.skip(f"{binary} missing: apt-get install {package} (needs root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True, env=env, capture_output=True)
    return shutil.which(binary) or f"/usr/sbin/{binary}"


def _vegeta() -> str:
    binary = TOOLS / "go" / "bin" / "vegeta"
    if not binary.exists():
        env = {**os.environ, "GOBIN": str(binary.parent)}
        subprocess.run(["go", "install", VEGETA], check=True, env=env)
    return str(binary)


# --- the sink --------------------------------------------------------------------------------------
class Sink:
    """nginx answering 200 to everything and logging each request's ``seq`` query parameter."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.log = base / "seq.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        nginx = _apt_install("nginx", "nginx-light")
        self.base.mkdir(parents=True, exist_ok=True)
        conf = self.base / "nginx.conf"
        b = self.base
        conf.write_text(
            f"""daemon off; worker_processes 1; pid {b}/nginx.pid; error_log {b}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  client_body_temp_path {b}/body; proxy_temp_path {b}/proxy; fastcgi_temp_path {b}/fcgi;
  uwsgi_temp_path {b}/uwsgi; scgi_temp_path {b}/scgi;
  log_format seq '$arg_seq';
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{self.port};
    access_log {self.log} seq buffer=256k flush=1s;
    location / {{ default_type application/json; return 200 '{{"ok":true}}'; }}
  }}
}}
"""
        )
        self.proc = subprocess.Popen([nginx, "-p", str(b), "-e", str(b / "error.log"), "-c", str(conf)])
        assert wait_for_port(self.port, timeout=10), (b / "error.log").read_text()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def seqs(self) -> Counter[str]:
        text = self.log.read_text() if self.log.exists() else ""
        return Counter(line for line in text.splitlines() if line and line != "-")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


# --- process memory --------------------------------------------------------------------------------
def _tree(pid: int) -> list[int]:
    pids = [pid]
    for p in pids:
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    pids.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return pids


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants."""
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
    return total


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        except OSError:
            continue
    return total


class Sampler:
    """Samples, every 0.1 s, the task-log count of a konnect and the RSS of named processes."""

    def __init__(self, dsn: str, konnect_id: int, pids: dict[str, int]) -> None:
        self.dsn = dsn
        self.konnect_id = konnect_id
        self.pids = pids
        self.points: list[tuple[float, int]] = []
        self.peak: dict[str, int] = dict.fromkeys(pids, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self._stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM task_logs WHERE konnect_id = %s", (self.konnect_id,)
                ).fetchone()
                self.points.append((time.monotonic(), int(row[0]) if row else 0))
                for name, pid in self.pids.items():
                    self.peak[name] = max(self.peak[name], tree_rss(pid))
                time.sleep(0.1)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def count(self) -> int:
        return self.points[-1][1] if self.points else 0

    def last_change(self) -> float:
        """When the count last changed."""
        for (t, n), (_, prev) in zip(reversed(self.points), reversed(self.points[:-1]), strict=False):
            if n != prev:
                return t
        return self.points[0][0] if self.points else time.monotonic()


# --- load generators --------------------------------------------------------------------------------
WRK_SCRIPT = r"""
local threads = {}
local n = 0
function setup(thread)
  n = n + 1
  thread:set("tid", n)
  table.insert(threads, thread)
end
function init(args)
  prefix = args[1]
  out = io.open(args[2] .. "/acked-" .. tid, "w")
  counter = 0
  ok = 0
  bad = 0
  quota = 0
end
function request()
  counter = counter + 1
  local body = '{"amount":42,"name":"ada lovelace","seq":"' .. prefix .. "-" .. tid .. "-" .. counter .. '"}'
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
    local id = body:match('"run_id":"(%x+)"')
    if id then out:write(id, "\n") end
  else
    bad = bad + 1
    if status == 402 then quota = quota + 1 end
  end
end
function done(summary, latency, requests)
  local o, b, q = 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok")
    b = b + t:get("bad")
    q = q + t:get("quota")
  end
  io.write(string.format('KZJSON {"ok":%d,"bad":%d,"quota":%d,"requests":%d,"duration_us":%d,"p50_us":%d,' ..
    '"p99_us":%d,"max_us":%d,"socket_errors":%d}\n', o, b, q, summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


@dataclass
class Load:
    ok: int
    refused: int
    seconds: float
    p50_ms: float
    p99_ms: float
    acked: set[str] = field(default_factory=set)
    #: Of ``refused``: the 402 answers of a webhook whose owner is over the task quota.
    quota: int = 0


def run_wrk(url: str, connections: int, seconds: float, work: Path, prefix: str) -> Load:
    wrk = _apt_install("wrk", "wrk")
    work.mkdir(parents=True, exist_ok=True)
    script = work / "bench.lua"
    script.write_text(WRK_SCRIPT)
    threads = min(2, connections)
    out = subprocess.run(
        [wrk, "-t", str(threads), "-c", str(connections), "-d", f"{int(seconds)}s", "--timeout", "10s",
         "-s", str(script), url, "--", prefix, str(work)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    line = next(x for x in out.stdout.splitlines() if x.startswith("KZJSON "))
    data = json.loads(line[len("KZJSON ") :])
    acked: set[str] = set()
    for path in work.glob("acked-*"):
        acked.update(path.read_text().split())
    return Load(
        ok=data["ok"],
        refused=data["bad"] + data["socket_errors"],
        quota=data["quota"],
        seconds=data["duration_us"] / 1e6,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        acked=acked,
    )


def run_vegeta(url: str, rate: int, seconds: float, work: Path, prefix: str) -> Load:
    vegeta = _vegeta()
    work.mkdir(parents=True, exist_ok=True)
    targets = work / "targets.jsonl"
    count = int(rate * seconds) + rate
    with targets.open("w") as fh:
        for i in range(count):
            body = json.dumps({"amount": 42, "name": "ada lovelace", "seq": f"{prefix}-{i}"}).encode()
            fh.write(
                json.dumps(
                    {
                        "method": "POST",
                        "url": url,
                        "body": base64.b64encode(body).decode(),
                        "header": {"Content-Type": ["application/json"]},
                    }
                )
                + "\n"
            )
    results = work / "results.bin"
    subprocess.run(
        [vegeta, "attack", "-format=json", f"-targets={targets}", f"-rate={rate}/s", f"-duration={int(seconds)}s",
         "-timeout=10s", f"-output={results}"],
        check=True, capture_output=True,
    )  # fmt: skip
    encoded = subprocess.run([vegeta, "encode", "-to=json", str(results)], check=True, capture_output=True).stdout
    latencies: list[float] = []
    acked: set[str] = set()
    refused = quota = 0
    for raw in encoded.splitlines():
        hit = json.loads(raw)
        latencies.append(hit["latency"] / 1e6)
        if 200 <= hit["code"] < 300:
            acked.add(json.loads(base64.b64decode(hit["body"]))["run_id"])
        else:
            refused += 1
            quota += hit["code"] == 402
    latencies.sort()
    return Load(
        ok=len(acked),
        refused=refused,
        quota=quota,
        seconds=seconds,
        p50_ms=latencies[len(latencies) // 2],
        p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        acked=acked,
    )


# --- the flow ---------------------------------------------------------------------------------------
def _node(node_id: str, type_: str, provider: str, index: int, name: str, **data: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": type_,
        "position": {"x": 400 * index, "y": 0},
        "data": {
            "node_id": node_id,
            "app_detail": {"id": index, "name": name, "provider": provider, "app_index": index},
            **data,
        },
    }


def bench_flow(sink_url: str) -> dict[str, Any]:
    """Webhook -> Filter (amount > 10) -> Formatter (upper-case the name) -> API call POST to the sink."""
    apps = [
        _node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        _node(
            "node-2",
            "Filter",
            "conditioner",
            2,
            "Filter",
            filterValues=[{"field": "{{node-1.amount}}", "operator": "Greater Than", "value": "10"}],
        ),
        _node(
            "node-3",
            "Formatter",
            "formatter",
            3,
            "Formatter",
            configResponses=[
                {"config_key": "operation", "value": "uppercase", "config_key_required": True},
                {"config_key": "input", "value": "{{node-1.name}}", "config_key_required": True},
            ],
        ),
        _node(
            "node-4",
            "Api",
            "api",
            4,
            "API Call",
            selectedValue=api_call_settings(
                sink_url + "/orders",
                params=[{"key": "seq", "value": "{{node-1.seq}}"}],
                body=[
                    {"key": "customer", "value": "{{node-3.output}}"},
                    {"key": "amount", "value": "{{node-1.amount}}"},
                ],
            ),
        ),
    ]
    order = ["node-1", "node-2", "node-3", "node-4"]
    links = [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(itertools.pairwise(order))]
    return {"apps": apps, "links": links, "dataForSelect": {}, "flowName": "Bench flow"}


def publish(platform: Platform, sink: Sink) -> tuple[int, str]:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, f"bench-{uuid.uuid4().hex[:8]}@example.com", "correct horse battery")
    canvas = bench_flow(sink.url)

    def test(node_id: str, konnect_id: int | None) -> dict[str, Any]:
        r = api.post(
            "/api/v1/konnects/test_and_review",
            json={"node_id": node_id, "konnect_id": konnect_id, "canvas_json": canvas},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        return dict(r.json())

    with psycopg.connect(platform.postgres.dsn, autocommit=True) as conn:  # the bench runs far past any plan
        conn.execute("UPDATE users SET task_limit = 2000000000")
    trigger = test("node-1", None)
    konnect_id, hook = int(trigger["konnect_id"]), str(trigger["webhook_url"])
    capture = f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}"
    api.post(capture, headers=headers)
    assert httpx.post(hook, json={"amount": 42, "name": "ada", "seq": "capture"}).json() == {"status": "captured"}
    assert api.post(capture, headers=headers).json()["test_status"] == "Success"
    r = api.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    wait_until(
        lambda: httpx.post(hook, json={"amount": 1, "name": "warm", "seq": "warm"}).json().get("status") == "accepted"
    )
    return konnect_id, hook


# --- phases -----------------------------------------------------------------------------------------
# Runs the quota refused after their webhook was accepted: stored as a task log whose one step is
# the "quota" step (konnectz_runner.work.quota.refused_event).
QUOTA_REFUSED_SQL = (
    "SELECT count(*) FROM task_logs l JOIN tasks t ON t.task_log_id = l.id"
    " WHERE l.konnect_id = %s AND t.step_id = 'quota'"
)


def quota_refused_runs(dsn: str, konnect_id: int) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(QUOTA_REFUSED_SQL, (konnect_id,)).fetchone()
    return int(row[0]) if row else 0


def quota_line(rows: list[dict[str, Any]]) -> str:
    """One line on the task quota, which stays on in the bench as in ``make dev``: how many runs it
    refused (402 answers and accepted runs refused before executing), so a low figure is not mistaken
    for the runner's speed."""
    answered = sum(r.get("quota_402", 0) for r in rows)
    stored = sum(r.get("quota_refused_runs", 0) for r in rows)
    if answered or stored:
        return (
            f"QUOTA: {answered + stored} runs were refused for the task quota ({answered} webhooks answered 402,"
            f" {stored} accepted runs refused before executing): the quota is on (KONNECTZ_ENFORCE_QUOTA=true,"
            " as in make dev), so these figures do not measure the runner alone"
        )
    return "quota: on (KONNECTZ_ENFORCE_QUOTA=true, as in make dev); no run was refused for quota"


def measure(platform: Platform, konnect_id: int, hook: str, sink: Sink, name: str, work: Path) -> dict[str, Any]:
    pids = {n: p.pid for n, p in platform._procs if n in ("api", "runner")}
    stores = {"nats": platform.nats.proc.pid if platform.nats.proc else 0, "postgres": _postmaster(platform)}
    cpu0 = {n: tree_cpu(p) for n, p in {**pids, **stores}.items()}
    profilers = _profile(pids, work / f"profile-{name}")
    with psycopg.connect(platform.postgres.dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM task_logs WHERE konnect_id = %s", (konnect_id,)).fetchone()
        before = int(row[0]) if row else 0
    quota_before = quota_refused_runs(platform.postgres.dsn, konnect_id)
    prefix = f"{name}-{uuid.uuid4().hex[:6]}"
    with Sampler(platform.postgres.dsn, konnect_id, pids) as sampler:
        start = time.monotonic()
        if name.startswith("r"):
            load = run_vegeta(hook, int(name[1:]), SECONDS, work / name, prefix)
        else:
            load = run_wrk(hook, int(name[1:]), SECONDS, work / name, prefix)
        end = time.monotonic()
        target = before + len(load.acked)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # drained: every acked run stored and nothing new for 3 s
            time.sleep(0.2)
            if sampler.count() >= target and time.monotonic() - sampler.last_change() > 3:
                break
        last = sampler.last_change()
    for proc in profilers:
        proc.wait(60)
    cpu = {n: round(tree_cpu(p) - cpu0[n], 2) for n, p in {**pids, **stores}.items()}
    persisted = sampler.count() - before
    with psycopg.connect(platform.postgres.dsn, autocommit=True) as conn:
        stored = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT run_id, data->'node-1'->>'seq' FROM task_logs"
                " WHERE konnect_id = %s AND data->'node-1'->>'seq' LIKE %s",
                (konnect_id, prefix + "-%"),
            )
        }
    missing = len(load.acked - stored.keys())
    quota_refused = quota_refused_runs(platform.postgres.dsn, konnect_id) - quota_before
    doubled_logs = sum(n - 1 for n in Counter(stored.values()).values() if n > 1)
    time.sleep(1.2)  # nginx flushes its log every second
    sink_seen = {s: n for s, n in sink.seqs().items() if s.startswith(prefix + "-")}
    doubled_effects = sum(n - 1 for n in sink_seen.values() if n > 1)
    return {
        "phase": name,
        "acked": load.ok,
        "refused": load.refused,
        "quota_402": load.quota,
        "quota_refused_runs": quota_refused,
        "ack_per_s": round(load.ok / load.seconds, 1),
        "p50_ack_ms": round(load.p50_ms, 2),
        "p99_ack_ms": round(load.p99_ms, 2),
        "persisted": persisted,
        "persisted_per_s": round(persisted / max(last - start, 1e-3), 1),
        "drain_s": round(max(0.0, last - end), 2),
        "acked_missing": missing,
        "doubled_task_logs": doubled_logs,
        "doubled_side_effects": doubled_effects,
        "sink_requests": sum(sink_seen.values()),
        "peak_rss_mib": {n: round(v / 2**20, 1) for n, v in sampler.peak.items()},
        "cpu_s": cpu,
        "cpu_ms_per_run": {n: round(1000 * v / max(persisted, 1), 2) for n, v in cpu.items()},
    }


def _postmaster(platform: Platform) -> int:
    try:
        return int((platform.postgres.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return 0


def _profile(pids: dict[str, int], out: Path) -> list[subprocess.Popen[bytes]]:
    """With KONNECTZ_BENCH_PROFILE=1: py-spy records the api and the runner (collapsed stacks, 100 Hz,
    without pausing them) for the load's duration. Latencies of a profiled phase are not comparable."""
    if os.environ.get("KONNECTZ_BENCH_PROFILE") != "1":
        return []
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out.mkdir(parents=True, exist_ok=True)
    args = ["record", "--subprocesses", "--threads", "--nonblocking", "--rate", "100", "--format", "raw"]
    return [
        subprocess.Popen(
            [spy, *args, "--duration", str(int(SECONDS)), "--pid", str(pid), "--output", str(out / f"{name}.raw")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, pid in pids.items()
    ]


def _spec(konnect_id: int, sink_url: str) -> dict[str, Any]:
    return {
        "konnect_id": konnect_id,
        "owner_id": 1,
        "name": f"Konnect {konnect_id}",
        "trigger_id": "node-1",
        "trigger": {"kind": "webhook", "token": f"bench{konnect_id:020d}{uuid.uuid4().hex[:12]}"},
        "steps": [
            {"kind": "filter", "id": "node-2", "name": "Filter",
             "conditions": [{"field": "{{node-1.amount}}", "operator": "greater_than", "value": "10"}]},
            {"kind": "formatter", "id": "node-3", "name": "Formatter", "operation": "text.upper",
             "input": "{{node-1.name}}"},
            {"kind": "api_call", "id": "node-4", "name": "API Call", "method": "POST", "url": sink_url + "/orders",
             "body": [{"key": "customer", "value": "{{node-3.output}}"}]},
        ],
    }  # fmt: skip


async def _put_all(nats_url: str, specs: list[dict[str, Any]]) -> None:
    import nats

    from konnectz_contracts.events import KV_KONNECTS, konnect_key
    from konnectz_runner.bus import ensure_streams

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await ensure_streams(js)
    kv = await js.key_value(KV_KONNECTS)
    for i in range(0, len(specs), 2000):
        chunk = specs[i : i + 2000]
        await asyncio.gather(*(kv.put(konnect_key(s["konnect_id"]), json.dumps(s).encode()) for s in chunk))
    await nc.close()


def scale(n: int, sink: Sink, work: Path, extra: dict[str, str]) -> dict[str, Any]:
    """A runner hosting ``n`` konnects: load time, idle RSS, publish-to-live of one more."""
    base = work / f"scale-{n}"
    base.mkdir(parents=True, exist_ok=True)
    nats_server = NatsServer(base / "nats", free_port(), sync_interval=NATS_SYNC)
    nats_server.start()
    port = free_port()
    proc = None
    try:
        asyncio.run(_put_all(nats_server.admin_url, [_spec(i + 1, sink.url) for i in range(n)]))
        env = {
            **os.environ,
            **nats_server.env(RUNNER),
            "KONNECTZ_ENFORCE_QUOTA": "false",
            "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8",
            "KONNECTZ_KV_READY_TIMEOUT_SECONDS": "600",
            **extra,  # the same runner settings as the load phases (its processes too)
        }
        started = time.monotonic()
        with (base / "runner.log").open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "konnectz_runner", "serve", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _ok(url + "/healthz"), timeout=600, interval=0.1, what="runner ready")
        loaded = time.monotonic() - started
        time.sleep(3)
        idle = tree_rss(proc.pid)
        lives = []
        for k in range(5):
            spec = _spec(10_000_000 + k, sink.url)
            hook = f"{url}/hooks/{spec['trigger']['token']}"
            with httpx.Client() as client:
                t0 = time.monotonic()
                asyncio.run(_put_all(nats_server.admin_url, [spec]))
                while client.head(hook).status_code != 200:
                    if time.monotonic() - t0 > 30:
                        raise AssertionError("the published konnect never went live")
                lives.append((time.monotonic() - t0) * 1000)
        return {
            "konnects": n,
            "load_s": round(loaded, 2),
            "idle_rss_mib": round(idle / 2**20, 1),
            "publish_to_live_ms": round(statistics.median(lives), 1),
        }
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        nats_server.stop()


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


# --- respond: a webhook answered by a Respond step -----------------------------------------------------
def vegeta_latencies(url: str, rate: int, seconds: float, work: Path) -> tuple[list[float], Counter[int]]:
    """Latencies (ms, sorted) and status codes of ``rate`` POSTs/s to ``url`` for ``seconds``."""
    vegeta = _vegeta()
    work.mkdir(parents=True, exist_ok=True)
    body = work / "body.json"
    body.write_text(json.dumps({"amount": 42, "name": "ada lovelace"}))
    targets = work / "targets.txt"
    targets.write_text(f"POST {url}\nContent-Type: application/json\n@{body}\n")
    results = work / "results.bin"
    subprocess.run(
        [vegeta, "attack", f"-targets={targets}", f"-rate={rate}/s", f"-duration={int(seconds)}s",
         "-timeout=10s", f"-output={results}"],
        check=True, capture_output=True,
    )  # fmt: skip
    encoded = subprocess.run([vegeta, "encode", "-to=json", str(results)], check=True, capture_output=True).stdout
    hits = [json.loads(raw) for raw in encoded.splitlines()]
    return sorted(h["latency"] / 1e6 for h in hits), Counter(int(h["code"]) for h in hits)


def _percentile(values: list[float], q: float) -> float:
    return round(values[min(len(values) - 1, int(len(values) * q))], 2)


def respond_phase(platform: Platform, rate: int, work: Path) -> dict[str, Any]:
    """The immediate answer, then the answer of a Respond step, each at ``rate`` requests/s."""
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, f"respond-{uuid.uuid4().hex[:8]}@example.com", "correct horse battery")
    with psycopg.connect(platform.postgres.dsn, autocommit=True) as conn:
        conn.execute("UPDATE users SET task_limit = 2000000000")
    webhook = {"selectedAddonsValue": {"respond": "step", "respond_timeout_seconds": 10}}
    formatter = {
        "configResponses": [
            {"config_key": "operation", "value": "uppercase", "config_key_required": True},
            {"config_key": "input", "value": "{{node-1.name}}", "config_key_required": True},
        ]
    }
    respond = {"configResponses": [{"config_key": "body", "value": '{"hello": "{{node-1.name}}"}'}]}
    flows = {
        "at_once": [_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
                    _node("node-2", "Formatter", "formatter", 2, "Formatter", **formatter)],
        "respond": [_node("node-1", "WebhookInner", "webhook", 1, "Webhook", **webhook),
                    _node("node-2", "ActionNode", "respond", 2, "Respond", **respond)],
    }  # fmt: skip
    row: dict[str, Any] = {"phase": f"respond{rate}", "rate": rate}
    for name, apps in flows.items():
        canvas = {"apps": apps, "links": [{"id": "e0", "source": "node-1", "target": "node-2"}],
                  "dataForSelect": {}, "flowName": f"Bench {name}"}  # fmt: skip
        r = api.post("/api/v1/konnects/test_and_review", headers=headers,
                     json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas})  # fmt: skip
        assert r.status_code == 200, r.text
        konnect_id, hook = int(r.json()["konnect_id"]), str(r.json()["webhook_url"])
        r = api.post("/api/v1/konnects/publish_konnect", headers=headers,
                     json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas})  # fmt: skip
        assert r.status_code == 200, r.text
        wait_until(lambda hook=hook: httpx.post(hook, json={"name": "warm"}, timeout=15).status_code == 200)
        latencies, codes = vegeta_latencies(hook, rate, SECONDS, work / f"respond-{name}")
        row[f"{name}_p50_ms"], row[f"{name}_p99_ms"] = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
        row[f"{name}_p90_ms"] = _percentile(latencies, 0.9)
        row[f"{name}_over_1s"] = sum(1 for ms in latencies if ms > 1000)
        row[f"{name}_codes"] = {str(k): v for k, v in sorted(codes.items())}
    row["added_p50_ms"] = round(row["respond_p50_ms"] - row["at_once_p50_ms"], 2)
    row["added_p99_ms"] = round(row["respond_p99_ms"] - row["at_once_p99_ms"], 2)
    return row


# --- the test ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="konnectz-runner-bench-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, dict):
            return " ".join(f"{k}={v}" for k, v in value.items())
        return str(value)

    widths = [max(len(c), *(len(cell(r.get(c, ""))) for r in rows)) for c in columns]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(cell(r.get(c, "")).ljust(w) for c, w in zip(columns, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def test_runner_bench(work: Path) -> None:
    sink = Sink(work / "sink")
    sink.start()
    extra = {"KONNECTZ_RUNNER_PROCESSES": str(RUNNER_PROCESSES)}
    extra |= dict(kv.split("=", 1) for kv in os.environ.get("KONNECTZ_BENCH_RUNNER_ENV", "").split(",") if "=" in kv)
    platform = make_platform(work / "platform", **extra)
    platform.pg_fsync = PG_FSYNC
    platform.nats_sync = NATS_SYNC
    platform.__post_init__()  # rebuild the stores with the durable settings
    results: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "durability": platform.durability,
        "seconds_per_phase": SECONDS,
        "cpus": os.cpu_count(),
        "runner_processes": int(extra["KONNECTZ_RUNNER_PROCESSES"]),
        "load": [],
        "respond": [],
        "scale": [],
    }
    try:
        loads = [p for p in PHASES if p[0] in "cr" and not p.startswith("respond")]
        responds = [int(p.removeprefix("respond")) for p in PHASES if p.startswith("respond")]
        if loads or responds:
            platform.start()
            if loads:
                konnect_id, hook = publish(platform, sink)
            for phase in loads:
                results["load"].append(measure(platform, konnect_id, hook, sink, phase, work))
                print(json.dumps(results["load"][-1]), flush=True)
            for rate in responds:
                results["respond"].append(respond_phase(platform, rate, work))
                print(json.dumps(results["respond"][-1]), flush=True)
            platform.stop()
        if "scale" in PHASES:
            for n in SCALE:
                results["scale"].append(scale(n, sink, work, extra))
                print(json.dumps(results["scale"][-1]), flush=True)
    finally:
        platform.stop()
        sink.stop()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"runner-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{results['durability']}; {SECONDS:g} s per phase; {os.cpu_count()} CPUs")
    if results["load"]:
        print(_table(results["load"], ["phase", "ack_per_s", "p50_ack_ms", "p99_ack_ms", "refused", "persisted_per_s",
                                       "drain_s", "acked_missing", "doubled_task_logs", "doubled_side_effects",
                                       "peak_rss_mib", "cpu_ms_per_run"]))  # fmt: skip
    if results["load"]:
        print(quota_line(results["load"]))
    if results["respond"]:
        columns = ["phase", "at_once_p50_ms", "at_once_p90_ms", "at_once_p99_ms", "at_once_over_1s", "respond_p50_ms",
                   "respond_p90_ms", "respond_p99_ms", "respond_over_1s", "added_p50_ms", "added_p99_ms",
                   "respond_codes"]  # fmt: skip
        print(_table(results["respond"], columns))
    if results["scale"]:
        print(_table(results["scale"], ["konnects", "load_s", "idle_rss_mib", "publish_to_live_ms"]))
    print(f"written to {out}")
    if os.environ.get("KONNECTZ_BENCH_PROFILE") == "1":
        keep = RESULTS / f"profile-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}"
        for path in work.glob("profile-*/*.raw"):
            (keep / path.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, keep / path.parent.name / path.name)
        print(f"profiles in {keep}")
    for row in results["load"]:
        assert row["acked_missing"] == 0 and row["doubled_task_logs"] == 0, row
    for row in results["respond"]:  # every request answered by its run (no 202 at the timeout, no error)
        assert row["respond_codes"] == {"200": row["rate"] * int(SECONDS)}, row
