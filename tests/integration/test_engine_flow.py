"""The flow engine end to end through real processes (api + runner + PostgreSQL + NATS):

the editor's loop (test the trigger, capture a request at the draft's webhook URL, test each
action), then publish a Webhook -> Filter -> Formatter -> Iterator -> API call konnect and run
it: the API call reaches a local HTTP server once per item, a filtered run makes no request,
and every run is one task log whose tasks carry each step's input and output.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import api_call_settings, canvas_node, chain_canvas, review_node, wait_until
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration


def flow(endpoint: str) -> dict[str, Any]:
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        # placed out of app_index order on purpose: the links decide the order
        canvas_node(
            "node-5",
            "Api",
            "api",
            2,
            "API Call",
            selectedValue=api_call_settings(
                endpoint + "/items/{{node-4.sku}}",
                headers=[{"key": "X-Order", "value": "{{node-1.order_id}}"}],
                body=[
                    {"key": "customer", "value": "{{node-3.output}}"},
                    {"key": "line.qty", "value": "{{node-4.qty}}"},
                ],
            ),
        ),
        canvas_node(
            "node-2",
            "Filter",
            "conditioner",
            3,
            "Filter",
            filterValues=[
                {"field": {"key": "total", "value": "{{node-1.total}}"}, "operator": "Greater Than", "value": "10"},
                {"field": "{{node-1.email}}", "operator": "End With", "value": "@example.com", "joinWith": ""},
            ],
        ),
        canvas_node(
            "node-3",
            "Formatter",
            "formatter",
            4,
            "Formatter",
            configResponses=[
                {"config_key": "operation", "value": "titlecase", "config_key_required": True},
                {"config_key": "input", "value": "{{node-1.name}}", "config_key_required": True},
            ],
        ),
        canvas_node(
            "node-4",
            "InHouse",
            "iterator",
            5,
            "Iterator",
            configResponses=[{"config_key": "list", "value": "{{node-1.items}}", "config_key_required": True}],
        ),
    ]
    order = ["node-1", "node-2", "node-3", "node-4", "node-5"]
    return chain_canvas(apps, "Orders per item", order)


def test_webhook_filter_formatter_iterator_api_call(receiver) -> None:
    with running_platform("konnectz-engine-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up_and_in(api, "engine@example.com", "correct horse battery")
        canvas = flow(receiver.url)

        def test(node_id: str, konnect_id: int | None) -> dict[str, Any]:
            return review_node(api, headers, canvas, node_id, konnect_id)

        # The editor's loop: test the trigger (creates the draft), capture a request, test the actions.
        trigger = test("node-1", None)
        konnect_id = trigger["konnect_id"]
        hook = trigger["webhook_url"]
        assert hook.startswith(platform.runner_url + "/hooks/")
        capture = f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}"
        assert api.post(capture, headers=headers).json()["message"] == "WAITING"
        order = {
            "order_id": "O-7",
            "name": "ada lovelace",
            "email": "ada@example.com",
            "total": 42,
            "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 5}],
        }
        assert httpx.post(hook, json=order).json() == {"status": "captured"}
        captured = api.post(capture, headers=headers).json()
        assert captured["test_status"] == "Success" and captured["raw_response"] == order
        assert test("node-2", konnect_id)["pass_through_condition"] is True
        assert test("node-3", konnect_id)["raw_response"] == {"output": "Ada Lovelace"}
        assert test("node-4", konnect_id)["raw_response"]["count"] == 2
        tested = test("node-5", konnect_id)
        assert tested["test_status"] == "Success" and tested["raw_response"]["status"] == 201
        assert [r["path"] for r in receiver.requests] == ["/items/A1"]
        receiver.requests.clear()

        r = api.post(
            "/api/v1/konnects/publish_konnect",
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        assert r.json()["webhook_url"] == hook

        # A passing run: one API call per item, with the formatter's and the item's values.
        accepted = wait_until(lambda: httpx.post(hook, json=order).json().get("status") == "accepted")
        assert accepted
        wait_until(lambda: len(receiver.requests) == 2)
        assert sorted(r["path"] for r in receiver.requests) == ["/items/A1", "/items/B2"]
        by_path = {r["path"]: r for r in receiver.requests}
        assert by_path["/items/A1"]["body"] == {"customer": "Ada Lovelace", "line": {"qty": 2}}
        assert by_path["/items/B2"]["body"] == {"customer": "Ada Lovelace", "line": {"qty": 5}}
        assert by_path["/items/B2"]["headers"]["X-Order"] == "O-7"

        # A filtered run: no request; its log says which condition stopped it.
        assert httpx.post(hook, json={**order, "total": 3}).json()["status"] == "accepted"

        def logs() -> list[dict[str, Any]]:
            reply = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()
            return reply["task_logs"] if len(reply["task_logs"]) == 2 else []

        task_logs = wait_until(logs)
        assert len(receiver.requests) == 2
        tasks = {}
        statuses = {log["data"]["node-1"]["total"]: log["status"] for log in task_logs}
        assert statuses == {42: "SUCCESS", 3: "FILTERED"}
        for log in task_logs:
            reply = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()
            tasks[log["data"]["node-1"]["total"]] = reply["tasks"]

        passed = tasks[42]
        assert [t["step_id"] for t in passed] == ["node-2", "node-3", "node-4", "node-5", "node-5"]
        flt, fmt, itr, call_a, call_b = passed
        assert flt["data"]["output"]["passed"] is True
        assert flt["data"]["input"]["conditions"][0]["field"] == "{{node-1.total}}"
        assert fmt["data"]["input"] == {"operation": "text.title", "input": "ada lovelace"}
        assert fmt["data"]["output"] == {"output": "Ada Lovelace"}
        assert itr["data"]["output"]["count"] == 2 and itr["data"]["input"]["input"] == order["items"]
        assert call_a["data"]["input"]["url"] == receiver.url + "/items/A1"
        assert call_a["data"]["input"]["body"] == {"customer": "Ada Lovelace", "line": {"qty": 2}}
        assert call_a["data"]["output"]["status"] == 201 and call_a["data"]["output"]["body"] == {
            "id": 42,
            "accepted": True,
        }
        assert call_b["data"]["input"]["url"] == receiver.url + "/items/B2"

        stopped = tasks[3]
        assert [t["step_id"] for t in stopped] == ["node-2"]
        assert stopped[0]["data"]["output"]["passed"] is False
        assert "Greater Than" in stopped[0]["data"]["output"]["stopped_by"]
