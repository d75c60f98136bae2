"""The editor's Run settings (canvas_json.runControl) compile into FlowSpec.run_control."""

from __future__ import annotations

from typing import Any

import pytest

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_contracts.run_control import FailureAlert, RunControl


def canvas(run_control: Any) -> dict[str, Any]:
    def node(node_id: str, type_: str, provider: str, index: int, **data: Any) -> dict[str, Any]:
        detail = {"name": provider, "provider": provider, "app_index": index, "side": "left" if index == 1 else "right"}
        return {"id": node_id, "type": type_, "position": {"x": index, "y": 0}, "data": {"app_detail": detail, **data}}

    api = {"wrap_in_array": "NO", "payload_type": "JSON", "apiDetails": {"endpointURL": "https://a.example/y"}}
    return {
        "apps": [node("node-1", "WebhookInner", "webhook", 1), node("node-2", "Api", "api", 2, selectedValue=api)],
        "links": [{"source": "node-1", "target": "node-2"}],
        "flowName": "f",
        "runControl": run_control,
    }


def compile_(run_control: Any, owned: set[int] | None = None):
    return compile_flow(
        canvas(run_control),
        konnect_id=7,
        owner_id=3,
        name="n",
        webhook_token="t" * 43,
        owns_flow=None if owned is None else owned.__contains__,
    )


def test_no_settings_compile_to_none() -> None:
    assert compile_(None).run_control is None
    assert compile_({}).run_control is None
    assert compile_({"alert": {"email": False, "digestMinutes": 5}}).run_control is None


def test_settings_compile_to_the_flow_run_control() -> None:
    spec = compile_(
        {"deadlineSeconds": 90, "maxConcurrency": 2, "alert": {"email": True, "runKonnectId": 9, "digestMinutes": 15}},
        owned={9},
    )
    assert spec.run_control == RunControl(
        deadline_seconds=90, max_concurrency=2, alert=FailureAlert(email=True, run_konnect_id=9, digest_minutes=15)
    )
    assert compile_({"alert": {"email": True}}).run_control == RunControl(alert=FailureAlert(email=True))


@pytest.mark.parametrize(
    ("run_control", "message"),
    [
        ({"maxConcurrency": 0}, "concurrent runs must be between 1 and 100"),
        ({"maxConcurrency": 101}, "concurrent runs must be between 1 and 100"),
        ({"deadlineSeconds": 0}, "deadline must be between 1 second and 7 days"),
        ({"deadlineSeconds": 7 * 86400 + 1}, "deadline must be between 1 second and 7 days"),
        ({"alert": {"email": True, "digestMinutes": 0}}, "grouped every 1 to 1440 minutes"),
        ({"alert": {"runKonnectId": 7}}, "cannot run this same flow"),
        ({"alert": {"runKonnectId": 8}}, "flow 8 does not exist or is not yours"),
        ({"maxConcurrency": "many"}, "runControl.maxConcurrency"),
    ],
)
def test_bad_settings_say_why(run_control: dict[str, Any], message: str) -> None:
    with pytest.raises(CompileError, match=message):
        compile_(run_control, owned={9})
