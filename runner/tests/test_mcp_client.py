"""The MCP client (konnectz_runner.apps.mcp_client) against a local server made with the official MCP Python SDK
(konnectz_devstack.mcp_tools: MCPServer over Streamable HTTP), in both of its modes (sessions with event
streams; stateless JSON replies): tools listed with their input schemas, calls with typed arguments, a tool
error, the guard (a private address, a name that resolves to one), a reply over the limit, a server that
hangs (bounded), a server that refuses the token (HTTP 401 named), a server that is not MCP."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from konnectz_contracts.errors import ConnectFailed, HttpFailed, RefusedError, StepError, TimedOut
from konnectz_devstack.mcp_tools import McpToolServer
from konnectz_runner.apps import mcp_client as mcp
from konnectz_runner.apps.netguard import NetGuard, parse_networks

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))
TOKEN = "tok-0123456789"


@pytest.fixture(scope="module", params=["sessions", "stateless-json"])
def server(request: pytest.FixtureRequest) -> Iterator[McpToolServer]:
    stateless = request.param == "stateless-json"
    with McpToolServer(token=TOKEN, stateless=stateless, json_response=stateless) as running:
        yield running


def _server(url: str, **credentials: str) -> mcp.McpServer:
    return mcp.McpServer.of({"instance_url": url, "api_key": TOKEN, **credentials})


async def test_lists_tools_and_calls_one_with_structured_output(server: McpToolServer) -> None:
    tools = {t.name: t for t in await mcp.list_tools(_server(server.url), LOCAL)}
    assert set(tools) == {"add", "weather", "fail", "slow", "big", "deep"}
    weather = tools["weather"]
    assert weather.description == "The forecast of a city for some days."
    assert weather.input_schema["required"] == ["city"]
    assert server.headers[-1]["authorization"] == f"Bearer {TOKEN}"
    fields = {f["name"]: f for f in mcp.schema_fields(weather.input_schema)}
    assert fields["city"]["required"] is True and fields["city"]["type"] == "string"
    assert fields["days"]["type"] == "integer" and fields["days"]["required"] is False
    assert fields["unit"]["options"] == ["C", "F"]
    assert fields["tags"]["type"] == "array" and "(a JSON array)" in fields["tags"]["help"]

    arguments = mcp.typed_arguments(
        {"city": "Paris", "days": "2", "unit": "F", "tags": '["a", "b"]', "extra": ""}, weather.input_schema
    )
    assert arguments == {"city": "Paris", "days": 2, "unit": "F", "tags": ["a", "b"]}
    result = await mcp.call_tool(_server(server.url), LOCAL, "weather", arguments)
    assert result.is_error is False
    assert result.output == {"city": "Paris", "days": 2, "unit": "F", "tags": ["a", "b"], "forecast": ["sunny"] * 2}
    added = await mcp.call_tool(_server(server.url), LOCAL, "add", {"a": 2, "b": 40})
    assert added.output == {"result": 42} and added.text == "42"


async def test_a_tool_error_is_a_result_not_an_exception(server: McpToolServer) -> None:
    result = await mcp.call_tool(_server(server.url), LOCAL, "fail", {"reason": "out of stock"})
    assert result.is_error is True
    assert result.text == "Error executing tool fail: Refused: out of stock"  # the SDK names the tool
    # Arguments the server refuses (its own validation): a tool error too.
    bad = await mcp.call_tool(_server(server.url), LOCAL, "add", {"a": "many"})
    assert bad.is_error is True and "a" in bad.text


def test_arguments_that_are_not_their_type_name_the_argument() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "ok": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
    }
    assert mcp.typed_arguments({"n": "-3", "ok": "yes"}, schema) == {"n": -3, "ok": True}
    with pytest.raises(StepError, match="The argument 'n' must be a whole number"):
        mcp.typed_arguments({"n": "three"}, schema)
    with pytest.raises(StepError, match="The argument 'ok' must be true or false"):
        mcp.typed_arguments({"ok": "perhaps"}, schema)


async def test_the_guard_refuses_private_addresses_before_and_at_connect(server: McpToolServer) -> None:
    requests = len(server.headers)
    with pytest.raises(RefusedError, match="private address"):
        await mcp.list_tools(_server(server.url), NetGuard())
    # A name that resolves to a private address (localhost) is refused too.
    with pytest.raises(RefusedError, match="private address"):
        await mcp.list_tools(_server(server.url.replace("127.0.0.1", "localhost")), NetGuard())
    with pytest.raises(RefusedError, match="only http and https"):
        await mcp.list_tools(_server("file:///etc/passwd"), LOCAL)
    assert len(server.headers) == requests  # nothing reached the server


async def test_http_errors_and_unreachable_servers_say_so(server: McpToolServer) -> None:
    with pytest.raises(HttpFailed, match=r"answered HTTP 401 \(check the account's token\)") as refused:
        await mcp.list_tools(mcp.McpServer.of({"instance_url": server.url, "api_key": "wrong-token"}), LOCAL)
    assert "wrong-token" not in str(refused.value)
    with pytest.raises(HttpFailed, match=r"answered HTTP 404"):
        await mcp.list_tools(_server(server.url + "/nowhere"), LOCAL)
    with pytest.raises(ConnectFailed, match="Could not connect"):
        await mcp.list_tools(_server("http://127.0.0.1:9/mcp"), LOCAL)


async def test_a_reply_over_the_limit_and_a_hanging_server_are_bounded(server: McpToolServer) -> None:
    with pytest.raises(mcp.McpProtocolError, match="nested deeper than 64 levels"):
        await mcp.call_tool(_server(server.url), LOCAL, "deep", {"levels": 100})
    assert (await mcp.call_tool(_server(server.url), LOCAL, "deep", {"levels": 3})).output == {"in": {"in": {"in": {}}}}
    with pytest.raises(mcp.McpReplyTooLarge):
        await mcp.call_tool(_server(server.url), LOCAL, "big", {"kib": 64}, max_bytes=32 * 1024)
    started = time.monotonic()
    with pytest.raises(TimedOut, match="did not answer within 1 s"):
        await mcp.call_tool(_server(server.url), LOCAL, "slow", {"seconds": 30}, timeout=1)
    assert time.monotonic() - started < 5
    server.hang = True
    try:
        started = time.monotonic()
        with pytest.raises(TimedOut):
            await mcp.list_tools(_server(server.url), LOCAL, timeout=1)
        assert time.monotonic() - started < 5
    finally:
        server.hang = False


def test_account_fields_are_checked() -> None:
    with pytest.raises(StepError, match="no server URL"):
        mcp.McpServer.of({"instance_url": " "})
    with pytest.raises(StepError, match="is not a header one may set"):
        mcp.McpServer.of({"instance_url": "https://x.example/mcp", "header_name": "Content-Length"})
    with pytest.raises(StepError, match="line break"):
        mcp.McpServer.of({"instance_url": "https://x.example/mcp", "header_name": "X-Key", "header_value": "a\r\nb"})
    server = mcp.McpServer.of(
        {"instance_url": "https://x.example/mcp", "header_name": "X-Key", "header_value": "k-123"}
    )
    assert server.headers == {"X-Key": "k-123"}


async def test_a_custom_header_is_sent(server: McpToolServer) -> None:
    custom = mcp.McpServer.of(
        {"instance_url": server.url, "api_key": TOKEN, "header_name": "X-Tenant", "header_value": "acme"}
    )
    await mcp.list_tools(custom, LOCAL)
    assert server.headers[-1]["x-tenant"] == "acme"


async def test_a_server_that_is_not_mcp() -> None:
    from konnectz_devstack.fake_apps import JsonHandler, LocalServer

    class Html(JsonHandler):
        def do_POST(self) -> None:
            self._reply(200, {"not": "json-rpc"})

    plain = LocalServer(Html)
    try:
        with pytest.raises(mcp.McpProtocolError):
            await mcp.list_tools(_server(plain.url + "/mcp"), LOCAL, timeout=5)
    finally:
        plain.stop()
