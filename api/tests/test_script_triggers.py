"""Custom-script triggers: Test & Review answers konnect_custom.script_id; the script-triggers page
shows the script with the konnect's URL and turns RECEIVED once the script's request arrived."""

from __future__ import annotations

import time
from typing import Any

import httpx

from konnectz_devstack.testing import chain_canvas, uuid_generator_node, webhook_canvas

TEST = "/api/v1/konnects/test_and_review"


def forms_canvas() -> dict[str, Any]:
    """Google Forms' New Form Response (a custom-script trigger) → a generator."""
    trigger = {
        "id": "node-1",
        "type": "TriggerNode",
        "position": {"x": 0, "y": 0},
        "data": {
            "node_id": "node-1",
            "app_detail": {
                "id": 160,
                "name": "Google Forms",
                "provider": "google_forms",
                "app_type": "api",
                "app_index": 1,
            },
            "selectedEvent": {"id": "new_response", "name": "New Form Response"},
            "configResponses": [
                {"label": "Form ID", "config_key": "formId", "value": "1FAIpQL", "config_key_required": True}
            ],
        },
    }
    return chain_canvas([trigger, uuid_generator_node()], "Form responses")


def test_a_script_trigger_from_test_to_received(client, api, runner_url):
    headers = api.new_user()
    canvas = forms_canvas()
    r = client.post(TEST, json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas}, headers=headers)
    assert r.status_code == 200, r.text
    reply = r.json()
    konnect_id = reply["konnect_id"]
    assert reply["test_status"] == "Success"
    assert reply["konnect_custom"] == {"script_id": konnect_id}
    assert reply["display_message"].startswith("Install the script (Google Apps Script)")
    assert reply["raw_response"] == {}

    page = client.get(f"/api/v1/script_triggers/{konnect_id}", headers=headers)
    assert page.status_code == 200, page.text
    script = page.json()
    assert script["status"] == "WAITING" and script["raw_response"] is None
    assert (script["app_name"], script["event_label"], script["platform"]) == (
        "Google Forms",
        "New Form Response",
        "Google Apps Script",
    )
    assert f"var KONNECTZ_WEBHOOK_URL = '{reply['webhook_url']}';" in script["source"]
    assert "{{webhook_url}}" not in script["source"] and len(script["install"]) == 4

    # the script posts a response to the draft's URL while the page is open
    hook = f"{runner_url}/hooks/{reply['webhook_url'].rsplit('/', 1)[1]}"
    response = {"responseId": "ACY", "answers": {"Name": "Ada", "Email": "ada@example.com"}}
    assert httpx.post(hook, json=response).status_code == 200
    deadline = time.monotonic() + 20
    while (script := client.get(f"/api/v1/script_triggers/{konnect_id}", headers=headers).json())[
        "status"
    ] != "RECEIVED":
        assert time.monotonic() < deadline, script
        time.sleep(0.2)
    assert script["raw_response"] == response

    # the popup closed: the editor tests the trigger again and gets the script's request as its data
    again = client.post(
        TEST, json={"node_id": "node-1", "konnect_id": konnect_id, "canvas_json": canvas}, headers=headers
    )
    assert again.status_code == 200, again.text
    assert again.json()["raw_response"] == response
    assert again.json()["display_message"] == "The script's request is the trigger's data"
    assert again.json()["konnect_custom"] == {"script_id": konnect_id}
    # ... later nodes test, and the flow saves (it runs as a webhook trigger on the same URL)
    action = client.post(
        TEST, json={"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": canvas}, headers=headers
    )
    assert action.json()["test_status"] == "Success", action.text
    saved = client.post(
        "/api/v1/konnects/save_konnect",
        json={"canvas_json": canvas, "canvas_name": True, "konnect_id": konnect_id},
        headers=headers,
    )
    assert saved.status_code == 200, saved.text


def test_the_script_page_is_the_owners_and_only_for_script_triggers(client, api):
    owner, other = api.new_user(), api.new_user()
    r = client.post(TEST, json={"node_id": "node-1", "konnect_id": None, "canvas_json": forms_canvas()}, headers=owner)
    konnect_id = r.json()["konnect_id"]
    assert client.get(f"/api/v1/script_triggers/{konnect_id}", headers=other).status_code == 404
    assert client.get(f"/api/v1/script_triggers/{konnect_id}").status_code == 401
    for bad in ("0", str(2**63), "abc", "1%00"):
        assert client.get(f"/api/v1/script_triggers/{bad}", headers=owner).status_code in (404, 422), bad

    webhook = api.test_trigger(owner, webhook_canvas("https://example.com/x"))
    r = client.get(f"/api/v1/script_triggers/{webhook}", headers=owner)
    assert r.status_code == 422 and r.json()["message"] == "This flow's trigger does not use a custom script"
    # a Webhook trigger's test carries no konnect_custom
    plain = client.post(
        TEST,
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": webhook_canvas("https://example.com/x")},
        headers=owner,
    )
    assert plain.json()["konnect_custom"] is None
