"""The JSON Parse add-on, added by CONTRIBUTING.md's steps (no grep): from its step to a published flow.

Its compile and run as units (valid JSON of every type, invalid JSON stopping the run or going on,
the size and depth bounds), then end to end through real processes (api + runner + PostgreSQL +
NATS): the catalogue lists it, Test & Review parses a captured request's field, and a published
Webhook → JSON Parse → API Call flow sends a key of the parsed data on.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.limits import MAX_JSON_DEPTH
from konnectz_contracts.steps import COMPILERS
from konnectz_contracts.steps.json_parse import MAX_TEXT_BYTES, Config
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    api_call_node,
    canvas_node,
    capture_request,
    chain_canvas,
    publish_and_run,
    review_node,
)
from konnectz_devstack.testing import sign_up as sign_up_and_in
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import StepContext, run_step

pytestmark = pytest.mark.integration

ORDER = {"payload": json.dumps({"customer": {"email": "ada@example.com"}, "items": [1, 2]}), "total": 42}


def parse_canvas(url: str | None = None, **fields: str) -> dict[str, Any]:
    responses = [{"config_key": key, "value": value} for key, value in fields.items()]
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node("node-2", "ActionNode", "json_parse", 2, "JSON Parse", configResponses=responses),
    ]
    if url is not None:
        apps.append(
            api_call_node(
                url + "/crm", node_id="node-3", body=[{"key": "email", "value": "{{node-2.data.customer.email}}"}]
            )
        )
        apps[2]["position"]["x"] = 1200
    return chain_canvas(apps, "Parse the payload")


def node(canvas: dict[str, Any]) -> Any:
    return Canvas.model_validate(canvas).node("node-2")


async def _parse(text: str, on_invalid: str = "error") -> Any:
    async with httpx.AsyncClient() as http:
        ctx = StepContext(outputs={"node-1": {"payload": text}}, http=http, guard=NetGuard(parse_networks("")))
        step = Config(id="node-2", name="JSON Parse", text="{{node-1.payload}}", on_invalid=on_invalid)
        return await run_step(step, ctx)


async def test_the_step_parses_every_json_type() -> None:
    parsed = await _parse(ORDER["payload"])
    assert parsed.status == "SUCCESS"
    assert parsed.output == {
        "data": {"customer": {"email": "ada@example.com"}, "items": [1, 2]},
        "type": "object",
        "valid": True,
    }
    for text, kind in (("[1]", "array"), ('"x"', "string"), ("3.5", "number"), ("true", "boolean"), ("null", "null")):
        assert (await _parse(text)).output["type"] == kind, text


async def test_invalid_json_stops_the_run_or_goes_on_as_chosen() -> None:
    stopped = await _parse('{"a": 1,}')
    assert stopped.status == "ERROR" and stopped.error is not None
    assert stopped.error.startswith("JSON Parse: not valid JSON") and "line 1, column 9" in stopped.error
    went_on = await _parse("{oops", on_invalid="empty")
    assert went_on.status == "SUCCESS" and went_on.output["valid"] is False and went_on.output["data"] is None
    too_big = await _parse(" " * (MAX_TEXT_BYTES + 1))
    assert too_big.status == "ERROR" and "longer than 1024 KiB" in (too_big.error or "")
    too_deep = await _parse("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert too_deep.status == "ERROR" and f"deeper than {MAX_JSON_DEPTH} levels" in (too_deep.error or "")


def test_the_node_compiles_and_says_what_is_missing() -> None:
    step = COMPILERS["json_parse"](node(parse_canvas(text="{{node-1.payload}}", on_invalid="empty")))
    assert step == Config(id="node-2", name="JSON Parse", text="{{node-1.payload}}", on_invalid="empty")
    with pytest.raises(CompileError, match="enter the text that holds the JSON"):
        COMPILERS["json_parse"](node(parse_canvas(text=" ")))
    with pytest.raises(CompileError, match="when the JSON is invalid must be one of error, empty"):
        COMPILERS["json_parse"](node(parse_canvas(text="x", on_invalid="ignore")))


class _Crm(JsonHandler):
    received: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        _Crm.received.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))))
        self._reply(200, {"ok": True})


def test_a_published_flow_maps_a_key_of_the_parsed_json() -> None:
    _Crm.received = []
    server = LocalServer(_Crm)
    try:
        with running_platform("konnectz-json-parse-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up_and_in(api, "json@example.com", "correct horse battery")
            add_ons = api.get("/api/v1/apps/add_on_apps", headers=headers).json()["apps"]
            listed = next(app for app in add_ons if app["provider"] == "json_parse")
            assert {"name": "JSON Parse", "app_type": "ADD_ON"}.items() <= listed.items()
            canvas = parse_canvas(server.url, text="{{node-1.payload}}")

            trigger = review_node(api, headers, canvas, "node-1", None)
            konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
            capture_request(api, headers, konnect_id, hook, ORDER)
            tested = review_node(api, headers, canvas, "node-2", konnect_id)
            assert tested["test_status"] == "Success"
            assert tested["raw_response"]["data"]["customer"]["email"] == "ada@example.com"

            run = {"payload": json.dumps({"customer": {"email": "grace@example.com"}})}
            (log,) = publish_and_run(api, headers, konnect_id, canvas, hook, run)
            assert log["status"] == "SUCCESS"
            assert _Crm.received[-1] == {"email": "grace@example.com"}
    finally:
        server.stop()
