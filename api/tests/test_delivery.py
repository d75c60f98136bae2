"""Delivery guarantees on the api side: attempts and replays in the history, a supervised consumer."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import nats
import pytest

from konnectz_api.services.supervisor import Supervised
from konnectz_contracts.events import (
    KV_KONNECTS,
    STREAM_RUNS,
    RunRequest,
    TaskEvent,
    event_subject,
    konnect_key,
    msg_id_headers,
    run_subject,
)
from konnectz_contracts.spec import FlowSpec


def _publish(nats_url: str, event: TaskEvent) -> None:
    async def run() -> None:
        nc = await nats.connect(nats_url)
        await nc.jetstream().publish(
            event_subject(event.konnect_id), event.model_dump_json().encode(), headers=msg_id_headers(event.run_id)
        )
        await nc.close()

    asyncio.run(run())


def _last_run(nats_url: str, konnect_id: int) -> RunRequest:
    async def run() -> RunRequest:
        nc = await nats.connect(nats_url)
        try:
            msg = await nc.jetstream().get_last_msg(STREAM_RUNS, run_subject(konnect_id))
            return RunRequest.model_validate_json(msg.data)
        finally:
            await nc.close()

    return asyncio.run(run())


def _event(konnect_id: int, owner_id: int, status: str = "ERROR", **extra: Any) -> TaskEvent:
    now = datetime.now(UTC)
    step = {
        "step_id": "node-2",
        "name": "API Call",
        "app": "api_call",
        "status": status,
        "started_at": now,
        "finished_at": now,
        "input": {"url": "https://api.example.com/orders"},
        "output": None if status == "ERROR" else {"status": 201},
        "error": "HTTP 500 from https://api.example.com/orders" if status == "ERROR" else None,
    }
    return TaskEvent.model_validate(
        {
            "run_id": uuid.uuid4().hex,
            "konnect_id": konnect_id,
            "owner_id": owner_id,
            "konnect_name": "My flow",
            "status": status,
            "started_at": now,
            "finished_at": now,
            "trigger_id": "node-1",
            "trigger_output": {"order": {"id": 7}, "name": "Ada"},
            "steps": [step],
            **extra,
        }
    )


def _logs(client, headers, konnect_id: int, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 15
    logs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        logs = client.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
        if len(logs) >= count:
            return logs
        time.sleep(0.1)
    raise AssertionError(f"{count} task logs expected, found {len(logs)}")


def _published_owner(nats_url: str, konnect_id: int) -> int:
    async def run() -> int:
        nc = await nats.connect(nats_url)
        try:
            entry = await (await nc.jetstream().key_value(KV_KONNECTS)).get(konnect_key(konnect_id))
            assert entry.value is not None
            return FlowSpec.model_validate_json(entry.value).owner_id
        finally:
            await nc.close()

    return asyncio.run(run())


def _published(client, api, nats_server_url: str) -> tuple[dict[str, str], int, int]:
    headers = api.new_user()
    reply = api.save_konnect(headers, api.canvas(), publish=True)
    assert reply.status_code == 200, reply.text
    konnect_id = int(reply.json()["konnect_id"])
    r = client.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Published"}, headers=headers)
    assert r.status_code == 200, r.text
    return headers, konnect_id, _published_owner(nats_server_url, konnect_id)


def test_replay_of_a_failed_run_starts_one_linked_run(client, api, nats_server):
    headers, konnect_id, owner_id = _published(client, api, nats_server.admin_url)
    failed = _event(konnect_id, owner_id, attempts=3)
    _publish(nats_server.admin_url, failed)
    [log] = _logs(client, headers, konnect_id, 1)
    assert log["status"] == "ERROR" and log["attempts"] == 3 and log["run_id"] == failed.run_id
    assert log["replay_of"] is None

    reply = client.post(f"/api/v1/task_logs/{log['id']}/replay", headers=headers)
    assert reply.status_code == 202, reply.text
    body = reply.json()
    assert body["replay_of"] == failed.run_id and body["run_id"] != failed.run_id
    run = _last_run(nats_server.admin_url, konnect_id)
    assert run.run_id == body["run_id"] and run.replay_of == failed.run_id
    assert run.trigger_output == {"order": {"id": 7}, "name": "Ada"}  # the same accepted request

    # The runner's event for the replay carries the link into the history.
    _publish(nats_server.admin_url, _event(konnect_id, owner_id, "SUCCESS", replay_of=failed.run_id) .model_copy(
        update={"run_id": body["run_id"]}
    ))  # fmt: skip
    logs = _logs(client, headers, konnect_id, 2)
    replayed = next(item for item in logs if item["run_id"] == body["run_id"])
    assert replayed["replay_of"] == failed.run_id and replayed["status"] == "SUCCESS"

    # Only failed runs; only the owner; not beyond 64 bits.
    assert client.post(f"/api/v1/task_logs/{replayed['id']}/replay", headers=headers).status_code == 409
    other = api.new_user()
    assert client.post(f"/api/v1/task_logs/{log['id']}/replay", headers=other).status_code == 404
    assert client.post(f"/api/v1/task_logs/{2**64}/replay", headers=headers).status_code in (404, 422)
    assert client.post(f"/api/v1/task_logs/{log['id']}/replay").status_code == 401
    # A withdrawn flow is not replayed.
    r = client.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200
    refused = client.post(f"/api/v1/task_logs/{log['id']}/replay?again=true", headers=headers)
    assert refused.status_code == 409 and refused.json()["message"] == "Publish the flow again to replay its runs"


def _runs_stored(nats_url: str, konnect_id: int) -> int:
    async def run() -> int:
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream().stream_info(STREAM_RUNS, subjects_filter=run_subject(konnect_id))
            return int((info.state.subjects or {}).get(run_subject(konnect_id), 0))
        finally:
            await nc.close()

    return asyncio.run(run())


def test_a_run_is_replayed_once_unless_a_new_replay_is_asked_for(client, api, nats_server):
    from concurrent.futures import ThreadPoolExecutor

    headers, konnect_id, owner_id = _published(client, api, nats_server.admin_url)
    failed = _event(konnect_id, owner_id)
    _publish(nats_server.admin_url, failed)
    [log] = _logs(client, headers, konnect_id, 1)
    url = f"/api/v1/task_logs/{log['id']}/replay"
    before = _runs_stored(nats_server.admin_url, konnect_id)

    # Four replays at once (a double click, two tabs): one run stored, all answer it.
    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(lambda _: client.post(url, headers=headers), range(4)))
    assert all(r.status_code in (200, 202) for r in replies), [r.text for r in replies]
    run_ids = {r.json()["run_id"] for r in replies}
    assert len(run_ids) == 1, run_ids
    (first,) = run_ids
    assert _runs_stored(nats_server.admin_url, konnect_id) == before + 1

    # Later: the first replay's run again, nothing started, said so.
    again = client.post(url, headers=headers)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["run_id"] == first and again.json()["already_replayed"] is True
    assert again.json()["replay_of"] == failed.run_id
    assert _runs_stored(nats_server.admin_url, konnect_id) == before + 1
    # The history links both ways: the first run names its replay, the replay its origin.
    _publish(
        nats_server.admin_url,
        _event(konnect_id, owner_id, replay_of=failed.run_id).model_copy(update={"run_id": first}),
    )
    logs = {item["run_id"]: item for item in _logs(client, headers, konnect_id, 2)}
    assert logs[failed.run_id]["replayed_as"] == first and logs[first]["replay_of"] == failed.run_id

    # A replay of the replay starts nothing unless asked for: 409 with its id and its origin.
    refused = client.post(f"/api/v1/task_logs/{logs[first]['id']}/replay", headers=headers)
    assert refused.status_code == 409, refused.text
    assert refused.json()["run_id"] == first and refused.json()["replay_of"] == failed.run_id
    assert "again=true" in refused.json()["message"]
    assert _runs_stored(nats_server.admin_url, konnect_id) == before + 1

    # Asked for explicitly: one new run each time, linked to the same origin.
    fresh = client.post(f"{url}?again=true", headers=headers)
    assert fresh.status_code == 202 and fresh.json()["run_id"] not in (first, failed.run_id)
    assert fresh.json()["already_replayed"] is False
    assert _runs_stored(nats_server.admin_url, konnect_id) == before + 2
    assert client.post(url, headers=headers).json()["run_id"] == fresh.json()["run_id"]
    assert _last_run(nats_server.admin_url, konnect_id).replay_of == failed.run_id


def _an_old_and_a_recent_run(client, api, nats_server):
    """A published flow with two runs, the first finished 31 days ago: (headers, konnect_id, task logs
    by run id, the old event, the recent one)."""
    from datetime import timedelta

    from sqlalchemy import update

    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import TaskLog

    headers, konnect_id, owner_id = _published(client, api, nats_server.admin_url)
    old, recent = _event(konnect_id, owner_id), _event(konnect_id, owner_id)
    _publish(nats_server.admin_url, old)
    _publish(nats_server.admin_url, recent)
    logs = {row["run_id"]: row for row in _logs(client, headers, konnect_id, 2)}
    with get_sessionmaker()() as s:
        s.execute(
            update(TaskLog).where(TaskLog.run_id == old.run_id).values(task_date=datetime.now(UTC) - timedelta(days=31))
        )
        s.commit()
    return headers, konnect_id, logs, old, recent


def test_accepted_requests_are_kept_for_the_retention_period_then_purged(client, api, nats_server):
    from konnectz_api.crud import requests
    from konnectz_api.db import get_sessionmaker

    headers, konnect_id, logs, old, recent = _an_old_and_a_recent_run(client, api, nats_server)
    with get_sessionmaker()() as s:
        # (The job starts from the first task log; here from this test's, the session's database is shared.)
        start = logs[old.run_id]["id"] - 1
        assert requests.purge(s, older_than_days=0, cursor=requests.PurgeCursor(start)) == 0  # 0 keeps them
        cursor = requests.PurgeCursor(start)
        assert requests.purge(s, older_than_days=30, cursor=cursor) == 1
        assert cursor.after_id == logs[old.run_id]["id"]  # stopped at the first run younger than that
        assert requests.purge(s, older_than_days=30, cursor=cursor) == 0  # the next pass reads on from there
        assert requests.purge(s, older_than_days=30, cursor=requests.PurgeCursor(start)) == 0  # purged once only
    after = {row["run_id"]: row for row in _logs(client, headers, konnect_id, 2)}
    # The task log stays (status, steps); only the request is gone, and the log says why.
    assert after[old.run_id]["status"] == "ERROR"
    assert after[old.run_id]["data"]["node-1"] == {
        "request": "purged",
        "message": "The request was deleted after the retention period (30 days).",
    }
    assert after[old.run_id]["data"]["node-2"] == logs[old.run_id]["data"]["node-2"]
    assert after[recent.run_id]["data"]["node-1"] == {"order": {"id": 7}, "name": "Ada"}
    refused = client.post(f"/api/v1/task_logs/{after[old.run_id]['id']}/replay", headers=headers)
    assert refused.status_code == 409
    assert refused.json()["message"] == (
        "The request of this run was deleted after the retention period (30 days): it cannot be replayed"
    )
    assert client.post(f"/api/v1/task_logs/{after[recent.run_id]['id']}/replay", headers=headers).status_code == 202


def test_the_retention_job_keeps_its_place_in_the_database_and_runs_in_one_process(client, api, nats_server):
    from sqlalchemy import select
    from sqlalchemy.dialects.postgresql import insert as pg_insert

    from konnectz_api.crud import requests
    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import RetentionCursor

    headers, konnect_id, logs, old, recent = _an_old_and_a_recent_run(client, api, nats_server)
    sessions = get_sessionmaker()
    start = logs[old.run_id]["id"] - 1
    with sessions() as s:
        s.execute(
            pg_insert(RetentionCursor)
            .values(job=requests.JOB, after_id=start)
            .on_conflict_do_update(index_elements=["job"], set_={"after_id": start})
        )
        s.commit()

    def where() -> int:
        with sessions() as s:
            return s.execute(select(RetentionCursor.after_id).where(RetentionCursor.job == requests.JOB)).scalar_one()

    # While another api process holds the cursor, a pass ends at once: nothing purged, nothing moved.
    with sessions() as holder:
        holder.execute(select(RetentionCursor).where(RetentionCursor.job == requests.JOB).with_for_update()).one()
        assert requests.purge_shared(sessions, older_than_days=30, pause=0) == 0
        holder.rollback()
    assert where() == start
    assert requests.purge_shared(sessions, older_than_days=30, pause=0) == 1
    assert where() == logs[old.run_id]["id"]  # kept in the database: a restarted api reads on from there
    assert requests.purge_shared(sessions, older_than_days=30, pause=0) == 0
    after = {row["run_id"]: row for row in _logs(client, headers, konnect_id, 2)}
    assert requests.is_purged(after[old.run_id]["data"]["node-1"])
    assert after[recent.run_id]["data"]["node-1"] == {"order": {"id": 7}, "name": "Ada"}


def test_a_run_no_runner_could_load_is_logged_for_the_konnect_owner(client, api, nats_server):
    headers, konnect_id, _owner = _published(client, api, nats_server.admin_url)
    reason = f"The run was not executed: konnect {konnect_id} was not loaded on any runner after 10 attempts"
    event = _event(konnect_id, 0, refused=reason, attempts=10)
    _publish(nats_server.admin_url, event)
    [log] = _logs(client, headers, konnect_id, 1)
    assert log["status"] == "REFUSED" and log["attempts"] == 10
    tasks = client.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
    assert tasks[0]["data"]["error"].startswith("HTTP 500")


def test_a_runs_steps_carry_their_app_and_duration(client, api, nats_server):
    """The task log reads like the flow: each step's app (id and provider from the canvas), when it
    started and how long it took; the reply names the trigger too."""
    headers, konnect_id, owner_id = _published(client, api, nats_server.admin_url)
    event = _event(konnect_id, owner_id, "SUCCESS")
    step = event.steps[0]
    slow = step.model_copy(update={"started_at": step.finished_at - timedelta(milliseconds=1500)})
    _publish(nats_server.admin_url, event.model_copy(update={"steps": [slow]}))
    [log] = _logs(client, headers, konnect_id, 1)
    reply = client.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()
    [task] = reply["tasks"]
    assert task["app_name"] == "API Call" and task["provider"] == "api" and task["app_id"] == 2
    assert task["duration_ms"] == 1500 and task["started_at"] is not None
    assert task["data"]["output"] == {"status": 201}
    assert reply["trigger"] == {"step_id": "node-1", "app_name": "Webhook", "app_id": 1, "provider": "webhook"}


def test_healthz_reports_a_crashed_consumer(client):
    async def crash() -> None:
        raise RuntimeError("boom")

    supervised: list[Supervised] = client.app.state.supervised
    assert [s.name for s in supervised] == [
        "task-event consumer",
        "quota service",
        "flow call service",
        "retention purge",
        "failure digests",
    ]
    assert all(s.state == "running" for s in supervised)
    real = supervised[0]
    broken = Supervised("task-event consumer", crash, min_backoff=60)
    broken.state, broken.last_error = "restarting", "RuntimeError: boom"
    supervised[0] = broken
    try:
        reply = client.get("/healthz")
        assert reply.status_code == 503
        assert reply.json()["problems"] == {"task-event consumer": "task-event consumer restarting: RuntimeError: boom"}
    finally:
        supervised[0] = real
    assert client.get("/healthz").status_code == 200


async def test_supervised_restarts_a_crashed_task_with_backoff(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[float] = []
    release = asyncio.Event()
    third = asyncio.Event()

    async def flaky() -> None:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) == 3:
            third.set()
        if len(calls) <= 2:
            raise ConnectionError("database gone")
        await release.wait()

    task = Supervised("task-event consumer", flaky, min_backoff=0.1, max_backoff=1)
    task.start()
    await asyncio.wait_for(third.wait(), 5)
    await asyncio.sleep(0.01)
    assert task.state == "running" and task.restarts == 2 and task.problem() is None
    assert calls[1] - calls[0] >= 0.1 and calls[2] - calls[1] >= 0.2  # the backoff doubles
    crashes = [r.getMessage() for r in caplog.records if "restarting in" in r.getMessage()]
    assert crashes == [
        "task-event consumer stopped (ConnectionError: database gone); restarting in 0.1 s",
        "task-event consumer stopped (ConnectionError: database gone); restarting in 0.2 s",
    ]
    await task.stop(within=2)
    assert task.state == "stopped"


def test_shutdown_after_storing_task_events_ends_within_10_s(client, api, nats_server):
    """The NATS drain is bounded: an api that stored task events stops in seconds, not when killed."""
    from fastapi.testclient import TestClient

    from konnectz_api.main import create_app

    headers, konnect_id, owner_id = _published(client, api, nats_server.admin_url)
    second = TestClient(create_app())
    second.__enter__()
    try:
        assert second.get("/healthz").status_code in (200, 503)
        for _ in range(20):
            _publish(nats_server.admin_url, _event(konnect_id, owner_id, "SUCCESS"))
        _logs(client, headers, konnect_id, 20)
    finally:
        started = time.monotonic()
        second.__exit__(None, None, None)
        assert time.monotonic() - started < 10
