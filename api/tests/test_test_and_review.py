"""Test & Review, webhook capture and delete_activity through the api, against real PostgreSQL and
NATS, a real runner process (for the capture) and a local HTTP server standing in for an API."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import api_call_settings, canvas_node, chain_canvas


class FakeApi:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                outer.requests.append({"method": self.command, "path": self.path, "body": raw})
                code = 500 if self.path.startswith("/fail") else 200
                self._reply(code, {"ok": code == 200, "path": self.path})

            do_GET = do_POST = do_PUT = _handle

        self.server = LocalServer(Handler)
        self.url = self.server.url


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeApi]:
    fake = FakeApi()
    yield fake
    fake.server.stop()


def flow_canvas(endpoint: str) -> dict[str, Any]:
    """Webhook -> Filter -> Formatter -> Iterator -> API call."""
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node(
            "node-2",
            "Filter",
            "conditioner",
            2,
            "Filter",
            filterValues=[
                {"field": {"key": "total", "value": "{{node-1.total}}"}, "operator": "Greater Than", "value": "10"}
            ],
        ),
        canvas_node(
            "node-3",
            "Formatter",
            "formatter",
            3,
            "Formatter",
            configResponses=[
                {"label": "Operation", "config_key": "operation", "value": "uppercase", "config_key_required": True},
                {"label": "Input", "config_key": "input", "value": "{{node-1.name}}", "config_key_required": True},
            ],
        ),
        canvas_node(
            "node-4",
            "InHouse",
            "iterator",
            4,
            "Iterator",
            configResponses=[
                {"label": "List", "config_key": "list", "value": "{{node-1.items}}", "config_key_required": True}
            ],
        ),
        canvas_node(
            "node-5",
            "Api",
            "api",
            5,
            "API Call",
            selectedValue=api_call_settings(
                endpoint + "/items/{{node-4.sku}}",
                body=[{"key": "who", "value": "{{node-3.output}}"}, {"key": "qty", "value": "{{node-4.qty}}"}],
            ),
        ),
    ]
    return chain_canvas(apps, "Orders")


def _test(client, headers, canvas, node_id, konnect_id=None) -> httpx.Response:
    return client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": node_id, "konnect_id": konnect_id, "canvas_json": canvas, "konnect_activity_id": None},
        headers=headers,
    )


def _capture(client, headers, konnect_id) -> dict[str, Any]:
    r = client.post(f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_whole_editor_loop_trigger_capture_actions_save(client, api, fake_api, runner_url, monkeypatch):
    headers = api.new_user()
    canvas = flow_canvas(fake_api.url)

    # An action cannot be tested before the trigger.
    r = _test(client, headers, canvas, "node-3")
    assert r.status_code == 422
    assert r.json()["display_message"] == "Test Your Formatter after testing your Triggering app"
    assert r.json()["test_status"] == "Error"

    # The trigger's test creates the konnect and tells where to send a request.
    r = _test(client, headers, canvas, "node-1")
    assert r.status_code == 200, r.text
    trigger = r.json()
    konnect_id = trigger["konnect_id"]
    assert trigger["test_status"] == "Success" and trigger["konnect_activity_id"] > 0
    assert trigger["raw_response"] == {} and trigger["webhook_url"] in trigger["display_message"]
    token = trigger["webhook_url"].rsplit("/", 1)[1]
    hook = f"{runner_url}/hooks/{token}"
    assert client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()["status"] == "Draft"

    # A draft's webhook is unknown to the runner until the editor captures.
    assert httpx.post(hook, json={"x": 1}).status_code == 404
    waiting = _capture(client, headers, konnect_id)
    assert (waiting["message"], waiting["test_status"], waiting["raw_response"]) == ("WAITING", "WAITING", None)
    assert _capture(client, headers, konnect_id)["message"] == "WAITING"
    sent = {"name": "ada", "total": 25, "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}]}
    r = httpx.post(hook + "?src=shop", json=sent)
    assert r.status_code == 200 and r.json() == {"status": "captured"}
    captured = _capture(client, headers, konnect_id)
    assert captured["message"] == "SUCCESS" and captured["test_status"] == "Success"
    assert captured["raw_response"] == {**sent, "query": {"src": "shop"}}
    assert captured["konnect_activity_id"] == trigger["konnect_activity_id"]  # the trigger node's activity
    assert httpx.post(hook, json={}).status_code == 404  # the window closed with the capture

    # Testing the trigger again keeps the captured data.
    assert _test(client, headers, canvas, "node-1", konnect_id).json()["raw_response"]["name"] == "ada"

    # Each action runs with the upstream test outputs.
    r = _test(client, headers, canvas, "node-2", konnect_id)
    assert r.status_code == 200 and r.json()["test_status"] == "Success" and r.json()["pass_through_condition"] is True
    r = _test(client, headers, canvas, "node-3", konnect_id)
    assert r.json()["raw_response"] == {"output": "ADA"}
    r = _test(client, headers, canvas, "node-4", konnect_id)
    assert r.json()["raw_response"]["count"] == 2
    r = _test(client, headers, canvas, "node-5", konnect_id)
    assert r.status_code == 200 and r.json()["test_status"] == "Success", r.text
    assert r.json()["raw_response"]["status"] == 200
    assert fake_api.requests[-1]["path"] == "/items/A1"  # the iterator's first item stands for it
    assert json.loads(fake_api.requests[-1]["body"]) == {"who": "ADA", "qty": 2}

    # A filter that does not pass is a successful test that says why.
    failing = json.loads(json.dumps(canvas))
    failing["apps"][1]["data"]["filterValues"][0]["value"] = "100"
    r = _test(client, headers, failing, "node-2", konnect_id)
    assert r.json()["test_status"] == "Success" and r.json()["pass_through_condition"] is False
    assert "Greater Than" in r.json()["display_message"]

    # A step that fails is an Error test with the reason; private addresses are refused.
    broken = json.loads(json.dumps(canvas))
    broken["apps"][4]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = fake_api.url + "/fail"
    r = _test(client, headers, broken, "node-5", konnect_id)
    assert r.status_code == 200 and r.json()["test_status"] == "Error" and "HTTP 500" in r.json()["display_message"]
    broken["apps"][4]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = "http://10.1.2.3/x"
    r = _test(client, headers, broken, "node-5", konnect_id)
    assert r.json()["test_status"] == "Error" and "private address" in r.json()["display_message"]

    # Save and publish need the tested trigger's konnect_id.
    r = client.post("/api/v1/konnects/save_konnect", json={"konnect_id": None, "canvas_json": canvas}, headers=headers)
    assert r.status_code == 422 and r.json()["message"] == "Trigger not chosen"
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["konnect_id"] == konnect_id and r.json()["konnect_status"] == "Published"

    # Capture works after publishing too; the run itself still happens.
    assert _capture(client, headers, konnect_id)["message"] == "WAITING"
    deadline = time.monotonic() + 20
    while httpx.post(hook, json={**sent, "name": "bob"}).json().get("status") != "accepted":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert _capture(client, headers, konnect_id)["raw_response"]["name"] == "bob"


def test_mandatory_fields_and_the_iterator_rule(client, api, fake_api):
    headers = api.new_user()
    canvas = flow_canvas(fake_api.url)
    konnect_id = _test(client, headers, canvas, "node-1").json()["konnect_id"]
    missing = json.loads(json.dumps(canvas))
    missing["apps"][2]["data"]["configResponses"][1]["value"] = ""
    r = _test(client, headers, missing, "node-3", konnect_id)
    assert r.status_code == 422 and r.json()["message"] == "Please fill the values of mandatory fields before Testing"
    twice = json.loads(json.dumps(canvas))
    twice["apps"].append({**json.loads(json.dumps(canvas["apps"][3])), "id": "node-6"})
    r = _test(client, headers, twice, "node-4", konnect_id)
    assert r.status_code == 422 and r.json()["message"] == "Iterator (node-4): The iterator can only be used once."
    coupon = json.loads(json.dumps(canvas))
    coupon["apps"][2] = canvas_node(
        "node-3", "Coupon", "coupon", 3, "Coupon", inHouseAppConfig={"coupon": {"expiryNum": ""}}
    )
    r = _test(client, headers, coupon, "node-3", konnect_id)
    assert r.status_code == 422 and r.json()["message"] == "Coupon (node-3): Please Fill Valid Expiry Number"


def test_hostile_test_payloads_get_a_clear_4xx(client, api, fake_api):
    headers = api.new_user()
    other = api.new_user()
    canvas = flow_canvas(fake_api.url)
    konnect_id = _test(client, headers, canvas, "node-1").json()["konnect_id"]
    cases = [
        {"node_id": "node-9", "konnect_id": konnect_id, "canvas_json": canvas},
        {"konnect_id": konnect_id, "canvas_json": canvas},
        {"node_id": "node-2", "konnect_id": 2**64, "canvas_json": canvas},
        {"node_id": "node-2", "konnect_id": "abc", "canvas_json": canvas},
        {"node_id": "n\x00", "konnect_id": konnect_id, "canvas_json": canvas},
        {"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": {"apps": [{"id": "a"}] * 501}},
        {"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": {"apps": [{"id": 1, "type": []}]}},
        {"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": {"apps": "x"}},
        {"node_id": "node-2", "konnect_id": konnect_id},
        {"node_id": "x" * 101, "konnect_id": konnect_id, "canvas_json": canvas},
    ]
    for payload in cases:
        r = client.post("/api/v1/konnects/test_and_review", json=payload, headers=headers)
        assert 400 <= r.status_code < 500 and r.json()["message"], (payload.get("node_id"), r.status_code, r.text)
    # another owner's konnect is not found, and cannot be captured or have activities deleted
    r = _test(client, other, canvas, "node-2", konnect_id)
    assert r.status_code == 404
    r = _test(client, other, canvas, "node-1", konnect_id)
    assert r.status_code == 404
    assert (
        client.post(f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}", headers=other).status_code == 404
    )
    for bad in ("0", str(2**64), "abc"):
        r = client.post(f"/api/v1/konnect_webhooks/capture_webhook_response/{bad}", headers=headers)
        assert r.status_code in (404, 422), r.text
    r = client.post(
        "/api/v1//konnects/delete_activity", json={"konnect_id": konnect_id, "nodeId": "node-1"}, headers=other
    )
    assert r.status_code == 404
    assert client.post("/api/v1/konnects/test_and_review", json={"canvas_json": canvas}).status_code == 401


def test_delete_activity_accepts_the_double_slash(client, api, fake_api):
    headers = api.new_user()
    canvas = flow_canvas(fake_api.url)
    konnect_id = _test(client, headers, canvas, "node-1").json()["konnect_id"]
    # the trigger's test cannot go while actions are on the canvas
    r = client.post(
        "/api/v1//konnects/delete_activity",
        json={"konnect_id": konnect_id, "nodeId": "node-1", "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 409 and r.json()["message"] == "Cannot delete Trigger while Action present."
    activity = _test(client, headers, canvas, "node-2", konnect_id).json()["konnect_activity_id"]
    smaller = {**canvas, "apps": canvas["apps"][:1], "links": []}
    r = client.post(
        "/api/v1//konnects/delete_activity",
        json={"konnect_activity_id": activity, "konnect_id": konnect_id, "nodeId": "node-2", "canvas_json": smaller},
        headers=headers,
    )
    assert r.status_code == 200 and r.json() == {
        "status": "SUCCESS",
        "message": "Test result deleted",
        "sealed_by_name": [],
    }
    assert len(client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()["canvas_json"]["apps"]) == 1
    r = client.post(
        "/api/v1/konnects/delete_activity", json={"konnect_id": konnect_id, "nodeId": "node-2"}, headers=headers
    )
    assert r.status_code == 200 and r.json()["message"] == "The node had no test result to delete"
    r = client.post("/api/v1//konnects/delete_activity", json={"konnect_id": konnect_id}, headers=headers)
    assert r.status_code == 422


def test_capture_needs_a_webhook_trigger(client, api, fake_api):
    headers = api.new_user()
    canvas = flow_canvas(fake_api.url)
    konnect_id = _test(client, headers, canvas, "node-1").json()["konnect_id"]
    client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_json": canvas},
        headers=headers,
    )
    scheduled = json.loads(json.dumps(canvas))
    scheduled["apps"][0] = canvas_node("node-1", "Scheduler", "scheduler", 1, "Scheduler")
    r = _test(client, headers, scheduled, "node-1", konnect_id)
    assert r.status_code == 422 and "Please fill the values of mandatory fields" in r.json()["message"]
    scheduled["apps"][0]["data"]["selectedValue"] = {"schedule_type": "Everyday", "schedule_time": "09:30"}
    r = _test(client, headers, scheduled, "node-1", konnect_id)
    assert r.status_code == 200, r.text
    # The test lists the next three runs (the owner's wall times), the first one is the sample.
    message = r.json()["display_message"]
    assert message.startswith("Next runs: "), message
    assert message.count("T09:30:00") == 3, message
    assert r.json()["raw_response"]["schedule_type"] == "Everyday"
    assert "T09:30:00" in r.json()["raw_response"]["local_time"]  # the owner's wall time
    client.post(
        "/api/v1/konnects/save_konnect", json={"konnect_id": konnect_id, "canvas_json": scheduled}, headers=headers
    )
    r = client.post(f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}", headers=headers)
    assert r.status_code == 422, r.text
    once = json.loads(json.dumps(scheduled))
    once["apps"][0]["data"]["selectedValue"] = {"schedule_type": "Once", "schedule_time": "2999-01-02 08:15"}
    r = _test(client, headers, once, "node-1", konnect_id)
    assert r.status_code == 200, r.text
    assert r.json()["display_message"].startswith("Next run: 2999-01-02T08:15:00"), r.json()["display_message"]
    # The owner's time zone as a GMT offset: wall times in it, named as given.
    assert client.post("/api/v1/users/profile", json={"timezone": "GMT+05:30"}, headers=headers).status_code == 200
    r = _test(client, headers, scheduled, "node-1", konnect_id)
    assert r.status_code == 200, r.text
    assert r.json()["raw_response"]["local_time"].endswith("T09:30:00+05:30")
    assert r.json()["display_message"].endswith("(GMT+05:30)")


def test_nul_characters_are_stored_not_500(client, api, fake_api, runner_url):
    headers = api.new_user()
    canvas = flow_canvas(fake_api.url)
    canvas["flowName"] = "bad\x00name"
    canvas["apps"][0]["data"]["app_detail"]["name"] = "Web\x00hook"
    r = _test(client, headers, canvas, "node-1")
    assert r.status_code == 200, r.text
    konnect_id = r.json()["konnect_id"]
    hook = f"{runner_url}/hooks/{r.json()['webhook_url'].rsplit('/', 1)[1]}"
    assert _capture(client, headers, konnect_id)["message"] == "WAITING"
    assert httpx.post(hook, json={"name": "a\x00b", "k\x00": 1, "total": 50, "items": []}).status_code == 200
    captured = _capture(client, headers, konnect_id)
    assert captured["raw_response"] == {"name": "a\ufffdb", "k\ufffd": 1, "total": 50, "items": []}
    r = _test(client, headers, canvas, "node-3", konnect_id)
    assert r.status_code == 200 and r.json()["raw_response"] == {"output": "A\ufffdB"}
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    assert client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()["konnect_name"] == "bad\ufffdname"


def test_every_add_on_kind_runs_in_test_and_review(client, api, runner_url):
    headers = api.new_user()
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node(
            "node-2",
            "InHouse",
            "splitter",
            2,
            "Splitter",
            configResponses=[
                {"config_key": "input", "value": "{{node-1.tags}}"},
                {"config_key": "separator", "value": ";"},
            ],
            inHouseAppConfig={"segmentIndex": "Second to Last"},
        ),
        canvas_node(
            "node-3",
            "Generator",
            "generator",
            3,
            "Generator",
            configResponses=[{"config_key": "type", "value": "uuid"}],
        ),
        canvas_node(
            "node-4",
            "Coupon",
            "coupon",
            4,
            "Coupon",
            inHouseAppConfig={"coupon": {"expiryNum": "2", "duration": "Week"}},
        ),
        canvas_node(
            "node-5",
            "Api",
            "data_forwarder",
            5,
            "Data Forwarder",
            keyList=[
                "{{node-2.output}}",
                {"key": "code", "value": "{{node-4.coupon_code}}"},
                {"key": "id", "value": "{{node-3.output}}"},
            ],
        ),
        # the Wait and Approval cards save their settings in selectedAddonsValue (docs/waits.md)
        canvas_node(
            "node-6",
            "InHouse",
            "wait",
            6,
            "Wait for a Call",
            selectedAddonsValue={"timeout": 2, "timeout_unit": "hours", "on_timeout": "continue"},
        ),
        canvas_node(
            "node-7",
            "InHouse",
            "approval",
            7,
            "Approval",
            selectedAddonsValue={
                "approvers": "Boss@Example.com, b@example.com",
                "message": "Ship {{node-1.tags}}?",
                "timeout": 1,
                "timeout_unit": "days",
                "on_timeout": "fail",
            },
        ),
    ]
    canvas = chain_canvas(apps, "Kinds")
    # the editor's trigger payload: left_app_id and no node id
    r = client.post(
        "/api/v1/konnects/test_and_review",
        json={
            "left_app_id": 1,
            "left_app_event_id": "catch_hook",
            "left_config": {},
            "konnect_id": None,
            "canvas_json": canvas,
        },
        headers=headers,
    )
    assert r.status_code == 200, r.text
    konnect_id = r.json()["konnect_id"]
    hook = f"{runner_url}/hooks/{r.json()['webhook_url'].rsplit('/', 1)[1]}"
    assert _capture(client, headers, konnect_id)["message"] == "WAITING"
    assert httpx.post(hook, json={"tags": "red; green; blue"}).status_code == 200
    assert _capture(client, headers, konnect_id)["message"] == "SUCCESS"

    split = _test(client, headers, canvas, "node-2", konnect_id).json()
    assert split["raw_response"] == {"output": "green"}
    generated = _test(client, headers, canvas, "node-3", konnect_id).json()["raw_response"]["output"]
    assert len(generated) == 36 and generated.count("-") == 4
    coupon = _test(client, headers, canvas, "node-4", konnect_id).json()["raw_response"]
    assert coupon["expiry_unit"] == "Week" and len(coupon["coupon_code"]) == 19
    forwarded = _test(client, headers, canvas, "node-5", konnect_id).json()
    assert forwarded["test_status"] == "Success"
    assert forwarded["raw_response"] == {"output": "green", "code": coupon["coupon_code"], "id": generated}
    waited = _test(client, headers, canvas, "node-6", konnect_id).json()
    assert waited["test_status"] == "Success", waited
    assert waited["raw_response"] == {"timed_out": False}  # nothing waits in a test, and no link is made
    asked = _test(client, headers, canvas, "node-7", konnect_id).json()  # mails nobody: a sample decision
    assert asked["test_status"] == "Success", asked
    assert asked["raw_response"] == {
        "decision": "approved",
        "approved": True,
        "decided_by": "boss@example.com",
        "timed_out": False,
    }


def test_huge_bodies_are_refused_with_413(client, api):
    headers = api.new_user()
    big = b'{"canvas_json": {"apps": [], "flowName": "' + b"x" * (11 * 1024 * 1024) + b'"}}'
    r = client.post(
        "/api/v1/konnects/test_and_review", content=big, headers={**headers, "Content-Type": "application/json"}
    )
    assert r.status_code == 413 and "larger than" in r.json()["message"]

    def chunks():
        yield b'{"canvas_json": {"apps": [], "flowName": "'
        for _ in range(12):
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    r = client.post(
        "/api/v1/konnects/test_and_review", content=chunks(), headers={**headers, "Content-Type": "application/json"}
    )
    assert r.status_code == 413
