import asyncio
import json
import uuid
from datetime import UTC, datetime

import nats
import pytest

from konnectz_contracts.events import KV_KONNECTS, TaskEvent, event_subject, konnect_key, msg_id_headers
from konnectz_contracts.spec import FlowSpec


def _test_trigger(client, headers, canvas) -> int:
    r = client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()["konnect_id"]


def _save(client, headers, canvas, konnect_id=None, endpoint="save_konnect", canvas_name=True, test_trigger=True):
    """Save like the editor: a new flow's trigger is tested first (that creates its konnect_id)."""
    if konnect_id is None and test_trigger:
        konnect_id = _test_trigger(client, headers, canvas)
    return client.post(
        f"/api/v1/konnects/{endpoint}",
        json={"konnect_id": konnect_id, "canvas_name": canvas_name, "canvas_json": canvas, "publish": False},
        headers=headers,
    )


def _kv_get(nats_url: str, konnect_id: int) -> bytes | None:
    async def run():
        nc = await nats.connect(nats_url)
        try:
            kv = await nc.jetstream().key_value(KV_KONNECTS)
            try:
                return (await kv.get(konnect_key(konnect_id))).value
            except Exception:
                return None
        finally:
            await nc.close()

    return asyncio.run(run())


def test_save_requires_a_trigger(client, api):
    headers = api.new_user()
    canvas = api.canvas()
    r = _save(client, headers, canvas, test_trigger=False)
    assert r.status_code == 422 and r.json()["message"] == "Trigger not chosen"
    konnect_id = _test_trigger(client, headers, canvas)
    canvas["apps"] = canvas["apps"][1:]
    r = _save(client, headers, canvas, konnect_id=konnect_id)
    assert r.status_code == 422 and r.json()["message"] == "Trigger not chosen"
    # a trigger node whose test was deleted (alone on the canvas) is not a tested trigger
    alone = {**api.canvas(), "apps": api.canvas()["apps"][:1], "links": []}
    r = client.post(
        "/api/v1//konnects/delete_activity",
        json={"konnect_id": konnect_id, "nodeId": "node-1", "canvas_json": alone},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    r = _save(client, headers, api.canvas(), konnect_id=konnect_id)
    assert r.status_code == 422 and r.json()["message"] == "Trigger not chosen"


def test_save_list_edit_and_owner_scoping(client, api):
    headers = api.new_user()
    r = _save(client, headers, api.canvas(name="Orders to CRM"))
    assert r.status_code == 200, r.text
    saved = r.json()
    assert saved["status"] == "SUCCESS" and saved["konnect_status"] == "Draft"
    assert saved["webhook_url"].startswith("http://hooks.test/hooks/")
    assert len(saved["webhook_url"].rsplit("/", 1)[1]) >= 40  # unguessable token

    listing = client.get("/api/v1/konnects?page_size=20&page_index=1", headers=headers).json()
    assert listing["total_konnects"] == 1
    item = listing["konnects"][0]
    assert item["konnect_name"] == "Orders to CRM" and item["status"] == "Draft"
    assert item["left_app"] == {"name": "Webhook"} and item["right_apps"] == [{"app_name": "API Call"}]

    edit = client.get(f"/api/v1/konnects/{saved['konnect_id']}/edit", headers=headers).json()
    assert edit["canvas_json"]["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"] == (
        "https://api.example.com/orders"
    )

    # Update in place keeps the id and the webhook URL.
    canvas = api.canvas(url="https://api.example.com/v2/orders", name="Orders v2")
    r2 = _save(client, headers, canvas, konnect_id=saved["konnect_id"]).json()
    assert r2["konnect_id"] == saved["konnect_id"] and r2["webhook_url"] == saved["webhook_url"]

    # Another account sees nothing of it.
    other = api.new_user()
    assert client.get(f"/api/v1/konnects/{saved['konnect_id']}/edit", headers=other).status_code == 404
    assert _save(client, other, canvas, konnect_id=saved["konnect_id"]).status_code == 404
    assert client.get("/api/v1/konnects", headers=other).json()["total_konnects"] == 0

    # Search runs from 2 characters.
    assert client.get("/api/v1/konnects?search_query=v2", headers=headers).json()["total_konnects"] == 1
    assert client.get("/api/v1/konnects?search_query=zz", headers=headers).json()["total_konnects"] == 0


def test_publish_hands_the_compiled_spec_to_the_runners(client, api, nats_server):
    headers = api.new_user()
    r = _save(client, headers, api.canvas(), endpoint="publish_konnect")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["konnect_status"] == "Published" and body["message"] == "Konnect published successfully"
    raw = _kv_get(nats_server.admin_url, body["konnect_id"])
    assert raw is not None
    spec = FlowSpec.model_validate_json(raw)
    assert spec.trigger.token == body["webhook_url"].rsplit("/", 1)[1]
    assert spec.steps[0].url == "https://api.example.com/orders"
    assert spec.steps[0].body[0].value == "{{node-1.name}}"

    # Saving again keeps it live (the changes wait beside the live version: test_status_and_publish.py);
    # withdrawing is the explicit update_status Draft.
    r = _save(client, headers, api.canvas(), konnect_id=body["konnect_id"])
    assert r.json()["konnect_status"] == "Published" and r.json()["draft_pending"] is True
    assert _kv_get(nats_server.admin_url, body["konnect_id"]) is not None
    r = client.post(f"/api/v1/konnects/{body['konnect_id']}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.json()["konnect_status"] == "Draft"
    assert _kv_get(nats_server.admin_url, body["konnect_id"]) is None

    # Deleting hides it.
    r = client.post(f"/api/v1/konnects/{body['konnect_id']}/update_status", json={"status": "DELETED"}, headers=headers)
    assert r.status_code == 200 and r.json()["message"] == "SUCCESS"
    assert r.json()["details"] == "Flow deleted" and r.json()["konnect_status"] == "DELETED"
    assert client.get(f"/api/v1/konnects/{body['konnect_id']}/edit", headers=headers).status_code == 404


def test_publish_with_an_invalid_node_keeps_the_draft(client, api):
    headers = api.new_user()
    r = _save(client, headers, api.canvas(url=""), endpoint="publish_konnect")
    assert r.status_code == 422
    assert r.json()["message"] == "API Call (node-2): the Endpoint URL is required"
    konnect_id = r.json()["konnect_id"]
    edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
    assert edit["status"] == "Draft"


def test_a_canvas_with_an_integer_beyond_64_bits_is_saved_not_a_500(client, api):
    """The fuzz found it: orjson refused to encode such a number for the JSONB column (a 500)."""
    headers = api.new_user()
    canvas = api.canvas()
    canvas["dataForSelect"] = {"order": 2**70, "ids": [2**64, 7]}
    saved = _save(client, headers, canvas)
    assert saved.status_code == 200, saved.text
    edit = client.get(f"/api/v1/konnects/{saved.json()['konnect_id']}/edit", headers=headers)
    assert edit.status_code == 200, edit.text
    # Stored as the float a browser reads; PostgreSQL writes it back without an exponent.
    stored = edit.json()["canvas_json"]["dataForSelect"]
    assert float(stored["order"]) == float(2**70) and [float(i) for i in stored["ids"]] == [float(2**64), 7.0]


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"canvas_json": "nope"},
        {"canvas_json": {"apps": "x"}},
        {"konnect_id": "abc", "canvas_json": {"apps": []}},
        {"canvas_json": {"apps": [1, 2]}},
    ],
)
def test_bad_save_payloads_get_a_clear_4xx(client, api, payload):
    headers = api.new_user()
    r = client.post("/api/v1/konnects/save_konnect", json=payload, headers=headers)
    assert 400 <= r.status_code < 500 and r.json()["message"]


def test_bad_json_body_is_a_4xx(client, api):
    r = client.post("/api/v1/auth/login", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["message"]


@pytest.mark.parametrize(
    "trigger_output",
    [
        {"name": "Ada"},
        # A webhook body with an integer beyond 64 bits (orjson refuses to encode one): stored, and
        # read back as the float a browser reads too.
        {"name": "Ada", "order": 2**70},
    ],
    ids=["plain", "huge-integer"],
)
def test_task_events_become_task_logs_once(client, api, nats_server, trigger_output):
    headers = api.new_user()
    body = _save(client, headers, api.canvas(), endpoint="publish_konnect").json()
    spec = FlowSpec.model_validate_json(_kv_get(nats_server.admin_url, body["konnect_id"]))
    now = datetime.now(UTC)
    run_id = uuid.uuid4().hex
    event = {
        "run_id": run_id,
        "konnect_id": spec.konnect_id,
        "owner_id": spec.owner_id,
        "konnect_name": spec.name,
        "status": "SUCCESS",
        "started_at": now.isoformat(),
        "finished_at": now.isoformat(),
        "trigger_id": "node-1",
        "trigger_output": trigger_output,
        "steps": [
            {
                "step_id": "node-2",
                "name": "API Call",
                "app": "api_call",
                "status": "SUCCESS",
                "started_at": now.isoformat(),
                "finished_at": now.isoformat(),
                "input": {"url": "https://api.example.com/orders"},
                "output": {"status": 201, "body": {"ok": True}},
                "error": None,
            }
        ],
    }
    TaskEvent.model_validate(event)

    async def publish_twice():
        nc = await nats.connect(nats_server.admin_url)
        js = nc.jetstream()
        for _ in range(2):  # a redelivery: the second publish is deduplicated or ignored
            await js.publish(event_subject(spec.konnect_id), json.dumps(event).encode())
        await js.publish(event_subject(spec.konnect_id), json.dumps(event).encode(), headers=msg_id_headers(run_id))
        await nc.close()

    asyncio.run(publish_twice())
    import time

    deadline = time.monotonic() + 10
    logs = []
    while time.monotonic() < deadline:
        logs = client.get(f"/api/v1/task_logs/logs?konnect_id={spec.konnect_id}", headers=headers).json()["task_logs"]
        if logs:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    logs = client.get(f"/api/v1/task_logs/logs?konnect_id={spec.konnect_id}", headers=headers).json()["task_logs"]
    assert len(logs) == 1
    assert logs[0]["status"] == "SUCCESS"
    stored = {k: float(v) if isinstance(v, int) and v > 2**63 else v for k, v in trigger_output.items()}
    assert logs[0]["data"] == {"node-1": stored, "node-2": {"status": 201, "body": {"ok": True}}}
    assert (
        client.get(f"/api/v1/task_logs/logs?konnect_id={spec.konnect_id}&task_log_type=ERROR", headers=headers).json()[
            "task_logs"
        ]
        == []
    )
    tasks = client.get(f"/api/v1/task_logs/{logs[0]['id']}/tasks", headers=headers).json()["tasks"]
    assert [t["step_id"] for t in tasks] == ["node-2"] and tasks[0]["data"]["output"]["status"] == 201
    listing = client.get("/api/v1/konnects", headers=headers).json()["konnects"][0]
    assert listing["success_task_count"] == 1 and listing["error_task_count"] == 0
    # Not visible to another account.
    other = api.new_user()
    assert client.get(f"/api/v1/task_logs/{logs[0]['id']}/tasks", headers=other).status_code == 404
    assert client.get(f"/api/v1/task_logs/logs?konnect_id={spec.konnect_id}", headers=other).status_code == 404
