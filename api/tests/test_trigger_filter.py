"""The trigger test drawer's AND/OR and labels, honoured by Test & Review of the trigger."""

from __future__ import annotations

from typing import Any

import pytest

from konnectz_api.compile.trigger_filter import choose_sample, matches
from konnectz_api.schemas import TriggerFilterIn
from konnectz_devstack.testing import chain_canvas, uuid_generator_node, webhook_canvas

TEST = "/api/v1/konnects/test_and_review"


def form_canvas() -> dict[str, Any]:
    """A Form input trigger: its test's sample is {name: 'Your name', email: 'you@example.com'}."""
    trigger = {
        "id": "node-1",
        "type": "FormInput",
        "position": {"x": 0, "y": 0},
        "data": {
            "node_id": "node-1",
            "app_detail": {
                "id": 12,
                "name": "Form Input",
                "provider": "form_input",
                "app_type": "ADD_ON",
                "app_index": 1,
            },
            "selectedEvent": {"id": "form_submitted", "name": "New Form Submission"},
            "formFields": [
                {"key": "name", "label": "Name", "type": "text", "required": True, "placeholder": "Your name"},
                {
                    "key": "email",
                    "label": "Email",
                    "type": "email",
                    "required": False,
                    "placeholder": "you@example.com",
                },
            ],
        },
    }
    return chain_canvas([trigger, uuid_generator_node()], "Form")


def _test(client, headers, canvas, konnect_id=None, **choice: Any):
    body: dict[str, Any] = {"node_id": "node-1", "konnect_id": konnect_id, "canvas_json": canvas}
    if choice:
        body["trigger_filter"] = choice
    return client.post(TEST, json=body, headers=headers)


def test_and_needs_every_label_and_keeps_the_earlier_result(client, api):
    headers = api.new_user()
    canvas = form_canvas()
    first = _test(client, headers, canvas)
    assert first.status_code == 200, first.text
    konnect_id = first.json()["konnect_id"]

    ok = _test(client, headers, canvas, konnect_id, join="AND", labels=["name", "email"])
    assert ok.status_code == 200, ok.text
    assert ok.json()["test_status"] == "Success"
    assert ok.json()["raw_response"] == {"name": "Your name", "email": "you@example.com"}
    assert "it has a value for 'name' and 'email'" in ok.json()["display_message"]

    refused = _test(client, headers, canvas, konnect_id, join="AND", labels=["name", "phone"])
    assert refused.status_code == 422, refused.text
    assert refused.json()["test_status"] == "Error"
    assert refused.json()["display_message"].startswith("No sample of the trigger has a value for 'name' and 'phone'")
    # the default join is AND
    assert _test(client, headers, canvas, konnect_id, labels=["name", "phone"]).status_code == 422
    # the refusal stored nothing: the trigger's earlier (successful) test still lets actions test
    action = client.post(
        TEST, json={"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": canvas}, headers=headers
    )
    assert action.status_code == 200 and action.json()["test_status"] == "Success", action.text


def test_or_needs_one_label(client, api):
    headers = api.new_user()
    canvas = form_canvas()
    ok = _test(client, headers, canvas, None, join="OR", labels=["phone", "email"])
    assert ok.status_code == 200, ok.text
    assert ok.json()["test_status"] == "Success"
    assert "a value for 'phone' or 'email'" in ok.json()["display_message"]

    refused = _test(client, headers, canvas, ok.json()["konnect_id"], join="OR", labels=["phone", "fax"])
    assert refused.status_code == 422
    assert "at least one of the checked labels" in refused.json()["display_message"]
    # a refused first test creates no konnect
    before = client.get("/api/v1/konnects", headers=headers).json()
    assert _test(client, headers, canvas, None, join="OR", labels=["fax"]).status_code == 422
    assert client.get("/api/v1/konnects", headers=headers).json() == before


def test_a_webhook_without_a_capture_has_no_sample_to_judge(client, api):
    headers = api.new_user()
    r = _test(client, headers, webhook_canvas("https://example.com/x"), None, join="AND", labels=["name"])
    assert r.status_code == 200, r.text
    assert r.json()["test_status"] == "Success" and r.json()["raw_response"] == {}


@pytest.mark.parametrize(
    "choice",
    [
        {"join": "XOR", "labels": ["a"]},
        {"join": "AND", "labels": ["a\x00b"]},
        {"join": "AND", "labels": [" "]},
        {"join": "AND", "labels": ["x" * 301]},
        {"join": "AND", "labels": ["a"] * 101},
        {"join": "AND", "labels": "name"},
        {"join": "AND", "labels": ["a"], "extra": 1},
    ],
)
def test_hostile_choices_get_a_422(client, api, choice):
    headers = api.new_user()
    r = client.post(
        TEST,
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": form_canvas(), "trigger_filter": choice},
        headers=headers,
    )
    assert r.status_code == 422, r.text


def test_has_a_value_is_the_filters_is_exist():
    sample = {"name": "Ada", "email": "", "phone": None, "zero": 0, "no": False, "customer": {"tags": ["vip"]}}
    assert matches(sample, TriggerFilterIn(labels=["name", "zero", "no", "customer.tags.0"]))
    for empty in ("email", "phone", "missing", "customer.tags.1", "name.first"):
        assert not matches(sample, TriggerFilterIn(labels=["name", empty]))
        assert matches(sample, TriggerFilterIn(join="OR", labels=["name", empty]))
        assert not matches(sample, TriggerFilterIn(join="OR", labels=[empty]))
    assert matches(sample, TriggerFilterIn()) and matches(sample, None)
    # the first qualifying sample is answered
    older, newer = {"id": 1, "email": "a@x"}, {"id": 2, "email": ""}
    assert choose_sample([newer, older], TriggerFilterIn(labels=["email"])) == older
    assert choose_sample([newer], TriggerFilterIn(labels=["email"])) is None
