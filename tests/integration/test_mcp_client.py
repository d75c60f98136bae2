"""The MCP tool step end to end (issue 38, item 4) on real processes (api + runner + PostgreSQL + NATS), with a
local MCP server made with the official MCP Python SDK (konnectz_devstack.mcp_tools, on 127.0.0.1, which the
test platform allows: KONNECTZ_ALLOW_PRIVATE_NETWORKS=127.0.0.0/8) and with Konnectz's own /mcp.

- Connecting an MCP Server account lists the server's tools: a private address that is not allowed, a wrong
  token (HTTP 401) are refused with the reason.
- The api lists the tools for the editor: its own endpoint (fields from the input schema), and the generic
  card's calls (the tool's options; the chosen tool's arguments as fetched fields ``arg.<name>``); a server
  that hangs answers 504 within the bound, one that is gone 502.
- A published Webhook -> MCP tool flow calls the tool with arguments mapped from the webhook, typed by the
  schema; the task log shows the call. A tool error ends the run as ERROR with the server's text; a tool
  that hangs past the step's timeout ends it as ERROR within the bound.
- A flow calls a tool flow of Konnectz's own /mcp with an MCP token.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.model import KeyValue
from konnectz_contracts.steps import KINDS
from konnectz_contracts.steps.mcp_tool import Config
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.mcp_tools import McpToolServer
from konnectz_devstack.pytest_plugin import Platform
from konnectz_devstack.testing import (
    add_account,
    api_call_node,
    app_node,
    canvas_node,
    capture_request,
    chain_canvas,
    publish_and_run,
    publish_canvas,
    review_node,
    sign_up,
    wait_until,
)

pytestmark = pytest.mark.integration

MCP_APP = (25, "mcp_server", "MCP Server")  # catalogue/apps/mcp_server.yaml
TOKEN = "mcp-integration-token-42"


@pytest.fixture(scope="module")
def tools() -> Iterator[McpToolServer]:
    with McpToolServer(token=TOKEN) as server:
        yield server


def mcp_canvas(account_id: int, tool: str, arguments: dict[str, str], *, timeout: str = "") -> dict[str, Any]:
    config = [
        {"config_key": "tool", "value": tool},
        {"config_key": "timeout", "value": timeout},
        *({"config_key": f"arg.{k}", "value": v} for k, v in arguments.items()),
    ]
    step = app_node(
        "node-2",
        "ActionNode",
        MCP_APP,
        2,
        event={"id": "call_tool", "name": "MCP Tool"},
        account={"id": account_id, "name": "tools"},
        config=config,
        x=1000,
    )
    return chain_canvas([canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"), step], f"MCP {tool}")


def test_the_node_compiles_and_says_what_is_missing() -> None:
    compile_node = KINDS["mcp_tool"].compile_node

    def node(canvas: dict[str, Any]) -> Any:
        return Canvas.model_validate(canvas).node("node-2")

    step = compile_node(node(mcp_canvas(5, "weather", {"city": "{{node-1.city}}", "days": "2"}, timeout="10")))
    assert step == Config(
        id="node-2",
        name="MCP Server",
        account_id=5,
        tool="weather",
        arguments=[KeyValue(key="city", value="{{node-1.city}}"), KeyValue(key="days", value="2")],
        timeout_seconds=10,
    )
    assert compile_node(node(mcp_canvas(5, "add", {}))).timeout_seconds == 30
    with pytest.raises(CompileError, match="the timeout must be from 1 to 300 seconds"):
        compile_node(node(mcp_canvas(5, "add", {}, timeout="301")))
    with pytest.raises(CompileError, match="choose the tool"):
        compile_node(node(mcp_canvas(5, "", {})))
    with pytest.raises(CompileError, match="the tool's name must be"):
        compile_node(node(mcp_canvas(5, "rm -rf", {})))
    missing = mcp_canvas(5, "add", {})
    missing["apps"][1]["data"]["selectedAccount"] = None
    with pytest.raises(CompileError, match="choose an MCP server account"):
        compile_node(node(missing))


def _task(api: httpx.Client, headers: dict[str, str], log_id: int, step_id: str) -> dict[str, Any]:
    tasks = api.get(f"/api/v1/task_logs/{log_id}/tasks", headers=headers).json()["tasks"]
    return next(t for t in tasks if t["step_id"] == step_id)


def _run(
    api: httpx.Client, headers: dict[str, str], konnect_id: int, hook: str, payload: dict[str, Any], *, count: int
) -> dict[str, Any]:
    """Post ``payload`` to the published flow and wait for its task log (the ``count``-th): that log."""
    assert httpx.post(hook, json=payload).json().get("status") == "accepted"

    def logs() -> list[dict[str, Any]] | None:
        found = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
        return found if len(found) >= count and all(log["status"] != "RUNNING" for log in found) else None

    found = wait_until(logs, timeout=60, what=f"task log {count}")
    return max(found, key=lambda log: log["id"])


def _publish(api: httpx.Client, headers: dict[str, str], canvas: dict[str, Any]) -> tuple[int, str]:
    published = publish_canvas(api, headers, canvas)
    return published["konnect_id"], published["webhook_url"]


def test_connect_list_and_call_tools_of_an_mcp_server(platform: Platform, tools: McpToolServer) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=60)
    headers = sign_up(api, "mcp-client@example.com", "correct horse battery")

    # Connecting: a private address that is not allowed, a wrong token: refused with the reason.
    private = api.post(
        "/api/v1/authorization",
        json={"app_id": 25, "auth_response": {"instance_url": "http://10.20.30.40:9/mcp", "api_key": TOKEN}},
        headers=headers,
    )
    assert private.status_code == 400 and "private address" in private.text, private.text
    wrong = api.post(
        "/api/v1/authorization",
        json={"app_id": 25, "auth_response": {"instance_url": tools.url, "api_key": "wrong-token"}},
        headers=headers,
    )
    assert wrong.status_code == 400 and "answered HTTP 401" in wrong.text, wrong.text
    assert "wrong-token" not in wrong.text
    account_id = add_account(api, headers, 25, {"instance_url": tools.url, "api_key": TOKEN})

    # The editor's list: names, descriptions, the input schema as fields.
    listed = api.get(f"/api/v1/app_users/{account_id}/mcp_tools", headers=headers)
    assert listed.status_code == 200, listed.text
    by_name = {t["name"]: t for t in listed.json()["tools"]}
    assert set(by_name) == {"add", "weather", "fail", "slow", "big", "deep"}
    assert by_name["weather"]["label"] == "weather — The forecast of a city for some days."
    fields = {f["name"]: f for f in by_name["weather"]["fields"]}
    assert fields["city"] == {
        "name": "city", "label": "City", "type": "string", "required": True, "help": "", "options": []
    }  # fmt: skip
    assert fields["days"]["type"] == "integer" and fields["unit"]["options"] == ["C", "F"]
    # The generic card: the tool's options, then the chosen tool's arguments as fields.
    base = "/api/v1/apps/25/app_events/call_tool/event_config/right"
    events = api.get("/api/v1/apps/25/app_events", params={"side": "right"}, headers=headers).json()["app_events"]
    assert [e["id"] for e in events] == ["call_tool"]  # the tool list is no step of its own
    options = api.get(f"{base}/tool/details", params={"app_account_id": account_id}, headers=headers)
    assert options.status_code == 200, options.text
    assert {o["id"] for o in options.json()["options"]} == set(by_name)
    fetched = api.get(
        f"{base}/tool/fetch-fields", params={"app_account_id": account_id, "selectedValue": "weather"}, headers=headers
    )
    assert fetched.status_code == 200, fetched.text
    got = {f["config_key"]: f for f in fetched.json()["fields"]}
    assert list(got) == ["arg.city", "arg.days", "arg.unit", "arg.tags"]
    assert got["arg.city"]["config_key_required"] is True and got["arg.unit"]["type"] == "select"
    assert [o["id"] for o in got["arg.unit"]["options"]] == ["C", "F"] and got["arg.days"][
        "key_value_type"
    ] == "integer"
    # Another user's account is not theirs to list.
    stranger = sign_up(api, "mcp-client-stranger@example.com", "correct horse battery")
    assert api.get(f"/api/v1/app_users/{account_id}/mcp_tools", headers=stranger).status_code == 404

    # Test & Review of the step, then the published flow: arguments mapped from the webhook, typed.
    canvas = mcp_canvas(account_id, "weather", {"city": "{{node-1.city}}", "days": "{{node-1.days}}", "unit": "F"})
    trigger = review_node(api, headers, canvas, "node-1", None)
    konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
    capture_request(api, headers, konnect_id, hook, {"city": "Lyon", "days": "1"})
    tested = review_node(api, headers, canvas, "node-2", konnect_id)
    assert tested["test_status"] == "Success", tested
    assert tested["raw_response"]["city"] == "Lyon"
    (log,) = publish_and_run(api, headers, konnect_id, canvas, hook, {"city": "Paris", "days": "2"})
    assert log["status"] == "SUCCESS", log
    step = _task(api, headers, log["id"], "node-2")
    assert step["data"]["output"] == {"city": "Paris", "days": 2, "unit": "F", "tags": [], "forecast": ["sunny"] * 2}
    assert step["data"]["input"]["arguments"] == {"city": "Paris", "days": 2, "unit": "F"}
    assert step["data"]["input"]["tool"] == "weather" and step["data"]["input"]["server"] == tools.url
    assert TOKEN not in json.dumps(step)

    # A tool error: ERROR with the server's text.
    failing, failing_hook = _publish(api, headers, mcp_canvas(account_id, "fail", {"reason": "{{node-1.why}}"}))
    failed = _run(api, headers, failing, failing_hook, {"why": "out of stock"}, count=1)
    assert failed["status"] == "ERROR"
    assert "The tool fail failed: Error executing tool fail: Refused: out of stock" in json.dumps(
        _task(api, headers, failed["id"], "node-2")
    )
    # A tool that hangs past the step's timeout (2 s): ERROR, within the bound.
    hanging, hanging_hook = _publish(api, headers, mcp_canvas(account_id, "slow", {"seconds": "60"}, timeout="2"))
    started = time.monotonic()
    slow = _run(api, headers, hanging, hanging_hook, {}, count=1)
    assert slow["status"] == "ERROR"
    assert "did not answer within 2 s" in json.dumps(_task(api, headers, slow["id"], "node-2"))
    assert time.monotonic() - started < 30

    # The api's listing is bounded too: a server that hangs (504), one that is gone (502).
    tools.hang = True
    try:
        started = time.monotonic()
        hung = api.get(f"/api/v1/app_users/{account_id}/mcp_tools", headers=headers)
        assert hung.status_code == 504 and "did not answer within 15 s" in hung.text, hung.text
        assert time.monotonic() - started < 25
    finally:
        tools.hang = False


def test_the_listing_of_a_server_that_is_gone_is_a_502(platform: Platform) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=60)
    headers = sign_up(api, "mcp-client-gone@example.com", "correct horse battery")
    with McpToolServer() as server:
        account_id = add_account(api, headers, 25, {"instance_url": server.url})
    gone = api.get(f"/api/v1/app_users/{account_id}/mcp_tools", headers=headers)
    assert gone.status_code == 502 and "Could not connect to the MCP server" in gone.text, gone.text


class _Orders(JsonHandler):
    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Orders.calls.append(body)
        self._reply(200, {"order": "A-17", "for": body.get("email")})


def test_a_flow_calls_a_tool_flow_through_konnectz_own_mcp(platform: Platform) -> None:
    _Orders.calls = []
    orders = LocalServer(_Orders)
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=60)
        headers = sign_up(api, "mcp-client-self@example.com", "correct horse battery")
        trigger = canvas_node(
            "node-1",
            "InHouse",
            "flow_call",
            1,
            "Called by a flow or AI tool",
            selectedEvent={"id": "flow_call", "name": "Flow Called"},
            selectedAddonsValue={
                "inputs": [{"key": "email", "label": "Customer e-mail", "type": "email", "required": True}],
                "description": "Places an order for a customer",
                "mcp": True,
            },
        )
        call = api_call_node(orders.url + "/orders", body=[{"key": "email", "value": "{{node-1.email}}"}])
        tool = publish_canvas(api, headers, chain_canvas([trigger, call], "Place order"))
        made = api.post(
            "/api/v1/mcp_tokens", headers=headers, json={"name": "self", "konnect_ids": [tool["konnect_id"]]}
        )
        assert made.status_code == 201, made.text
        url = platform.api_url.rstrip("/") + "/mcp"
        account_id = add_account(api, headers, 25, {"instance_url": url, "api_key": made.json()["token"]})
        name = f"place_order_{tool['konnect_id']}"
        listed = api.get(f"/api/v1/app_users/{account_id}/mcp_tools", headers=headers).json()["tools"]
        assert [t["name"] for t in listed] == [name]
        assert listed[0]["fields"][0]["name"] == "email" and listed[0]["fields"][0]["required"] is True

        konnect_id, hook = _publish(api, headers, mcp_canvas(account_id, name, {"email": "{{node-1.email}}"}))
        log = _run(api, headers, konnect_id, hook, {"email": "ada@example.com"}, count=1)
        assert log["status"] == "SUCCESS", log
        output = _task(api, headers, log["id"], "node-2")["data"]["output"]
        assert output["status"] == 200 and output["body"] == {"order": "A-17", "for": "ada@example.com"}
        assert _Orders.calls == [{"email": "ada@example.com"}]
    finally:
        orders.stop()
