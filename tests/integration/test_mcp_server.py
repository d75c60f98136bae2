"""The MCP server end to end (issue 38, item 3): published flows that opt in are tools at ``/mcp``,
called by the official MCP Python SDK's client, on real processes (api + runner + PostgreSQL + NATS).

- A flow "Called by a flow or AI tool" (inputs: email, required; quantity, a number) offered as an MCP
  tool → API Call to a local server. An MCP token naming it lists it (with its input schema) and not
  the account's other flows; calling it runs the flow once (a task log) and answers the API Call's reply.
- Bad arguments are a tool error naming the field, and no run starts.
- No token or a wrong one: 401; a revoked one: 401 at once; a tool the token does not name: 403;
  another account cannot make a token reaching this account's flows (422).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import Platform
from konnectz_devstack.testing import api_call_node, canvas_node, chain_canvas, publish_canvas, sign_up

pytestmark = pytest.mark.integration


class _Server(JsonHandler):
    """POST /orders records the body and answers an order."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Server.calls.append(body)
        self._reply(200, {"order": "A-17", "for": body.get("email"), "quantity": body.get("quantity")})


@pytest.fixture
def orders() -> Iterator[LocalServer]:
    _Server.calls = []
    server = LocalServer(_Server)
    try:
        yield server
    finally:
        server.stop()


def _tool_flow(url: str, name: str, *, mcp: bool = True) -> dict[str, Any]:
    trigger = canvas_node(
        "node-1",
        "InHouse",
        "flow_call",
        1,
        "Called by a flow or AI tool",
        selectedEvent={"id": "flow_call", "name": "Flow Called"},
        selectedAddonsValue={
            "inputs": [
                {"key": "email", "label": "Customer e-mail", "type": "email", "required": True},
                {"key": "quantity", "label": "Quantity", "type": "number"},
            ],
            "description": f"{name}: places an order for a customer",
            "mcp": mcp,
        },
    )
    call = api_call_node(
        url + "/orders",
        body=[{"key": "email", "value": "{{node-1.email}}"}, {"key": "quantity", "value": "{{node-1.quantity}}"}],
    )
    return chain_canvas([trigger, call], name)


def _client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http))


async def _list_and_call(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    async with _client(url, token) as client:
        tools = await client.list_tools()
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def _rpc(url: str, token: str | None, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return httpx.post(url, json=body, headers=headers, timeout=60)


def test_an_mcp_client_lists_and_calls_a_flow_and_tokens_bound_what_it_reaches(
    platform: Platform, orders: LocalServer
) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "mcp-owner@example.com", "correct horse battery")
    tool = publish_canvas(api, headers, _tool_flow(orders.url, "Place order"))
    other_tool = publish_canvas(api, headers, _tool_flow(orders.url, "Refund order"))
    not_offered = publish_canvas(api, headers, _tool_flow(orders.url, "Internal", mcp=False))
    made = api.post(
        "/api/v1/mcp_tokens",
        headers=headers,
        json={"name": "Claude", "konnect_ids": [tool["konnect_id"], not_offered["konnect_id"]]},
    )
    assert made.status_code == 201, made.text
    token, url = made.json()["token"], made.json()["mcp_url"]
    assert token.startswith("kzmcp_") and url.endswith("/mcp")  # the public URL's /mcp
    url = platform.api_url.rstrip("/") + "/mcp"
    name = f"place_order_{tool['konnect_id']}"

    tools, (good, bad) = asyncio.run(
        _list_and_call(url, token, [(name, {"email": "ada@example.com", "quantity": 2}), (name, {"quantity": "many"})])
    )
    # Listed: the offered flow it names, with its inputs as a JSON Schema; not the flow that is not
    # offered, nor the account's other tool the token does not name.
    assert [t.name for t in tools.tools] == [name]
    listed = tools.tools[0]
    assert listed.description == "Place order: places an order for a customer"
    assert listed.input_schema["required"] == ["email"]
    assert listed.input_schema["properties"]["email"]["format"] == "email"
    assert listed.input_schema["properties"]["quantity"]["type"] == "number"
    # The call ran the flow once and answered its last step's output.
    assert good.is_error is False, good
    assert good.structured_content is not None
    reply = good.structured_content["body"]  # the API Call's output: status, headers, body
    assert reply["order"] == "A-17" and reply["for"] == "ada@example.com" and good.structured_content["status"] == 200
    run_id = good.meta["konnectz/run_id"] if good.meta else None
    assert run_id
    assert [c["email"] for c in _Server.calls] == ["ada@example.com"]
    assert str(_Server.calls[0]["quantity"]) == "2"
    logs = api.get(f"/api/v1/task_logs/logs?konnect_id={tool['konnect_id']}", headers=headers).json()["task_logs"]
    assert [log["run_id"] for log in logs] == [run_id] and logs[0]["status"] == "SUCCESS"
    # Bad arguments: a tool error naming each field; no run started.
    assert bad.is_error is True
    text = bad.content[0].text
    assert "email: This field is required" in text and "quantity: Enter a number" in text
    assert len(_Server.calls) == 1

    # Without a token, with a made-up one: 401 with a Bearer challenge.
    for wrong in (None, "kzmcp_" + "x" * 43, "not-a-token"):
        refused = _rpc(url, wrong, "tools/list")
        assert refused.status_code == 401, refused.text
        assert refused.headers["www-authenticate"].startswith("Bearer")
    # A tool the token does not name (the account's own other tool): 403, and it did not run.
    other_name = f"refund_order_{other_tool['konnect_id']}"
    forbidden = _rpc(url, token, "tools/call", {"name": other_name, "arguments": {"email": "ada@example.com"}})
    assert forbidden.status_code == 403 and "does not reach" in forbidden.json()["error"]["message"]
    # Named but not offered as a tool: a JSON-RPC error saying why.
    internal = f"internal_{not_offered['konnect_id']}"
    unavailable = _rpc(url, token, "tools/call", {"name": internal, "arguments": {"email": "ada@example.com"}})
    assert unavailable.status_code == 200
    assert "not offered as an MCP tool" in unavailable.json()["error"]["message"]
    assert len(_Server.calls) == 1
    # GET (no event stream offered): 405.
    assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 405

    # Another account cannot make a token reaching these flows.
    stranger = sign_up(api, "mcp-stranger@example.com", "correct horse battery")
    theirs = api.post("/api/v1/mcp_tokens", headers=stranger, json={"name": "x", "konnect_ids": [tool["konnect_id"]]})
    assert theirs.status_code == 422 and f"No flow {tool['konnect_id']}" in theirs.json()["message"]

    # The token is listed without its secret; revoked, its next call is refused.
    (row,) = api.get("/api/v1/mcp_tokens", headers=headers).json()
    assert row["name"] == "Claude" and "token" not in row and token.startswith(row["prefix"])
    assert row["last_used_at"] is not None
    revoked = api.delete(f"/api/v1/mcp_tokens/{row['id']}", headers=headers)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert _rpc(url, token, "tools/list").status_code == 401
