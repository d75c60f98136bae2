"""Runs the ``mcp_tool`` step; its config is :mod:`konnectz_contracts.steps.mcp_tool` (``docs/mcp.md``).

One session with the account's MCP server (:mod:`konnectz_runner.apps.mcp_client`: the official SDK's
client over Streamable HTTP, through the outbound guard, bounded by the step's timeout as a whole and
by :data:`~konnectz_contracts.limits.MCP_REPLY_MAX_BYTES` per reply): the server's tools are listed (the
tool's input schema converts the arguments typed as text to their types), then the tool is called.

The task log shows the server's URL (without its query), the tool, the arguments as sent and the result;
never the account's token or header. A tool error (``isError``) fails the step with the server's text;
the step's On Error policy decides what then (a retry repeats the call: tools may have effects).
"""

from __future__ import annotations

import json
from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.limits import MCP_ARGUMENTS_MAX_BYTES, MCP_REPLY_MAX_BYTES
from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.mcp_tool import TOOL_NAME, Config
from konnectz_runner import apps
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.app_event import credential_source

__all__ = ["ERROR_TEXT_CHARS", "run"]

#: How much of a tool error's text the step's error shows (the whole text is in the output).
ERROR_TEXT_CHARS = 1000


async def run(config: Config, ctx: StepContext) -> Outcome:
    mcp = apps.mcp_client  # loaded on first use (the SDK's import is not paid by flows without this step)
    warnings: list[str] = []  # references that resolved to nothing
    tool = resolve(config.tool, ctx.outputs, warnings).strip()
    values = {arg.key: resolve(arg.value, ctx.outputs, warnings) for arg in config.arguments}
    recorded: dict[str, Any] = {"tool": tool, "arguments": values, "timeout_seconds": config.timeout_seconds}
    if warnings:
        recorded["warnings"] = warnings
    try:
        if not TOOL_NAME.match(tool):
            raise StepError(f"The tool's name {tool[:200]!r} is not a tool name (letters, digits, _, -, . or /)")
        if config.account_id is None:
            raise StepError("Choose an MCP Server account for this step")
        credentials = await credential_source()(config.account_id, ctx.konnect_id, ctx.owner_id, False)
        server = mcp.McpServer.of(credentials)
        recorded["server"] = server.url.split("?", 1)[0]
        async with mcp.connect(
            server, ctx.guard, timeout=config.timeout_seconds, max_bytes=MCP_REPLY_MAX_BYTES
        ) as session:
            listed = {t.name: t for t in await session.list_tools()}
            found = listed.get(tool)
            if found is None:
                names = ", ".join(sorted(listed)[:20]) or "none"
                raise StepError(f"The MCP server has no tool {tool!r} (its tools: {names})")
            arguments = mcp.typed_arguments(values, found.input_schema)
            recorded["arguments"] = arguments
            if len(json.dumps(arguments, ensure_ascii=False).encode("utf-8")) > MCP_ARGUMENTS_MAX_BYTES:
                raise StepError(f"The arguments are larger than {MCP_ARGUMENTS_MAX_BYTES // 1024} KiB")
            result = await session.call_tool(tool, arguments)
        recorded["content_types"] = result.content_types
        if result.is_error:
            failed = Outcome.from_error(
                StepError(f"The tool {tool} failed: {result.text[:ERROR_TEXT_CHARS] or '(no text)'}"),
                input=recorded,
                output=result.output,
            )
            return failed
    except StepError as exc:
        return Outcome.from_error(exc, input=recorded)
    return Outcome(status="SUCCESS", output=result.output, input=recorded)
