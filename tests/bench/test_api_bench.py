"""`make bench`: the api under load with a large seeded database.

Seeds (or reuses) 10,000 users, 200,000 konnects in folders and 5,000,000 task logs in a
PostgreSQL kept between runs, starts the api with uvicorn, then drives each listed call at
concurrency 32 and prints p50/p95/p99, requests per second and the api processes' CPU time per
request (from /proc: what a call costs the api, which latencies on a shared machine do not show).
Sizes and load are overridable:

  KONNECTZ_BENCH_USERS, KONNECTZ_BENCH_KONNECTS, KONNECTZ_BENCH_TASK_LOGS,
  KONNECTZ_BENCH_REQUESTS (per call, default 2000), KONNECTZ_BENCH_WARMUP (unmeasured requests
  before each call's, default 300), KONNECTZ_BENCH_CONCURRENCY (32),
  KONNECTZ_BENCH_WORKERS (uvicorn workers, default 2), KONNECTZ_BENCH_DIR (the kept database),
  KONNECTZ_BENCH_P95_MS (the budget asserted, default 50).

The load comes from :mod:`load` (raw HTTP/1.1 on kept connections), not httpx, whose own CPU
per request was a large share of this 2-core machine and inflated the latencies it measured.

Skipped unless KONNECTZ_BENCH=1 (the make target sets it), so `make test` stays quick.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from konnectz_api.core.security import create_access_token
from konnectz_devstack._ports import free_port
from konnectz_devstack._postgres import PostgresServer

sys.path.insert(0, str(Path(__file__).parent))
from api_process import SECRET, ApiProcess, api_env, migrate, running_api
from load import drive
from seed import Sizes, seed

pytestmark = pytest.mark.skipif(os.environ.get("KONNECTZ_BENCH") != "1", reason="run with `make bench`")


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


SIZES = Sizes(
    users=_env_int("KONNECTZ_BENCH_USERS", 10_000),
    konnects=_env_int("KONNECTZ_BENCH_KONNECTS", 200_000),
    task_logs=_env_int("KONNECTZ_BENCH_TASK_LOGS", 5_000_000),
)
REQUESTS = _env_int("KONNECTZ_BENCH_REQUESTS", 2000)
WARMUP = _env_int("KONNECTZ_BENCH_WARMUP", 300)
CONCURRENCY = _env_int("KONNECTZ_BENCH_CONCURRENCY", 32)
WORKERS = _env_int("KONNECTZ_BENCH_WORKERS", 2)
P95_BUDGET_MS = float(os.environ.get("KONNECTZ_BENCH_P95_MS", "50"))


@pytest.fixture(scope="module")
def bench_db() -> Iterator[PostgresServer]:
    base = Path(os.environ.get("KONNECTZ_BENCH_DIR") or Path(tempfile.gettempdir()) / "konnectz-bench-pg")
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)
    server = PostgresServer(base, free_port(), database="konnectz_bench")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(bench_db, nats_server) -> Iterator[ApiProcess]:
    env = api_env(bench_db.url, nats_server)
    migrate(env)
    seconds = seed(bench_db.dsn, SIZES)
    print(f"\nbench: seeding time {seconds:.1f}s ({'reused' if seconds == 0 else 'fresh'})")
    with running_api(env, workers=WORKERS) as api:
        yield api


def _token(user_id: int, cache: dict[int, str]) -> str:
    if user_id not in cache:
        cache[user_id] = create_access_token(user_id=user_id, secret=SECRET, lifetime=timedelta(hours=2))
    return cache[user_id]


def _calls(rng: random.Random) -> dict[str, object]:
    u = SIZES.users
    per_user = max(SIZES.konnects // u, 1)

    def konnect_of(user: int) -> int:
        return user + u * rng.randrange(per_user)

    return {
        "flow list": lambda user: "/api/v1/konnects?page_size=20&page_index=1&folder=home",
        "flow list search": lambda user: "/api/v1/konnects?page_size=20&page_index=1&search_query=orders",
        "folder list": lambda user: "/api/v1/folders/list",
        "history list": lambda user: "/api/v1/task_logs/konnects?page_size=30&page_index=1",
        "task logs of one konnect": lambda user: (
            f"/api/v1/task_logs/logs?konnect_id={konnect_of(user)}&task_log_type=SUCCESS&page_index=1&page_size=60"
        ),
        "dashboard stats": lambda user: "/api/v1/dashboard/stats",
    }


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user + system) the processes have used: what a request costs the api, whatever
    else the machine runs at the same time (wall-clock latencies on a shared machine measure that too)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return ticks / os.sysconf("SC_CLK_TCK")


def _drive(url: str, path_for, tokens: dict[int, str], rng: random.Random) -> tuple[list[float], float]:
    def request() -> tuple[str, dict[str, str]]:
        user = rng.randrange(1, SIZES.users + 1)
        return path_for(user), {"Authorization": f"Bearer {_token(user, tokens)}"}

    def check(status: int, body: bytes) -> None:
        assert status == 200, body[:500]

    if WARMUP:  # not measured: the bench database was just started (cold buffers, nothing prepared yet)
        asyncio.run(drive(url, request, requests=WARMUP, concurrency=CONCURRENCY, check=check))
    return asyncio.run(drive(url, request, requests=REQUESTS, concurrency=CONCURRENCY, check=check))


def test_api_under_load(api):
    rng = random.Random(7)
    tokens: dict[int, str] = {}
    results = {}
    print(f"\nbench: {SIZES}, {REQUESTS} requests per call, concurrency {CONCURRENCY}, {WORKERS} api workers")
    print(f"{'call':<26}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'req/s':>9}{'api CPU ms/req':>16}")
    for name, path_for in _calls(rng).items():
        # The CPU of the api's processes over the warm-up and the measured requests, per request.
        cpu = cpu_seconds(api.pids())
        latencies, elapsed = _drive(api.url, path_for, tokens, rng)
        cpu_ms = (cpu_seconds(api.pids()) - cpu) * 1000 / (len(latencies) + WARMUP)
        q = statistics.quantiles(latencies, n=100)
        results[name] = (q[49], q[94], q[98], len(latencies) / elapsed)
        p50, p95, p99, rps = results[name]
        print(f"{name:<26}{p50:>9.1f}{p95:>9.1f}{p99:>9.1f}{rps:>9.0f}{cpu_ms:>16.3f}")
    slow = {name: round(r[1], 1) for name, r in results.items() if r[1] > P95_BUDGET_MS}
    assert not slow, f"p95 above {P95_BUDGET_MS} ms: {slow}"
