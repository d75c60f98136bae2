"""`make bench`: the api under a write load, and with the hot account's row locked from outside.

Issue 32, item 3. A fresh small PostgreSQL (not the kept read-bench database), the api migrated by
its own code and served by uvicorn (KONNECTZ_DEPLOYER local: a publish is a put in the NATS
key-value bucket the runners watch, no Kubernetes), NATS and the mail sink from the session's
fixtures. ACCOUNTS verified accounts on the Team plan (members need it; its caps are 500 folders and
2,000 flows) are inserted directly with one argon2 hash; their tokens are minted as the read bench
mints them.

Write workers (httpx.AsyncClient; a few hundred writes per second at most) each run, in a loop, one
of these scenarios (weights in SCENARIOS) for an account: HOT_SHARE of the workers for the hot
account (the first) only, the others each time for one of the other accounts, so that the other
accounts' calls go on while the hot account's wait (each side is reported apart):

  sign in          captcha challenge, POST /auth/login (solved captcha, argon2 check)
  folder           add, rename, remove
  flow             Test & Review of a new flow's trigger (creates the draft), save_konnect, publish
                   (update_status Published or publish_konnect, alternately), withdraw (Draft), delete
  member           add_team_user, update_team_user, remove_team_user (the invitation mail included)
  profile          POST /users/profile (name, time zone)

Phases, KONNECTZ_WRITE_BENCH_SECONDS each: the write workers at each concurrency of
KONNECTZ_WRITE_BENCH_STEPS; then, at KONNECTZ_WRITE_BENCH_LOCKED_CONCURRENCY, "locked": an outside
connection holds the hot account's users row FOR UPDATE, idle in transaction, for the whole phase
(rolled back when the phase's load window ends); then "slow": an outside connection locks that row
for 0.5 s of every second (FOR UPDATE; pg_sleep(0.5); COMMIT). Meanwhile a separate process probes
/healthz every 20 ms (healthz_probe.py; latency counted from when each probe was due).

Each phase prints calls/s, p50/p99 per call, replies by status (403 PLAN_LIMIT apart; client
timeouts and connection errors too), /healthz p50/p99/max and probes over 1 s, the machine's load and
CPU, the api's and PostgreSQL's CPU, and what the database's backends were doing when the load window
ended. A summary table follows, and everything goes to bench-results/api-writes-<time>.json.

Bounded however the api behaves: every call has a client timeout (KONNECTZ_WRITE_BENCH_TIMEOUT, 30 s),
a phase waits at most that long for its calls in flight, an api that no longer answers /healthz after
a phase ends the run (the remaining phases are skipped and reported so), phases that would not fit
KONNECTZ_WRITE_BENCH_BUDGET_SECONDS (240) are skipped, and the api is killed when it does not stop.

Asserted (after printing): no 500, no call beyond the client timeout, every /healthz probe answered
within 10 s (what a liveness probe would restart the api for), the api alive after each phase; the
/healthz p99 only when KONNECTZ_WRITE_BENCH_HEALTHZ_P99_MS is set (the target is 100 ms), so that the
figures of a tree that misses it are still printed. Other knobs: KONNECTZ_WRITE_BENCH_ACCOUNTS (20),
KONNECTZ_WRITE_BENCH_HOT_SHARE (0.5), KONNECTZ_BENCH_WORKERS (uvicorn workers, 1),
KONNECTZ_WRITE_BENCH_LOCKED_CONCURRENCY (8), KONNECTZ_WRITE_BENCH_SLOW=0 (no slow phase).

Skipped unless KONNECTZ_BENCH=1 (the make target sets it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from konnectz_api.core.security import create_access_token, hash_password
from konnectz_api.services import captcha
from konnectz_devstack import testing
from konnectz_devstack._ports import free_port
from konnectz_devstack._postgres import PostgresServer
from konnectz_devstack.pytest_plugin import serving

sys.path.insert(0, str(Path(__file__).parent))
from api_process import SECRET, ApiProcess, api_env, descendants, migrate, running_api

pytestmark = pytest.mark.skipif(os.environ.get("KONNECTZ_BENCH") != "1", reason="run with `make bench`")

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "bench-results"
PROBE = Path(__file__).parent / "healthz_probe.py"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


ACCOUNTS = int(_env("KONNECTZ_WRITE_BENCH_ACCOUNTS", "20"))
HOT_SHARE = float(_env("KONNECTZ_WRITE_BENCH_HOT_SHARE", "0.5"))
STEPS = [int(n) for n in _env("KONNECTZ_WRITE_BENCH_STEPS", "4,8,16,32").split(",") if n.strip()]
SECONDS = float(_env("KONNECTZ_WRITE_BENCH_SECONDS", "15"))
LOCKED_CONCURRENCY = int(_env("KONNECTZ_WRITE_BENCH_LOCKED_CONCURRENCY", "8"))
SLOW_PHASE = _env("KONNECTZ_WRITE_BENCH_SLOW", "1") == "1"
CLIENT_TIMEOUT = float(_env("KONNECTZ_WRITE_BENCH_TIMEOUT", "30"))
BUDGET_SECONDS = float(_env("KONNECTZ_WRITE_BENCH_BUDGET_SECONDS", "240"))
# One uvicorn worker by default: with two, a worker whose event loop is frozen hides behind the other in
# /healthz (a new connection is accepted by whichever loop is free) while the calls it holds hang.
WORKERS = int(_env("KONNECTZ_BENCH_WORKERS", "1"))
PROBE_INTERVAL = 0.02
PROBE_TIMEOUT = 10.0
HEALTHZ_P99_BUDGET = os.environ.get("KONNECTZ_WRITE_BENCH_HEALTHZ_P99_MS")  # asserted only when set
PASSWORD = "bench-write-pass-1"  # the bench accounts'
PLAN = "Team"  # team members need it; 500 folders and 2,000 flows per account
OUTSIDE = "konnectz-write-bench-outside"  # application_name of the bench's own database connections

# Reply buckets, in the order printed.
BUCKETS = ["2xx", "403PL", "403", "409", "429", "503", "500", "4xx", "other", "timeout", "conn"]
_NAMED = {403: "403", 409: "409", 429: "429", 503: "503", 500: "500"}


# --- the database and the api ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def write_db() -> Iterator[PostgresServer]:
    with serving("konnectz-write-bench-pg-", lambda base: PostgresServer(base, free_port(), "konnectz_writes")) as pg:
        # 2 uvicorn workers may each open 40 engine + 16 read-pool connections, over the default 100.
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET max_connections = 250")
        pg.stop()
        pg.start()
        yield pg


def _seed_accounts(dsn: str, n: int) -> list[int]:
    """``n`` verified accounts on the Team plan (one argon2 hash for all); their ids, hot one first."""
    password_hash = hash_password(PASSWORD)
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [
            conn.execute(
                "INSERT INTO users (email, password_hash, first_name, last_name, is_admin, email_verified_at, "
                "current_plan, preferred_language, task_limit, task_consumed, session_version, created_at) "
                "VALUES (%s, %s, 'Bench', %s, false, now(), %s, 'en', 10000, 0, 0, now()) RETURNING id",
                (_email(i), password_hash, str(i), PLAN),
            ).fetchone()[0]  # type: ignore[index]
            for i in range(n)
        ]


def _email(i: int) -> str:
    return f"writer{i}@bench.example.com"


@dataclass
class Bench:
    api: ApiProcess
    db: PostgresServer
    ids: list[int]


@pytest.fixture(scope="module")
def bench(write_db, nats_server, smtp_sink) -> Iterator[Bench]:
    env = api_env(
        write_db.url,
        nats_server,
        KONNECTZ_DEPLOYER="local",
        KONNECTZ_SMTP_HOST="127.0.0.1",
        KONNECTZ_SMTP_PORT=str(smtp_sink.port),
        KONNECTZ_DEV_MAILDIR=str(smtp_sink.maildir),
        # Sign-ins are part of the load: a captcha of one PBKDF2 round, throttles out of the way.
        KONNECTZ_CAPTCHA_COST="1",
        KONNECTZ_CAPTCHA_MAX_NUMBER="50",
        KONNECTZ_LOGIN_MAX_FAILURES_PER_ADDRESS="1000000",
        KONNECTZ_LOGIN_MAX_FAILURES_PER_EMAIL="1000000",
        KONNECTZ_MAIL_MAX_PER_ADDRESS="1000000",
        KONNECTZ_MAIL_MAX_PER_EMAIL="1000000",
    )
    migrate(env)
    ids = _seed_accounts(write_db.dsn, ACCOUNTS)
    with running_api(env, workers=WORKERS, stop_timeout=15) as api:
        yield Bench(api, write_db, ids)


# --- calls and scenarios ---------------------------------------------------------------------------
@dataclass
class Call:
    name: str
    hot: bool
    bucket: str
    ms: float
    ended: float  # time.monotonic()


@dataclass
class Load:
    """What the write workers share during a phase."""

    client: httpx.AsyncClient
    ids: list[int]
    tokens: dict[int, str]
    stop_at: float
    rng: random.Random
    calls: list[Call] = field(default_factory=list)
    samples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # bucket: reply bodies
    seq: Iterator[int] = field(default_factory=itertools.count)

    def account(self, hot: bool) -> int:
        return self.ids[0] if hot or len(self.ids) == 1 else self.rng.choice(self.ids[1:])


class Stop(Exception):
    """A scenario's call failed (or the load window ended): the scenario's later calls are not made."""


def _bucket(status: int, body: str) -> str:
    if 200 <= status < 300:
        return "2xx"
    if status == 403 and "PLAN_LIMIT" in body:
        return "403PL"
    if status in _NAMED:
        return _NAMED[status]
    return "4xx" if 400 <= status < 500 else "other"


async def _call(load: Load, name: str, method: str, path: str, user: int, *, auth: bool = True, **kw: Any) -> Any:
    """One timed call for ``user`` (with a token unless not ``auth``); its JSON reply when 2xx, else :class:`Stop`."""
    if time.monotonic() >= load.stop_at:
        raise Stop
    headers = {"Authorization": f"Bearer {load.tokens[user]}"} if auth else {}
    started = time.perf_counter()
    body = ""
    try:
        async with asyncio.timeout(CLIENT_TIMEOUT):  # the whole call: waiting for a connection included
            r = await load.client.request(method, path, headers=headers, **kw)
        bucket, body = _bucket(r.status_code, r.text), r.text
    except TimeoutError:
        bucket = "timeout"
    except httpx.TransportError as exc:
        bucket, body = "conn", f"{type(exc).__name__}: {exc}"
    load.calls.append(Call(name, user == load.ids[0], bucket, (time.perf_counter() - started) * 1000, time.monotonic()))
    if bucket != "2xx":
        if bucket not in ("timeout", "403PL") and len(load.samples[bucket]) < 3:
            load.samples[bucket].append(f"{name}: {body[:300]}")
        raise Stop
    return r.json()


async def sign_in(load: Load, user: int) -> None:
    challenge = await _call(load, "sign in: captcha", "GET", "/api/v1/captcha/challenge", user, auth=False)
    email = _email(load.ids.index(user))
    body = {"email": email, "password": PASSWORD, "rememberMe": False, "captcha": captcha.solve(challenge)}
    await _call(load, "sign in: login", "POST", "/api/v1/auth/login", user, auth=False, json=body)


async def folder(load: Load, user: int) -> None:
    n = next(load.seq)
    added = await _call(load, "folder: add", "POST", "/api/v1/folders/add", user, json={"folder_name": f"Bench {n}"})
    folder_id = added["folder"]["id"]
    await _call(
        load, "folder: rename", "PUT", f"/api/v1/folders/{folder_id}/rename", user, json={"folder_name": f"Re {n}"}
    )
    await _call(load, "folder: remove", "GET", f"/api/v1/folders/{folder_id}/remove", user)


async def flow(load: Load, user: int) -> None:
    n = next(load.seq)
    canvas = testing.webhook_canvas("https://api.example.com/orders", name=f"Bench flow {n}")
    review = {"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas}
    tested = await _call(
        load, "flow: test & review (new)", "POST", "/api/v1/konnects/test_and_review", user, json=review
    )
    konnect_id = int(tested["konnect_id"])
    body = {"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas}
    await _call(load, "flow: save_konnect", "POST", "/api/v1/konnects/save_konnect", user, json=body)
    status = f"/api/v1/konnects/{konnect_id}/update_status"
    if n % 2:
        await _call(load, "flow: publish (status)", "POST", status, user, json={"status": "Published"})
    else:
        await _call(load, "flow: publish_konnect", "POST", "/api/v1/konnects/publish_konnect", user, json=body)
    await _call(load, "flow: withdraw (Draft)", "POST", status, user, json={"status": "Draft"})
    await _call(load, "flow: delete", "POST", status, user, json={"status": "DELETED"})


async def member(load: Load, user: int) -> None:
    n = next(load.seq)
    new = {"email": f"member{n}-{time.time_ns()}@bench.example.com", "first_name": "Member", "access": "Create"}
    added = await _call(load, "member: add", "POST", "/api/v1/members/add_team_user", user, json=new)
    member_id = added["member"]["id"]
    change = {"sub_account_id": member_id, "access": "FULL"}
    await _call(load, "member: update", "POST", "/api/v1/members/update_team_user", user, json=change)
    await _call(load, "member: remove", "GET", f"/api/v1/members/remove_team_user?sub_account_id={member_id}", user)


async def profile(load: Load, user: int) -> None:
    change = {"first_name": f"Bench{next(load.seq)}", "timezone": load.rng.choice(["Europe/Berlin", "GMT+05:30"])}
    await _call(load, "profile: update", "POST", "/api/v1/users/profile", user, json=change)


Scenario = Callable[[Load, int], Awaitable[None]]
SCENARIOS: list[tuple[Scenario, int]] = [(flow, 4), (folder, 2), (profile, 2), (member, 1), (sign_in, 1)]


async def _worker(load: Load, hot: bool) -> None:
    """Scenarios one after the other until the load window ends: the hot account's, or another's each time."""
    scenarios, weights = zip(*SCENARIOS, strict=True)
    while time.monotonic() < load.stop_at:
        scenario = load.rng.choices(scenarios, weights)[0]
        with contextlib.suppress(Stop):
            await scenario(load, load.account(hot))


# --- what the machine does meanwhile ---------------------------------------------------------------
def _cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of one process (``reaped``: its waited-for children's too)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if reaped else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> tuple[float, float]:
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


@dataclass
class CpuMeter:
    """CPU used between :meth:`start` and :meth:`stop`: the machine's (% of all cores), the api's and
    PostgreSQL's (% of one core: 200 is both cores), and this load generator's."""

    api: ApiProcess
    db: PostgresServer
    _start: dict[str, Any] = field(default_factory=dict)

    def _postmaster(self) -> int | None:
        try:
            return int((self.db.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def _snapshot(self) -> dict[str, Any]:
        pm = self._postmaster()
        pg = {pid: _cpu_seconds(pid) for pid in descendants(pm)} if pm else {}
        return {
            "t": time.monotonic(),
            "machine": _machine_busy(),
            "api": {pid: _cpu_seconds(pid) for pid in self.api.pids()},
            "pg": pg,
            "pg_master": _cpu_seconds(pm, reaped=True) if pm else 0.0,
            "client": sum(os.times()[:2]),
        }

    def start(self) -> None:
        self._start = self._snapshot()

    def stop(self) -> dict[str, float]:
        a, b = self._start, self._snapshot()
        wall = b["t"] - a["t"]

        def used(key: str) -> float:
            return sum(v - a[key].get(pid, 0.0) for pid, v in b[key].items())

        busy = (b["machine"][0] - a["machine"][0]) / max(1, b["machine"][1] - a["machine"][1])
        return {
            "machine_busy_pct": round(100 * busy, 1),
            "api_cpu_pct": round(100 * used("api") / wall, 1),
            "postgres_cpu_pct": round(100 * (used("pg") + b["pg_master"] - a["pg_master"]) / wall, 1),
            "client_cpu_pct": round(100 * (b["client"] - a["client"]) / wall, 1),
        }


def _backends(dsn: str) -> dict[str, int]:
    """The api's database connections by state (``waiting on Lock`` apart), not the bench's own."""
    with psycopg.connect(dsn, autocommit=True, application_name=OUTSIDE) as conn:
        rows = conn.execute(
            "SELECT state, wait_event_type = 'Lock', count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND application_name <> %s GROUP BY 1, 2",
            (OUTSIDE,),
        ).fetchall()
    out: Counter[str] = Counter()
    for state, waiting, count in rows:
        out[f"{state} waiting on Lock" if waiting else str(state)] += count
    return dict(out)


# --- outside connections -----------------------------------------------------------------------------
class RowLock:
    """An outside connection holding ``users`` row ``user_id`` FOR UPDATE, idle in transaction."""

    def __init__(self, dsn: str, user_id: int) -> None:
        self.dsn, self.user_id = dsn, user_id
        self.conn: psycopg.Connection[Any] | None = None

    def start(self) -> None:
        self.conn = psycopg.connect(self.dsn, application_name=OUTSIDE)
        self.conn.execute("SELECT id FROM users WHERE id = %s FOR UPDATE", (self.user_id,))

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.rollback()
            self.conn.close()


class SlowRowLock:
    """An outside connection locking ``users`` row ``user_id`` for ``hold`` s, then none for ``gap`` s, over again."""

    def __init__(self, dsn: str, user_id: int, hold: float = 0.5, gap: float = 0.5) -> None:
        self.dsn, self.user_id, self.hold, self.gap = dsn, user_id, hold, gap
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with psycopg.connect(self.dsn, application_name=OUTSIDE) as conn:
            while not self._stop.is_set():
                with conn.transaction():
                    conn.execute("SELECT id FROM users WHERE id = %s FOR UPDATE", (self.user_id,))
                    conn.execute("SELECT pg_sleep(%s)", (self.hold,))
                self._stop.wait(self.gap)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.hold + 5)


# --- a phase -----------------------------------------------------------------------------------------
def _q(values: list[float], p: int) -> float | None:
    """The ``p``th percentile in ms, rounded (None without values)."""
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[p - 1], 1)


async def _healthz_alive(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=5.0) as client:
            return (await client.get(f"{url}/healthz")).status_code == 200
    except httpx.HTTPError:
        return False


async def run_phase(
    bench: Bench, name: str, concurrency: int, outside: RowLock | SlowRowLock | None, seconds: float = SECONDS
) -> dict[str, Any]:
    url = bench.api.url
    tokens = {uid: create_access_token(user_id=uid, secret=SECRET, lifetime=timedelta(hours=2)) for uid in bench.ids}
    probe = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PROBE),
        url,
        str(seconds),
        str(PROBE_INTERVAL),
        str(PROBE_TIMEOUT),
        stdout=asyncio.subprocess.PIPE,
    )
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    meter = CpuMeter(bench.api, bench.db)
    load_before = os.getloadavg()[0]
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=CLIENT_TIMEOUT) as client:
        if outside is not None:
            outside.start()
        meter.start()
        started = time.monotonic()
        load = Load(client, bench.ids, tokens, started + seconds, random.Random(concurrency))
        hot = round(concurrency * HOT_SHARE)  # workers for the hot account only; the others for the rest
        workers = [asyncio.create_task(_worker(load, i < hot)) for i in range(concurrency)]
        await asyncio.sleep(seconds)
        cpu = meter.stop()
        load_after = os.getloadavg()[0]
        backends = _backends(bench.db.dsn)
        if outside is not None:
            outside.stop()
        # The calls in flight end by themselves within the client timeout; a little more, then cancelled.
        pending: set[asyncio.Task[None]] = set()
        if workers:
            _, pending = await asyncio.wait(workers, timeout=CLIENT_TIMEOUT + 5)
        for task in pending:
            task.cancel()
        drained = time.monotonic() - started - seconds
    try:
        out, _ = await asyncio.wait_for(probe.communicate(), timeout=PROBE_TIMEOUT + 15)
        probes = json.loads(out)
    except TimeoutError:
        probe.kill()
        probes = {"latencies_ms": [], "statuses": {}, "timeouts": 0, "errors": 0, "probes": 0, "lost": True}
    alive = await _healthz_alive(url)
    return _summarise(
        name,
        concurrency,
        seconds,
        load,
        started,
        probes,
        cpu,
        (load_before, load_after),
        backends,
        drained,
        alive,
        pending,
    )


def _summarise(
    name: str,
    concurrency: int,
    seconds: float,
    load: Load,
    started: float,
    probes: dict[str, Any],
    cpu: dict[str, float],
    loadavg: tuple[float, float],
    backends: dict[str, int],
    drained: float,
    alive: bool,
    pending: set[asyncio.Task[None]],
) -> dict[str, Any]:
    in_window = [c for c in load.calls if c.ended <= started + seconds]

    def side(hot: bool) -> dict[str, Any]:
        ms = [c.ms for c in load.calls if c.hot == hot]
        window = [c for c in in_window if c.hot == hot]
        return {
            "calls_per_s": round(len(window) / seconds, 1),
            "ok_per_s": round(sum(c.bucket == "2xx" for c in window) / seconds, 1),
            "p50_ms": _q(ms, 50),
            "p99_ms": _q(ms, 99),
            "statuses": dict(Counter(c.bucket for c in load.calls if c.hot == hot)),
        }

    per_call: dict[str, dict[str, Any]] = {}
    for call_name in sorted({c.name for c in load.calls}):
        calls = [c for c in load.calls if c.name == call_name]
        ms = [c.ms for c in calls]
        per_call[call_name] = {
            "count": len(calls),
            "p50_ms": _q(ms, 50),
            "p99_ms": _q(ms, 99),
            "max_ms": round(max(ms), 1),
            "statuses": dict(Counter(c.bucket for c in calls)),
        }
    all_ms = [c.ms for c in load.calls]
    answered = probes["latencies_ms"]
    unanswered = probes["timeouts"] + probes["errors"]
    # A probe that got no answer counts as the probe timeout: the p99 is then a lower bound.
    hz = sorted(answered + [PROBE_TIMEOUT * 1000] * unanswered)
    return {
        "phase": name,
        "concurrency": concurrency,
        "seconds": seconds,
        "calls": len(load.calls),
        "calls_per_s": round(len(in_window) / seconds, 1),
        "ok_per_s": round(sum(c.bucket == "2xx" for c in in_window) / seconds, 1),
        "p50_ms": _q(all_ms, 50),
        "p99_ms": _q(all_ms, 99),
        "statuses": dict(Counter(c.bucket for c in load.calls)),
        "hot_account": side(True),
        "other_accounts": side(False),
        "per_call": per_call,
        "healthz": {
            "probes": probes["probes"],
            "answered_200": probes["statuses"].get("200", 0),
            "statuses": probes["statuses"],
            "timeouts": probes["timeouts"],
            "errors": probes["errors"],
            "over_1s": sum(ms > 1000 for ms in hz),
            "p50_ms": _q(hz, 50),
            "p99_ms": _q(hz, 99),
            "max_ms": round(max(hz), 1) if hz else None,
            "p99_is_lower_bound": unanswered > 0,
            "lost": bool(probes.get("lost")),
        },
        "loadavg_1m": [round(x, 2) for x in loadavg],
        **cpu,
        "db_backends_at_window_end": backends,
        "drain_seconds": round(drained, 1),
        "workers_cancelled": len(pending),
        "api_alive_after": alive,
        "error_samples": dict(load.samples),
    }


# --- printing ------------------------------------------------------------------------------------------
def _statuses(counts: dict[str, int]) -> str:
    return ", ".join(f"{b} {counts[b]}" for b in BUCKETS if counts.get(b))


def print_phase(r: dict[str, Any]) -> None:
    hz = r["healthz"]
    ge = ">=" if hz["p99_is_lower_bound"] else ""
    print(
        f"\n== {r['phase']}: {r['concurrency']} write workers ({HOT_SHARE:.0%} on the hot account), "
        f"{r['seconds']:.0f} s =="
    )
    if not r["calls"]:
        print("  no write calls: the /healthz probes alone, on the machine as it is (the floor of the figures below)")
    else:
        print(
            f"  {r['calls_per_s']} calls/s ({r['ok_per_s']} 2xx/s); all calls p50 {r['p50_ms']} ms, "
            f"p99 {r['p99_ms']} ms; {_statuses(r['statuses'])}"
        )
    for label, key in (("hot account", "hot_account"), ("other accounts", "other_accounts")):
        c = r[key]
        if c["statuses"]:
            print(
                f"    {label}: {c['calls_per_s']} calls/s ({c['ok_per_s']} 2xx/s), p50 {c['p50_ms']} ms, "
                f"p99 {c['p99_ms']} ms; {_statuses(c['statuses'])}"
            )
    print(
        f"  /healthz: p50 {hz['p50_ms']} ms, p99 {ge}{hz['p99_ms']} ms, max {ge}{hz['max_ms']} ms; "
        f"{hz['over_1s']} of {hz['probes']} probes over 1 s, {hz['timeouts']} timed out ({PROBE_TIMEOUT:.0f} s), "
        f"{hz['errors']} connection errors, replies {hz['statuses']}"
    )
    print(
        f"  load {r['loadavg_1m'][0]} -> {r['loadavg_1m'][1]}; CPU: machine {r['machine_busy_pct']} % of 2 cores, "
        f"api {r['api_cpu_pct']} %, postgres {r['postgres_cpu_pct']} %, load generator {r['client_cpu_pct']} % "
        "(% of one core)"
    )
    print(
        f"  api's db connections at the window's end: {r['db_backends_at_window_end']}; "
        f"calls in flight drained in {r['drain_seconds']} s ({r['workers_cancelled']} cancelled); "
        f"api {'answers' if r['api_alive_after'] else 'DOES NOT ANSWER'} /healthz afterwards"
    )
    if r["per_call"]:
        print(f"  {'call':<28}{'count':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}  replies")
    for call_name, c in r["per_call"].items():
        print(
            f"  {call_name:<28}{c['count']:>7}{c['p50_ms']:>10}{c['p99_ms']:>10}{c['max_ms']:>10}  "
            f"{_statuses(c['statuses'])}"
        )
    for bucket, samples in r["error_samples"].items():
        for sample in samples:
            print(f"  sample {bucket}: {sample}")


def _cell(value: Any, width: int, lower_bound: bool = False) -> str:
    text = "-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)
    return f"{text + ('+' if lower_bound and value is not None else ''):>{width}}"


# The summary's columns: heading, width, value of a phase's result, whether it may be a lower bound.
_COLUMNS: list[tuple[str, int, Callable[[dict[str, Any]], Any], bool]] = [
    ("conc", 5, lambda r: r["concurrency"], False),
    ("calls/s", 8, lambda r: r["calls_per_s"], False),
    ("2xx/s", 7, lambda r: r["ok_per_s"], False),
    ("hot/s", 7, lambda r: r["hot_account"]["ok_per_s"], False),
    ("oth/s", 7, lambda r: r["other_accounts"]["ok_per_s"], False),
    ("p50", 8, lambda r: r["p50_ms"], False),
    ("p99", 9, lambda r: r["p99_ms"], False),
    ("oth p99", 9, lambda r: r["other_accounts"]["p99_ms"], False),
    ("hz p50", 9, lambda r: r["healthz"]["p50_ms"], True),
    ("hz p99", 9, lambda r: r["healthz"]["p99_ms"], True),
    ("hz max", 9, lambda r: r["healthz"]["max_ms"], True),
    (">1s", 5, lambda r: r["healthz"]["over_1s"], False),
    ("hz t/o", 7, lambda r: r["healthz"]["timeouts"], False),
    *((b, 8, lambda r, b=b: r["statuses"].get(b, 0), False) for b in BUCKETS),
    ("load", 6, lambda r: r["loadavg_1m"][1], False),
    ("mach%", 6, lambda r: round(r["machine_busy_pct"]), False),
    ("api%", 5, lambda r: round(r["api_cpu_pct"]), False),
    ("pg%", 5, lambda r: round(r["postgres_cpu_pct"]), False),
]


def summary_table(results: list[dict[str, Any]]) -> str:
    lines = [f"{'phase':<8}" + "".join(f"{head:>{width}}" for head, width, _, _ in _COLUMNS)]
    for r in results:
        if "skipped" in r:
            lines.append(f"{r['phase']:<8}{r['concurrency']:>5}  skipped: {r['skipped']}")
            continue
        bound = r["healthz"]["p99_is_lower_bound"]
        lines.append(f"{r['phase']:<8}" + "".join(_cell(get(r), width, bound and lb) for _, width, get, lb in _COLUMNS))
    return "\n".join(lines)


# --- the test --------------------------------------------------------------------------------------------
def _tree() -> dict[str, Any]:
    """The commit measured, and whether the api's sources differ from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "api_src_changed": bool(git("status", "--porcelain", "api/src")),
    }


def test_api_writes_under_load(bench):
    hot = bench.ids[0]
    Phase = tuple[str, int, float, Callable[[], RowLock | SlowRowLock | None]]
    phases: list[Phase] = [("idle", 0, min(5.0, SECONDS), lambda: None)]  # the probes alone: the machine's floor
    phases += [(f"c={c}", c, SECONDS, lambda: None) for c in STEPS]
    phases.append(("locked", LOCKED_CONCURRENCY, SECONDS, lambda: RowLock(bench.db.dsn, hot)))
    if SLOW_PHASE:
        phases.append(("slow", LOCKED_CONCURRENCY, SECONDS, lambda: SlowRowLock(bench.db.dsn, hot)))
    tree = _tree()
    print(
        f"\nwrite bench on {tree['commit']}{' (api/src changed)' if tree['api_src_changed'] else ''}: {ACCOUNTS} "
        f"accounts (hot: user {hot}, {HOT_SHARE:.0%} of the workers), {WORKERS} uvicorn worker(s), {SECONDS:.0f} s "
        f"per phase, client timeout {CLIENT_TIMEOUT:.0f} s, /healthz every {PROBE_INTERVAL * 1000:.0f} ms; phases "
        f"{[p[0] for p in phases]}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before"
    )
    results: list[dict[str, Any]] = []
    began = time.monotonic()
    frozen = False
    for name, concurrency, seconds, outside in phases:
        if frozen:
            results.append({"phase": name, "concurrency": concurrency, "skipped": "the api stopped answering /healthz"})
            continue
        if time.monotonic() - began + seconds + CLIENT_TIMEOUT + 10 > BUDGET_SECONDS:
            results.append({"phase": name, "concurrency": concurrency, "skipped": f"over {BUDGET_SECONDS:.0f} s"})
            continue
        result = asyncio.run(run_phase(bench, name, concurrency, outside(), seconds))
        print_phase(result)
        results.append(result)
        frozen = not result["api_alive_after"]
    print(
        "\nsummary (latencies in ms, a + when probes got no reply: a lower bound; hot/s, oth/s: 2xx/s of the hot "
        "account and of the others; replies by bucket: 403PL = 403 PLAN_LIMIT, 4xx = other 4xx, timeout = no reply "
        "within the client timeout, conn = connection error; load = 1-minute load average at the window's end; "
        "CPU % of one core, mach% of both):"
    )
    print(summary_table(results))
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"api-writes-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    settings = {
        "accounts": ACCOUNTS,
        "hot_share": HOT_SHARE,
        "uvicorn_workers": WORKERS,
        "seconds_per_phase": SECONDS,
        "client_timeout_s": CLIENT_TIMEOUT,
        "probe_interval_s": PROBE_INTERVAL,
        "probe_timeout_s": PROBE_TIMEOUT,
        "cores": os.cpu_count(),
    }
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out.write_text(json.dumps({"when": when, **tree, "settings": settings, "phases": results}, indent=2) + "\n")
    print(f"results: {out}")

    problems = []
    for r in results:
        if "skipped" in r:
            continue
        if r["statuses"].get("500") or r["statuses"].get("other"):
            problems.append(f"{r['phase']}: server errors: {_statuses(r['statuses'])}")
        if r["statuses"].get("timeout"):
            problems.append(f"{r['phase']}: {r['statuses']['timeout']} calls got no reply within {CLIENT_TIMEOUT} s")
        hz = r["healthz"]
        if not hz["answered_200"] or hz["timeouts"] or hz["errors"]:
            problems.append(
                f"{r['phase']}: /healthz unanswered: {hz['timeouts']} of {hz['probes']} probes got no reply within "
                f"{PROBE_TIMEOUT:.0f} s, {hz['errors']} connection errors, {hz['answered_200']} answered 200"
            )
        if not r["api_alive_after"]:
            problems.append(f"{r['phase']}: the api no longer answers /healthz after the phase")
        if HEALTHZ_P99_BUDGET is not None and hz["p99_ms"] > float(HEALTHZ_P99_BUDGET):
            problems.append(f"{r['phase']}: /healthz p99 {hz['p99_ms']} ms > {HEALTHZ_P99_BUDGET} ms")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
