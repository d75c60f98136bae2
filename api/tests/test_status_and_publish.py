"""True statuses of task logs (FILTERED, IN_DOUBT, REFUSED) and the no-accidental-unpublish rules."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import nats
import pytest

from konnectz_api.compile.live_trigger import describe_schedule, live_trigger
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Konnect
from konnectz_api.services.task_events import store_event
from konnectz_api.task_status import log_status
from konnectz_contracts.events import KV_KONNECTS, TaskEvent, konnect_key
from konnectz_runner.engine import IN_DOUBT_ERROR


def _step(step_id: str, **extra: Any) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    base = {"step_id": step_id, "name": step_id, "app": "api_call", "status": "SUCCESS", "started_at": now,
            "finished_at": now, "input": {}, "output": {"ok": True}}  # fmt: skip
    return {**base, **extra}


def _event(konnect_id: int, owner_id: int, status: str, steps: list[dict[str, Any]], **extra: Any) -> TaskEvent:
    now = datetime.now(UTC).isoformat()
    return TaskEvent.model_validate(
        {
            "run_id": uuid.uuid4().hex,
            "konnect_id": konnect_id,
            "owner_id": owner_id,
            "konnect_name": "f",
            "status": status,
            "started_at": now,
            "finished_at": now,
            "trigger_id": "node-1",
            "trigger_output": {"name": "Ada"},
            "steps": steps,
            **extra,
        }
    )


FILTER_STOP = {"app": "filter", "output": None, "stop": "amount is not greater than 10"}


def test_log_status_tells_the_outcomes_apart() -> None:
    assert log_status(_event(1, 1, "SUCCESS", [_step("node-2")])) == "SUCCESS"
    assert log_status(_event(1, 1, "SUCCESS", [_step("node-2", **FILTER_STOP)])) == "FILTERED"
    # After an iterator: FILTERED only when every item stopped at the filter.
    some = [_step("node-3", item_index=0, **FILTER_STOP), _step("node-3", item_index=1), _step("node-4", item_index=1)]
    assert log_status(_event(1, 1, "SUCCESS", some)) == "SUCCESS"
    every = [_step("node-3", item_index=0, **FILTER_STOP), _step("node-3", item_index=1, **FILTER_STOP)]
    assert log_status(_event(1, 1, "SUCCESS", every)) == "FILTERED"
    assert log_status(_event(1, 1, "ERROR", [_step("node-2", status="ERROR", error="boom")])) == "ERROR"
    doubt = [_step("node-2", status="ERROR", error=IN_DOUBT_ERROR, output=None)]
    assert log_status(_event(1, 1, "ERROR", doubt)) == "IN_DOUBT"
    refused = [_step("node-2", status="ERROR", error="No tasks left")]
    assert log_status(_event(1, 1, "ERROR", refused, refused="No tasks left")) == "REFUSED"


def test_live_trigger_in_words() -> None:
    every = {"schedule_type": "AtRegularIntervals", "every": 5, "time_span": "Minutes", "start": "2026-06-01T10:23"}
    assert describe_schedule(every, "Europe/Berlin") == "Every 5 minutes from 2026-06-01 10:23 (Europe/Berlin)"
    assert live_trigger(
        {"kind": "schedule", "schedule": {"schedule_type": "Everyday", "schedule_time": "09:30"}, "timezone": "UTC"}
    ) == ("schedule", "Every day at 09:30 (UTC)")
    assert live_trigger({"kind": "webhook", "token": "t"}) == ("webhook", None)
    assert live_trigger(None) == (None, None)


def _publish(client, api, headers) -> dict[str, Any]:
    konnect_id = api.test_trigger(headers, api.canvas())
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": api.canvas()},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_statuses_are_stored_filtered_and_counted(client, api) -> None:
    headers = api.new_user()
    published = _publish(client, api, headers)
    konnect_id = published["konnect_id"]
    with get_sessionmaker()() as session:
        owner = session.get(Konnect, konnect_id).owner_id  # type: ignore[union-attr]
    runs = {
        "SUCCESS": _event(konnect_id, owner, "SUCCESS", [_step("node-2")]),
        "FILTERED": _event(konnect_id, owner, "SUCCESS", [_step("node-2", **FILTER_STOP)]),
        "ERROR": _event(konnect_id, owner, "ERROR", [_step("node-2", status="ERROR", error="boom")]),
        "IN_DOUBT": _event(konnect_id, owner, "ERROR", [_step("node-2", status="ERROR", error=IN_DOUBT_ERROR)]),
    }
    with get_sessionmaker()() as session:
        for event in runs.values():
            assert store_event(session, event)

    def logs(kind: str | None = None) -> list[dict[str, Any]]:
        query = f"konnect_id={konnect_id}" + (f"&task_log_type={kind}" if kind else "")
        r = client.get(f"/api/v1/task_logs/logs?{query}", headers=headers)
        assert r.status_code == 200, r.text
        return r.json()["task_logs"]

    assert sorted(log["status"] for log in logs()) == ["ERROR", "FILTERED", "IN_DOUBT", "SUCCESS"]
    assert [log["status"] for log in logs("SUCCESS")] == ["SUCCESS"]
    assert [log["status"] for log in logs("FILTERED")] == ["FILTERED"]
    assert sorted(log["status"] for log in logs("ERROR")) == ["ERROR", "IN_DOUBT"]  # every failed run, as before
    assert [log["status"] for log in logs("IN_DOUBT")] == ["IN_DOUBT"]
    assert client.get("/api/v1/task_logs/logs?task_log_type=STOPPED", headers=headers).status_code == 422

    # The filter stop is kept in the step's task data.
    filtered = logs("FILTERED")[0]
    [task] = client.get(f"/api/v1/task_logs/{filtered['id']}/tasks", headers=headers).json()["tasks"]
    assert task["data"]["stop"] == "amount is not greater than 10"

    # Counts in the flows list, the folder list and the history; the history filters by status.
    [item] = client.get("/api/v1/konnects", headers=headers).json()["konnects"]
    assert (item["success_task_count"], item["error_task_count"], item["filtered_task_count"]) == (1, 2, 1)
    assert item["trigger_kind"] == "webhook" and item["schedule"] is None
    [history] = client.get("/api/v1/task_logs/konnects?status=FILTERED", headers=headers).json()["konnects"]
    assert history["filtered_task_count"] == 1
    assert client.get("/api/v1/task_logs/konnects?status=REFUSED", headers=headers).json()["konnects"] == []

    # An in-doubt run can be replayed like any failed run.
    doubt = logs("IN_DOUBT")[0]
    assert client.post(f"/api/v1/task_logs/{doubt['id']}/replay", headers=headers).status_code == 202
    assert client.post(f"/api/v1/task_logs/{filtered['id']}/replay", headers=headers).status_code == 409


def test_a_scheduler_flow_lists_its_schedule_not_a_url(client, api) -> None:
    headers = api.new_user()
    konnect_id = _publish(client, api, headers)["konnect_id"]
    schedule = {"schedule_type": "AtRegularIntervals", "every": 5, "time_span": "Minutes", "start": "2026-06-01T10:23"}
    with get_sessionmaker()() as session:  # the live version of a Scheduler flow (its trigger as compiled)
        konnect = session.get(Konnect, konnect_id)
        assert konnect is not None and konnect.published_spec is not None
        konnect.published_spec = {
            **konnect.published_spec,
            "trigger": {"kind": "schedule", "timezone": "Europe/Berlin", "schedule": schedule},
        }
        session.commit()
    [item] = client.get("/api/v1/konnects", headers=headers).json()["konnects"]
    assert item["trigger_kind"] == "schedule"
    assert item["schedule"] == "Every 5 minutes from 2026-06-01 10:23 (Europe/Berlin)"


def _live(nats_url: str, konnect_id: int) -> bool:
    async def run() -> bool:
        nc = await nats.connect(nats_url)
        try:
            kv = await nc.jetstream().key_value(KV_KONNECTS)
            try:
                return (await kv.get(konnect_key(konnect_id))).value is not None
            except Exception:
                return False
        finally:
            await nc.close()

    return asyncio.run(run())


def test_saving_a_live_flow_keeps_it_live_with_a_pending_draft(client, api, nats_server) -> None:
    headers = api.new_user()
    published = _publish(client, api, headers)
    konnect_id = published["konnect_id"]
    changed = api.canvas(url="https://api.example.com/v2/orders")
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": changed},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    saved = r.json()
    assert saved["konnect_status"] == "Published" and saved["draft_pending"] is True
    assert "live flow keeps running" in saved["message"]
    assert _live(nats_server.admin_url, konnect_id)
    # The live version is unchanged; the editor opens the saved changes and says they are pending.
    with get_sessionmaker()() as session:
        spec = session.get(Konnect, konnect_id).published_spec  # type: ignore[union-attr]
        assert spec is not None and spec["steps"][0]["url"] == "https://api.example.com/orders"
    edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
    assert edit["status"] == "Published" and edit["draft_pending"] is True
    assert edit["canvas_json"]["apps"][1]["data"]["app_detail"] is not None
    [item] = client.get("/api/v1/konnects", headers=headers).json()["konnects"]
    assert item["status"] == "Published" and item["draft_pending"] is True

    # Publish makes the changes live and clears the pending mark.
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": changed},
        headers=headers,
    )
    assert r.status_code == 200 and r.json()["draft_pending"] is False
    with get_sessionmaker()() as session:
        spec = session.get(Konnect, konnect_id).published_spec  # type: ignore[union-attr]
        assert spec is not None and spec["steps"][0]["url"] == "https://api.example.com/v2/orders"

    # Offline only by the explicit status change.
    r = client.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.json()["konnect_status"] == "Draft" and "withdrawn" in r.json()["details"]
    assert not _live(nats_server.admin_url, konnect_id)
    saved_draft = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": changed},
        headers=headers,
    ).json()
    assert saved_draft["konnect_status"] == "Draft" and saved_draft["draft_pending"] is False


@pytest.mark.parametrize("bad", ["", "javascript:"])
def test_a_failed_publish_of_a_live_flow_keeps_it_live_and_the_changes_pending(client, api, bad) -> None:
    headers = api.new_user()
    konnect_id = _publish(client, api, headers)["konnect_id"]
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": api.canvas(url=bad)},
        headers=headers,
    )
    assert r.status_code == 422
    edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
    assert edit["status"] == "Published" and edit["draft_pending"] is True
