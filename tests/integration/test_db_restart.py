"""A PostgreSQL restart under load costs at most a 503 with Retry-After while it is down, never a 500,
and nothing at all once it is back.

The platform as ``make dev`` runs it (its supervisor restarts a child that dies) with a user who has
flows, a folder and task logs. Readers call every list call of the pages (the async read pool's
routes and the sync engine's) in a loop while PostgreSQL is stopped without a checkpoint
(``pg_ctl -m immediate``, as a crash) and started again by the supervisor. Then each list call is read
once: every answer must be a 200 on the first try (the pools replaced their dead connections).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg
import pytest

from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import publish_canvas, sign_up, wait_until, webhook_canvas

pytestmark = pytest.mark.integration


def _list_calls(konnect_id: int, task_log_id: int) -> list[str]:
    return [
        "/api/v1/konnects?page_size=20&page_index=1",
        "/api/v1/folders/list",
        "/api/v1/dashboard/stats",
        "/api/v1/task_logs/konnects?page_size=30&page_index=1",
        f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=60&page_index=1",
        f"/api/v1/task_logs/{task_log_id}/tasks",
        f"/api/v1/konnects/{konnect_id}/edit",
        "/api/v1/users/profile",
        "/api/v1/users/usage",
        "/api/v1/apps?page_size=20",
        "/api/v1/members/audit_log",
    ]


def _pg_answers(dsn: str) -> bool:
    try:
        with psycopg.connect(dsn, connect_timeout=1) as db:
            db.execute("SELECT 1")
        return True
    except psycopg.OperationalError:
        return False


def test_a_postgres_restart_under_load_is_never_a_500() -> None:
    state = Path(tempfile.mkdtemp(prefix="konnectz-pgrestart-"))
    state.chmod(0o755)
    platform = make_platform(state)
    platform.start()
    supervisor = platform.supervisor(prefix="pgrestart")
    supervisor.start()
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up(api, "pgrestart@example.com", "correct horse battery")
        published = publish_canvas(api, headers, webhook_canvas(f"{platform.api_url}/healthz", name="Restart"))
        konnect_id, hook = published["konnect_id"], published["webhook_url"]
        assert api.post("/api/v1/folders/add", json={"folder_name": "Kept"}, headers=headers).status_code == 200
        wait_until(lambda: httpx.post(hook, json={"n": 1}).status_code == 200, what="the webhook is live")

        def first_log() -> int | None:
            logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
            return logs[0]["id"] if logs else None

        task_log_id = wait_until(first_log, what="a task log")
        calls = _list_calls(konnect_id, task_log_id)
        for path in calls:
            r = api.get(path, headers=headers)
            assert r.status_code == 200, (path, r.status_code, r.text)

        answers: Counter[tuple[int, bool]] = Counter()
        bad: list[str] = []
        stop = threading.Event()

        def read_forever(offset: int) -> None:
            with httpx.Client(base_url=platform.api_url, timeout=30) as reader:
                i = offset
                while not stop.is_set():
                    path = calls[i % len(calls)]
                    i += 1
                    try:
                        r = reader.get(path, headers=headers)
                    except httpx.TransportError:
                        continue
                    answers[(r.status_code, "retry-after" in r.headers)] += 1
                    if r.status_code >= 500 and not (r.status_code == 503 and "retry-after" in r.headers):
                        bad.append(f"{path}: {r.status_code} {r.text[:200]}")

        readers = [threading.Thread(target=read_forever, args=(n,), daemon=True) for n in range(4)]
        for t in readers:
            t.start()
        time.sleep(1.0)
        platform.postgres._run(["pg_ctl", "-D", str(platform.postgres.data_dir), "-m", "immediate", "stop"])
        down_at = time.monotonic()
        wait_until(lambda: _pg_answers(platform.postgres.dsn), timeout=60, what="PostgreSQL restarted")
        back_after = time.monotonic() - down_at
        time.sleep(1.0)  # the readers go on after the restart
        stop.set()
        for t in readers:
            t.join(35)

        # Once PostgreSQL is back, every list call answers on the first try.
        after = {path: api.get(path, headers=headers) for path in calls}
        print(f"\npostgres back after {back_after:.1f} s; answers (status, Retry-After) {dict(answers)}")
        assert bad == [], bad[:10]
        assert {p: r.status_code for p, r in after.items()} == dict.fromkeys(calls, 200), {
            p: r.text[:200] for p, r in after.items() if r.status_code != 200
        }
        assert sum(n for (status, _), n in answers.items() if status == 200) > len(calls)
        tracebacks = (state / "api.log").read_text(errors="replace").count("Traceback")
        assert tracebacks == 0, f"{tracebacks} tracebacks in the api log"
    finally:
        supervisor.stop()
        platform.stop()
        if not os.environ.get("KONNECTZ_KEEP_FAULT_STATE"):
            shutil.rmtree(state, ignore_errors=True)
