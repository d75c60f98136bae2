"""MCP tool: call one tool of an MCP server (an "MCP Server" account: its URL and optional token or header).

The step is the ``call_tool`` action of the in-house app "MCP Server" (``catalogue/apps/mcp_server.yaml``,
app id 25), shown by the editor's general action card: the account (``selectedAccount.id``), then the
fields (``configResponses``): ``tool`` (a choice listed live from the server by the api), ``timeout``
(seconds, 1 to :data:`MAX_TIMEOUT_SECONDS`, default :data:`DEFAULT_TIMEOUT_SECONDS`) and one field per
argument of the tool, listed from its input JSON Schema, whose config keys are :data:`ARG_PREFIX` + the
argument's name (``arg.city``). Argument values are text with references (``{{node-1.city}}``); the
runner reads the tool's input schema when it runs and converts each value to the type the schema says
(a number, an integer, true/false, a JSON object or array); an empty value is left out.

Output: the tool's ``structuredContent``; else its text content parsed as JSON (an object as it is,
another value as ``{"result": value}``); else ``{"text": ...}``. A tool error (``isError``) fails the
step with the server's text (the step's On Error policy applies). See ``docs/mcp.md``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, integer, is_blank, text, validated
from konnectz_contracts.model import KeyValue, StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "ARG_PREFIX",
    "DEFAULT_TIMEOUT_SECONDS",
    "KIND",
    "MAX_ARGUMENTS",
    "MAX_TIMEOUT_SECONDS",
    "PROVIDERS",
    "TOOL_NAME",
    "Config",
    "compile_node",
]

KIND = "mcp_tool"
#: The in-house app whose action this kind runs.
PROVIDERS = ("mcp_server",)
#: An argument's config key: this prefix and the argument's name.
ARG_PREFIX = "arg."
MAX_ARGUMENTS = 100
DEFAULT_TIMEOUT_SECONDS = 30
MAX_TIMEOUT_SECONDS = 300
#: A tool's name as the MCP specification allows it (1 to 128 of letters, digits, ``_``, ``-``, ``.``),
#: widened to 200 characters and ``/`` (servers in the wild use them).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_./-]{1,200}$")


class Config(StepBase):
    kind: Literal["mcp_tool"] = "mcp_tool"
    account_id: int | None = Field(default=None, ge=1, lt=2**63)
    tool: str = Field(min_length=1, max_length=200, description="The tool's name")
    arguments: list[KeyValue] = Field(
        default_factory=list,
        max_length=MAX_ARGUMENTS,
        description="The tool's arguments: name and value (text with references), converted by the input schema",
    )
    timeout_seconds: int = Field(default=DEFAULT_TIMEOUT_SECONDS, ge=1, le=MAX_TIMEOUT_SECONDS)


def _value(value: Any) -> str:
    try:
        return text(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False)


def compile_node(node: Node) -> Config:
    values = config_values(node)
    account = (node.data.model_extra or {}).get("selectedAccount") or {}
    account_id = str(account.get("id") or "") if isinstance(account, dict) else ""
    if not account_id.isdigit() or not 1 <= int(account_id) < 2**63:
        raise fail(node, "choose an MCP server account")
    tool = str(values.get("tool") or "").strip()
    if not tool:
        raise fail(node, "choose the tool")
    if not TOOL_NAME.match(tool) and not tool.startswith("{{"):
        raise fail(node, "the tool's name must be 1 to 200 letters, digits, _, -, . or /")
    timeout = values.get("timeout")
    seconds = DEFAULT_TIMEOUT_SECONDS
    if not is_blank(timeout):
        seconds = integer(node, timeout, what="Timeout")
        if not 1 <= seconds <= MAX_TIMEOUT_SECONDS:
            raise fail(node, f"the timeout must be from 1 to {MAX_TIMEOUT_SECONDS} seconds")
    arguments = [
        KeyValue(key=key.removeprefix(ARG_PREFIX), value=_value(value))
        for key, value in values.items()
        if key.startswith(ARG_PREFIX) and key != ARG_PREFIX
    ]
    if len(arguments) > MAX_ARGUMENTS:
        raise fail(node, f"a tool takes at most {MAX_ARGUMENTS} arguments here")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name.strip() or "MCP tool",
        account_id=int(account_id),
        tool=tool,
        arguments=arguments,
        timeout_seconds=seconds,
    )
