"""A flow offered as an MCP tool, built by clicks in a real headless Chromium against the real stack
(issue 38, item 3): the "Called by a flow or AI tool" trigger with a described input, an API Call using
it, published; an MCP token made in Manage Account → MCP tokens and read from the dialog; the official
MCP SDK's client lists the tool and calls it, and the API Call receives the input."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import text_box

pytestmark = pytest.mark.e2e


class _Orders(JsonHandler):
    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Orders.calls.append(body)
        self._reply(200, {"order": "A-17"})


async def _list_and_call(url: str, token: str, name: str, arguments: dict[str, Any]) -> tuple[list[str], Any]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        return tools, await client.call_tool(name, arguments)


def test_a_flow_built_as_an_mcp_tool_is_called_by_an_mcp_client(page: Page, platform: Platform, ui) -> None:
    _Orders.calls = []
    server = LocalServer(_Orders)
    try:
        ui.new_flow(page, platform, "mcp")
        page.get_by_test_id("trigger-picker-search").fill("called")
        page.get_by_test_id("app-tile-flow_call").click()
        expect(page.get_by_test_id("node-summary-node-1")).to_have_text("1 input · MCP tool")
        page.get_by_test_id("flow-call-description-node-1").fill("Places an order for a customer")
        text_box(page, "flow-call-input-node-1-label-0").fill("Customer")
        ui.test_node(page, "node-1")
        ui.add_step(page, "add-action", "api", "api")
        text_box(page, "api-endpoint-url").fill(f"{server.url}/orders")
        page.get_by_test_id("api-body-add").click()
        text_box(page, "api-body-key-0").fill("customer")
        ui.reference(page, "api-body-value-0", "customer")
        konnect_id = ui.publish_flow(page, "Place order")

        page.goto(f"{platform.api_url}/account/mcp")
        page.get_by_test_id("mcp-token-name").fill("My assistant")
        page.get_by_test_id("mcp-token-flows").click()  # a multiple select: it stays open
        option = page.locator(f".ant-select-dropdown:visible [data-testid='mcp-flow-option-{konnect_id}']")
        expect(option).to_contain_text("Place order")
        option.dispatch_event("click")
        page.keyboard.press("Escape")
        page.get_by_test_id("mcp-token-create").click()
        shown = page.get_by_test_id("mcp-token-value")
        expect(shown).to_contain_text("Bearer kzmcp_")
        token = shown.inner_text().split("Bearer ", 1)[1].strip()

        name = f"place_order_{konnect_id}"
        call = _list_and_call(platform.api_url.rstrip("/") + "/mcp", token, name, {"customer": "Ada"})
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
            tools, result = pool.submit(asyncio.run, call).result(timeout=90)
        assert tools == [name]
        assert result.is_error is False, result
        assert result.structured_content["body"] == {"order": "A-17"}
        assert _Orders.calls == [{"customer": "Ada"}]
    finally:
        server.stop()
