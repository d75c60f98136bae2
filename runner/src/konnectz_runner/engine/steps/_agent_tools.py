"""The Agent step's tools: what the model may call (``docs/ai.md``, "The Agent step").

A :class:`Tool` has a name, a description and the JSON schema of its arguments (what the model reads),
and :meth:`Tool.call` runs it with the model's arguments. :func:`build_tools` turns the step's
:class:`~konnectz_contracts.steps.agent.AgentTool` list into tools, one source per kind:

- ``app_action`` (:class:`AppActionTool`): the catalogue app's action, sent as app actions are
  (:func:`~konnectz_runner.engine.steps.app_event.call_event`: the account's credentials from the broker, its
  rate budget, the outbound guard), with the card's fixed fields (references resolved) and the model's
  arguments for the fields left to it, and the tool call's own ``Idempotency-Key``.
- ``addon`` (:class:`AddonTool`): an add-on (:data:`~konnectz_contracts.steps.agent.ADDON_KINDS`) run as its
  step kind with the card's configuration and the model's arguments over it.
- ``flow`` and ``mcp``: the hooks :data:`FLOW_TOOLS` and :data:`MCP_TOOLS` (a factory from the tool's
  settings to a :class:`Tool`), set by the "Call a flow" and "MCP client" steps when they are wired in;
  unset, an agent with such a tool fails at its start saying so.

The model's arguments never reach the run's data through references: app actions take them as they are
(the fixed fields are resolved before the arguments are added), and add-ons run without the run's
outputs, so a ``{{node-1.x}}`` in the arguments resolves to nothing. Arguments that do not match the
schema raise :class:`BadArguments` (the loop hands the reason back to the model once).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import jsonschema
from pydantic import ValidationError

from konnectz_contracts.errors import StepError
from konnectz_contracts.manifest import App, Event, EventField
from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps import KINDS as CONTRACT_KINDS
from konnectz_contracts.steps.agent import AgentTool
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps import api_call, formatter, generator, hash, json_parse
from konnectz_runner.engine.steps.app_event import call_event, catalogue, credential_source

__all__ = [
    "FLOW_TOOLS",
    "MCP_TOOLS",
    "AddonTool",
    "AppActionTool",
    "BadArguments",
    "Tool",
    "ToolFactory",
    "ToolResult",
    "build_tools",
    "set_tool_factory",
]


class BadArguments(Exception):
    """The model's arguments do not fit the tool's schema (the message says how)."""


@dataclass
class ToolResult:
    """What a tool call gave: its output (handed back to the model), or the error it met."""

    output: Any = None
    error: str | None = None
    detail: dict[str, Any] | None = None  # what the task log may add (the requests sent)


class Tool(Protocol):
    name: str
    kind: str
    description: str

    def parameters(self) -> dict[str, Any]:
        """The JSON schema (an object) of the tool's arguments."""
        ...

    def check(self, arguments: Any) -> dict[str, Any]:
        """The arguments, checked against :meth:`parameters`; :class:`BadArguments` saying what is wrong."""
        ...

    async def call(self, arguments: dict[str, Any], ctx: StepContext) -> ToolResult:
        """Run the tool (``ctx.idempotency_key`` is the call's own); a failure is a ToolResult's error."""
        ...


ToolFactory = Callable[[AgentTool, StepContext], Tool]
#: Hooks for the tool kinds of steps not merged yet: "Call a flow" sets FLOW_TOOLS, "MCP client" MCP_TOOLS.
FLOW_TOOLS: ToolFactory | None = None
MCP_TOOLS: ToolFactory | None = None


def set_tool_factory(kind: str, factory: ToolFactory | None) -> None:
    """Wire the ``flow`` or ``mcp`` tool kind (the Call a flow and MCP client steps)."""
    global FLOW_TOOLS, MCP_TOOLS
    if kind == "flow":
        FLOW_TOOLS = factory
    elif kind == "mcp":
        MCP_TOOLS = factory
    else:
        raise ValueError(f"no tool kind {kind!r} to wire")


def _checked(schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        shown = str(arguments)[:200]
        raise BadArguments(f"the arguments must be a JSON object, got {shown!r}")
    try:
        jsonschema.validate(arguments, schema)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path)
        raise BadArguments(f"{where + ': ' if where else ''}{exc.message}"[:500]) from None
    return arguments


_TYPES: dict[str, dict[str, Any]] = {
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "array": {"type": "array"},
    "object": {"type": "object"},
}


def _field_schema(field: EventField) -> dict[str, Any]:
    schema = dict(_TYPES.get(field.type, {"type": "string"}))
    text = " ".join(p for p in (field.label, field.help) if p)
    if text:
        schema["description"] = text[:500]
    if field.options:
        schema["enum"] = [o.value for o in field.options]
    return schema


class AppActionTool:
    """An action of a catalogue app, with the card's fixed fields and the model's arguments."""

    kind = "app_action"

    def __init__(self, tool: AgentTool, app: App, event: Event, fixed: dict[str, Any]) -> None:
        self.tool = tool
        self.name = tool.name
        self.app = app
        self.event = event
        self.fixed = fixed
        self.description = tool.description or f"{event.label} in {app.name}. {event.help}".strip()[:2000]
        self.fields = {f.key: f for f in event.fields}

    def parameters(self) -> dict[str, Any]:
        keys = [k for k in self.tool.agent_fields if k in self.fields]
        return {
            "type": "object",
            "properties": {k: _field_schema(self.fields[k]) for k in keys},
            "required": [k for k in keys if self.fields[k].required and k not in self.fixed],
            "additionalProperties": False,
        }

    def check(self, arguments: Any) -> dict[str, Any]:
        return _checked(self.parameters(), arguments)

    async def call(self, arguments: dict[str, Any], ctx: StepContext) -> ToolResult:
        values = {**self.fixed, **arguments}
        account_id = self.tool.account_id
        detail: dict[str, Any] = {"app_id": self.app.id, "event": self.event.key}
        try:
            credentials: dict[str, Any] = {}
            if self.app.needs_account:
                if account_id is None:
                    raise StepError(f"Choose a {self.app.name} account for the tool {self.name}")
                credentials = await credential_source()(account_id, ctx.konnect_id, ctx.owner_id, False)
            body, requests = await call_event(
                ctx, self.app, self.event, values, credentials, account_id=account_id, refresh=None
            )
            detail["requests"] = requests
        except StepError as exc:
            return ToolResult(error=str(exc), detail=detail)
        return ToolResult(output=body, detail=detail)


_ADDON_RUNS: dict[str, Callable[[Any, StepContext], Awaitable[Outcome]]] = {
    "api_call": api_call.run,
    "formatter": formatter.run,
    "generator": generator.run,
    "hash": hash.run,
    "json_parse": json_parse.run,
}
_HIDDEN = {"id", "name", "kind", "on_error"}


class AddonTool:
    """An add-on run as its step kind, with the card's configuration and the model's arguments over it."""

    kind = "addon"

    def __init__(self, tool: AgentTool, fixed: dict[str, Any]) -> None:
        self.tool = tool
        self.name = tool.name
        self.fixed = fixed
        self.step_kind = tool.step_kind or ""
        self.config = CONTRACT_KINDS[self.step_kind].Config
        self.description = tool.description or f"The {self.step_kind} add-on."

    def parameters(self) -> dict[str, Any]:
        full = self.config.model_json_schema()
        properties = full.get("properties", {})
        keys = [k for k in self.tool.agent_fields if k in properties and k not in _HIDDEN]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {k: properties[k] for k in keys},
            "required": [k for k in full.get("required", []) if k in keys and k not in self.fixed],
            "additionalProperties": False,
        }
        if "$defs" in full:
            schema["$defs"] = full["$defs"]
        return schema

    def check(self, arguments: Any) -> dict[str, Any]:
        checked = _checked(self.parameters(), arguments)
        try:
            self._config(checked)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise BadArguments(f"{where}: {first.get('msg', 'invalid')}"[:500]) from None
        return checked

    def _config(self, arguments: dict[str, Any]) -> Any:
        return self.config.model_validate(
            {**self.fixed, **arguments, "id": f"tool-{self.name}", "name": self.name, "kind": self.step_kind}
        )

    async def call(self, arguments: dict[str, Any], ctx: StepContext) -> ToolResult:
        config = self._config(arguments)
        # the add-on runs without the run's outputs: no reference in the model's arguments reaches the run's data
        outcome: Outcome = await _ADDON_RUNS[self.step_kind](config, replace(ctx, outputs={}, substeps=None))
        if outcome.status == "ERROR":
            return ToolResult(error=outcome.error or "the add-on failed", detail={"input": outcome.input})
        return ToolResult(output=outcome.output, detail={"input": outcome.input})


def _resolved(value: Any, ctx: StepContext, warnings: list[str]) -> Any:
    if isinstance(value, str):
        return resolve_value(value, ctx.outputs, warnings)
    if isinstance(value, list):
        return [_resolved(v, ctx, warnings) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v, ctx, warnings) for k, v in value.items()}
    return value


def build_tools(tools: list[AgentTool], ctx: StepContext, warnings: list[str]) -> dict[str, Tool]:
    """The step's tools by name; :class:`StepError` naming a tool that cannot be used (an unknown app or
    action, a field the app does not have, a tool kind not wired in)."""
    built: dict[str, Tool] = {}
    for tool in tools:
        if tool.kind == "app_action":
            app = catalogue().get(tool.app_id or 0)
            event = app.event(tool.event or "") if app is not None else None
            if app is None or event is None or event.kind != "action" or event.operation is None:
                raise StepError(f"Tool {tool.name}: unknown app action {tool.app_id}/{tool.event}")
            known = {f.key for f in event.fields}
            unknown = [k for k in [*(f.key for f in tool.fixed), *tool.agent_fields] if k not in known]
            if unknown:
                raise StepError(f"Tool {tool.name}: {app.name} ({event.label}) has no field {', '.join(unknown)}")
            fixed = {f.key: resolve_value(f.value, ctx.outputs, warnings) for f in tool.fixed}
            built[tool.name] = AppActionTool(tool, app, event, fixed)
        elif tool.kind == "addon":
            raw = json.loads(tool.config_json) if tool.config_json.strip() else {}
            built[tool.name] = AddonTool(tool, _resolved(raw, ctx, warnings))
        else:
            factory = FLOW_TOOLS if tool.kind == "flow" else MCP_TOOLS
            if factory is None:
                what = "a sub-flow" if tool.kind == "flow" else "an MCP server's tool"
                raise StepError(
                    f"Tool {tool.name} ({what}) cannot be called by this runner yet: tools of kind {tool.kind!r} "
                    "are not available in this version (docs/ai.md)"
                )
            built[tool.name] = factory(tool, ctx)
    return built
