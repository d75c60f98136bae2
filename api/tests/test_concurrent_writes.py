"""Many writes at once from one account never freeze the api (issue 32).

The api runs as its own process (``konnectz_api serve``, as `make dev` runs it) on the tests'
PostgreSQL, with the loop guard raising, a 2 s ``lock_timeout`` and at most 8 writes of one account
at once. Each test drives it with many concurrent calls and watches ``/healthz`` meanwhile:

- four "new folder" calls and four Test & Review calls of new flows (``konnect_id`` null), from one
  account, twice over: the case that froze the api. Every call is answered (2xx, or a 4xx/503 that
  says why), the plan's caps hold exactly, ``/healthz`` answers throughout, and no transaction is
  left idle;
- the owner's row locked from outside: a creation waits at most ``lock_timeout`` and is a 503 with
  ``Retry-After`` that leaves no row behind, a flood from that account beyond its concurrent writes
  is a 429 with ``Retry-After``, and another account's calls are served meanwhile.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import func, insert, select

from konnectz_api.crud.quota import PLANS
from konnectz_api.db import get_sessionmaker, libpq_url
from konnectz_api.errors import BUSY
from konnectz_api.models import Folder, Konnect, User
from konnectz_devstack.testing import served_api, wait_until

LOCK_TIMEOUT_MS = 2000
ACCOUNT_WRITES = 8


@dataclass
class Served:
    base: str
    log: Path
    proc: subprocess.Popen[bytes]


@pytest.fixture(scope="module")
def served(api_env, client, tmp_path_factory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("served-api") / "api.log"
    env = {
        **api_env,
        "KONNECTZ_LOOP_GUARD": "raise",
        "KONNECTZ_DB_LOCK_TIMEOUT_MS": str(LOCK_TIMEOUT_MS),
        "KONNECTZ_ACCOUNT_CONCURRENT_WRITES": str(ACCOUNT_WRITES),
    }
    with served_api(env, log) as (base, proc):
        yield Served(base, log, proc)
    text = log.read_text(errors="replace")
    assert "BlockingOnLoop" not in text and "Traceback" not in text, text[-4000:]


def _owner(api) -> tuple[dict[str, str], int]:
    email = api.signup_and_verify()
    headers = api.login(email)
    with get_sessionmaker()() as s:
        owner_id = s.scalar(select(User.id).where(User.email == email))
    return headers, int(owner_id)


def _fill(owner_id: int, canvas: dict[str, Any], *, folders: int, konnects: int) -> None:
    with get_sessionmaker()() as s:
        s.execute(insert(Folder), [{"owner_id": owner_id, "name": f"f{i}"} for i in range(folders)])
        rows = [
            {"owner_id": owner_id, "status": "Draft", "canvas_json": canvas, "webhook_token": f"c{owner_id}x{i}" * 3,
             "konnect_name": f"k{i}"}
            for i in range(konnects)
        ]  # fmt: skip
        s.execute(insert(Konnect), rows)
        s.commit()


def _counts(owner_id: int) -> tuple[int, int]:
    with get_sessionmaker()() as s:
        folders = s.scalar(select(func.count()).select_from(Folder).where(Folder.owner_id == owner_id))
        konnects = s.scalar(
            select(func.count()).select_from(Konnect).where(Konnect.owner_id == owner_id, Konnect.status != "DELETED")
        )
    return int(folders or 0), int(konnects or 0)


@dataclass
class Prober:
    """``/healthz`` every 50 ms while the load runs: each answer's status and seconds."""

    base: str
    answers: list[tuple[int, float]] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=10) as http:
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    status = (await http.get("/healthz")).status_code
                except httpx.TransportError:
                    status = 0
                self.answers.append((status, time.perf_counter() - started))
                await asyncio.sleep(0.05)

    def check(self) -> None:
        assert self.answers, "the prober got no answer"
        failed = [a for a in self.answers if a[0] != 200]
        assert not failed, f"/healthz failed during the load: {failed[:5]}"
        slowest = max(seconds for _status, seconds in self.answers)
        # A frozen api never answers (the prober's timeout is 10 s); a served one within milliseconds.
        assert slowest < 3, f"/healthz took {slowest:.2f} s during the load"


async def _call(
    http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any], *, retries: int = 20
) -> list[httpx.Response]:
    """The call, again after Retry-After while it is a 429 or 503 (as a client should); every reply."""
    replies = []
    for _ in range(retries):
        reply = await http.request(method, path, json=body)
        replies.append(reply)
        if reply.status_code not in (429, 503):
            break
        assert reply.headers.get("retry-after", "").isdigit(), reply.headers
        await asyncio.sleep(min(float(reply.headers["retry-after"]), 1.0))
    return replies


def _idle_in_transaction(database_url: str) -> int:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def test_concurrent_creations_and_tests_from_one_account_hold_the_caps_and_never_freeze(served, api, api_env):
    headers, owner_id = _owner(api)
    canvas = api.canvas()
    free = PLANS["Free"]
    _fill(owner_id, canvas, folders=free.folders - 3, konnects=free.konnects - 3)
    trigger_test = {"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas}

    async def load() -> tuple[list[list[httpx.Response]], Prober]:
        prober = Prober(served.base)
        stop = asyncio.Event()
        probing = asyncio.create_task(prober.run(stop))
        async with httpx.AsyncClient(base_url=served.base, headers=headers, timeout=60) as http:
            calls = []
            for round_ in range(2):
                calls += [
                    _call(http, "POST", "/api/v1/folders/add", {"folder_name": f"r{round_}-{i}"}) for i in range(4)
                ]
                calls += [_call(http, "POST", "/api/v1/konnects/test_and_review", trigger_test) for _ in range(4)]
            results = await asyncio.gather(*calls)
        stop.set()
        await probing
        return results, prober

    results, prober = asyncio.run(load())
    finals = [replies[-1] for replies in results]
    for replies in results:
        for reply in replies:
            assert reply.status_code in (200, 403, 429, 503), reply.text
            assert reply.status_code == 200 or reply.json()["message"], reply.text
    assert all(r.status_code in (200, 403) for r in finals), [(r.status_code, r.text) for r in finals]
    folder_adds, trigger_tests = finals[:4] + finals[8:12], finals[4:8] + finals[12:]
    assert sum(r.status_code == 200 for r in folder_adds) == 3
    assert sum(r.status_code == 200 for r in trigger_tests) == 3
    assert all(r.json().get("key") == "PLAN_LIMIT" for r in folder_adds + trigger_tests if r.status_code == 403)
    assert _counts(owner_id) == (free.folders, free.konnects)  # the caps held exactly
    prober.check()
    wait_until(lambda: _idle_in_transaction(api_env["KONNECTZ_DATABASE_URL"]) == 0, timeout=10, what="no idle tx")


def test_a_locked_owner_row_is_a_503_that_leaves_nothing_a_flood_a_429_and_other_accounts_are_served(
    served, api, api_env
):
    headers, owner_id = _owner(api)
    other, _other_id = _owner(api)
    outside = psycopg.connect(libpq_url(api_env["KONNECTZ_DATABASE_URL"]))
    try:
        # Someone else holds the owner's row (a long migration, a stuck session): nothing can wait for ever.
        outside.execute("SELECT id FROM users WHERE id = %s FOR UPDATE", (owner_id,))

        async def load() -> tuple[list[httpx.Response], list[httpx.Response], float, Prober]:
            prober = Prober(served.base)
            stop = asyncio.Event()
            probing = asyncio.create_task(prober.run(stop))
            async with (
                httpx.AsyncClient(base_url=served.base, headers=headers, timeout=60) as hot,
                httpx.AsyncClient(base_url=served.base, headers=other, timeout=60) as calm,
            ):
                flood = [
                    hot.post("/api/v1/folders/add", json={"folder_name": f"flood-{i}"})
                    for i in range(3 * ACCOUNT_WRITES)
                ]
                flooding = asyncio.gather(*flood)
                await asyncio.sleep(0.2)
                served_meanwhile, calm_seconds = [], 0.0
                for i in range(3):
                    started = time.perf_counter()
                    served_meanwhile.append(await calm.post("/api/v1/folders/add", json={"folder_name": f"calm-{i}"}))
                    calm_seconds = max(calm_seconds, time.perf_counter() - started)
                replies = await flooding
            stop.set()
            await probing
            return replies, served_meanwhile, calm_seconds, prober

        replies, calm_replies, calm_seconds, prober = asyncio.run(load())
    finally:
        outside.rollback()
        outside.close()
    statuses = sorted(r.status_code for r in replies)
    busy = [r for r in replies if r.status_code == 503]
    flooded = [r for r in replies if r.status_code == 429]
    assert set(statuses) <= {429, 503}, statuses  # nothing could be created while the row was held
    assert busy and all(r.json()["message"] == BUSY and r.headers["retry-after"] == "1" for r in busy)
    # At most ACCOUNT_WRITES waited for the lock at once; the rest were refused without waiting.
    assert flooded and len(busy) + len(flooded) == 3 * ACCOUNT_WRITES, statuses
    assert all(r.headers["retry-after"] == "1" and "at once" in r.json()["message"] for r in flooded)
    assert [r.status_code for r in calm_replies] == [200, 200, 200]
    # Waiting for the hot account's lock would take lock_timeout per call; each took a fraction of it.
    assert calm_seconds < LOCK_TIMEOUT_MS / 1000, f"another account's call took {calm_seconds:.2f} s"
    prober.check()
    assert _counts(owner_id)[0] == 0  # a refused or timed-out creation leaves no row behind
    log = served.log.read_text(errors="replace")
    assert "a row lock was not granted within lock_timeout" in log
    # Once the row is free, the same call succeeds.
    with httpx.Client(base_url=served.base, headers=headers, timeout=30) as http:
        assert http.post("/api/v1/folders/add", json={"folder_name": "after"}).status_code == 200
    wait_until(lambda: _idle_in_transaction(api_env["KONNECTZ_DATABASE_URL"]) == 0, timeout=10, what="no idle tx")


def test_every_api_connection_has_its_wait_bounds(client):
    from konnectz_api.core.config import get_settings
    from konnectz_api.db import get_engine

    settings = get_settings()
    with get_engine().connect() as conn:
        shown = {
            name: conn.exec_driver_sql(f"SHOW {name}").scalar()
            for name in ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
        }
    assert shown == {
        "lock_timeout": f"{settings.db_lock_timeout_ms // 1000}s",
        "statement_timeout": f"{settings.db_statement_timeout_ms // 1000}s",
        "idle_in_transaction_session_timeout": f"{settings.db_idle_in_transaction_timeout_ms // 1000}s",
    }
    assert get_engine().pool.timeout() == settings.db_pool_timeout_seconds  # type: ignore[attr-defined]
