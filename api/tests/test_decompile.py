"""A flow spec back into a canvas: compiling the canvas gives the same flow (decompile.py)."""

from __future__ import annotations

from typing import Any

from konnectz_api.compile.decompile import canvas_of
from konnectz_api.compile.flow import compile_flow
from konnectz_contracts.spec import FlowSpec

TOKEN = "whk_0123456789abcdefabcd"


def _flow(url: str = "https://crm.example.com/contacts", **step: Any) -> FlowSpec:
    return FlowSpec.model_validate(
        {
            "konnect_id": 5,
            "owner_id": 3,
            "name": "Orders",
            "trigger_id": "node-1",
            "trigger": {"kind": "webhook", "token": TOKEN},
            "steps": [
                {
                    "kind": "api_call",
                    "id": "node-2",
                    "name": "Create contact",
                    "method": "POST",
                    "url": url,
                    "headers": [{"key": "X-Source", "value": "konnectz"}],
                    "params": [{"key": "who", "value": "{{node-1.name}}"}],
                    "body": [{"key": "name", "value": "{{node-1.name}}"}],
                    "wrap_in_array": True,
                    **step,
                }
            ],
        }
    )


def _compile(canvas: dict[str, Any]) -> FlowSpec:
    return compile_flow(canvas, konnect_id=5, owner_id=3, name="Orders", webhook_token=TOKEN)


def test_a_webhook_and_api_call_flow_compiles_back_to_itself():
    flow = _flow()
    canvas = canvas_of(flow)
    assert canvas["flowName"] == "Orders"
    assert [n["type"] for n in canvas["apps"]] == ["WebhookInner", "Api"]
    assert _compile(canvas) == flow


def test_an_edited_step_is_rebuilt_and_an_unchanged_one_kept_as_it_was():
    before = canvas_of(_flow())
    before["apps"][1]["position"] = {"x": 900, "y": 40}
    before["apps"][0]["data"]["note"] = "the editor's own field"
    edited = _flow("https://crm.example.com/v2/contacts")
    after = canvas_of(edited, before, unchanged={"node-1"})
    assert after["apps"][0] is before["apps"][0]  # unchanged: kept whole
    assert after["apps"][1]["position"] == {"x": 900, "y": 40}  # rebuilt, where the author put it
    assert after["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"].endswith("/v2/contacts")
    assert _compile(after) == edited
