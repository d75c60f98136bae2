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
- ``flow`` (:class:`FlowTool`): another published flow of the account, called as a sub-flow through the
  run's :data:`~konnectz_runner.engine.context.FLOW_CALLS` (the api's checks: same owner, published, the
  flow-call trigger, the arguments against its inputs, the depth), waited for within the agent's time
  bound; its parameters are the flow's inputs the card stored (``flow_inputs``) as JSON Schema.
- ``mcp`` (:class:`McpTool`): a tool of the MCP server of an "MCP Server" account (credentials from the
  broker), called with :mod:`konnectz_runner.apps.mcp_client` through the outbound guard; its parameters are
  the tool's input schema, listed from the server once when the step starts (:func:`prepare_tools`).

The hooks :data:`FLOW_TOOLS` and :data:`MCP_TOOLS` (a factory from the tool's settings to a :class:`Tool`)
build those two kinds; set to None (:func:`set_tool_factory`), an agent with such a tool fails at its start.

The model's arguments never reach the run's data through references: app actions take them as they are
(the fixed fields are resolved before the arguments are added), and add-ons run without the run's
outputs, so a ``{{node-1.x}}`` in the arguments resolves to nothing. Arguments that do not match the
schema raise :class:`BadArguments` (the loop hands the reason back to the model once).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import jsonschema
from pydantic import ValidationError

from konnectz_contracts.errors import StepError
from konnectz_contracts.limits import MCP_ARGUMENTS_MAX_BYTES, MCP_LIST_MAX_BYTES, MCP_REPLY_MAX_BYTES
from konnectz_contracts.manifest import App, Event, EventField
from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps import KINDS as CONTRACT_KINDS
from konnectz_contracts.steps.agent import AgentTool
from konnectz_contracts.triggers.flow_call import FlowCallTrigger, input_schema
from konnectz_runner import apps
from konnectz_runner.engine.context import FLOW_CALLS, CallRefused, Outcome, StepContext
from konnectz_runner.engine.steps import api_call, formatter, generator, hash, json_parse
from konnectz_runner.engine.steps.app_event import call_event, catalogue, credential_source

__all__ = [
    "FLOW_TOOLS",
    "MCP_TOOLS",
    "AddonTool",
    "AppActionTool",
    "BadArguments",
    "FlowTool",
    "McpTool",
    "Tool",
    "ToolFactory",
    "ToolResult",
    "build_tools",
    "prepare_tools",
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


ToolFactory = Callable[[AgentTool, "Bounds"], Tool]


@dataclass(frozen=True)
class Bounds:
    """What a tool needs of its agent step: the step's id and the monotonic instant its time bound ends."""

    step_id: str
    deadline: float

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


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
    except (jsonschema.SchemaError, RecursionError):  # a server's schema that is not one: the server decides
        pass
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


#: What a sub-flow tool answers where no flow can be started (Test & Review).
FLOW_NOT_HERE = "A sub-flow tool starts the flow only in a published flow's run (not in Test & Review)"
#: The longest a called step id may be (:class:`~konnectz_contracts.events.CallerLink`).
_STEP_ID_MAX = 100


class FlowTool:
    """Another published flow of the account, called as a sub-flow: started with the model's arguments as
    its inputs and waited for (holding the agent's slot) until it ends or the agent's time bound."""

    kind = "flow"

    def __init__(self, tool: AgentTool, bounds: Bounds) -> None:
        assert tool.konnect_id is not None
        self.tool = tool
        self.name = tool.name
        self.flow_id = tool.konnect_id
        self.bounds = bounds
        self.description = tool.description or f"Runs the flow {self.flow_id} of this account and returns its result."
        self.schema = input_schema(FlowCallTrigger(inputs=tool.flow_inputs))

    def parameters(self) -> dict[str, Any]:
        return self.schema

    def check(self, arguments: Any) -> dict[str, Any]:
        return _checked(self.schema, arguments)

    def step_id(self, ctx: StepContext) -> str:
        """The caller's step id the called run links to: the agent's, and the tool call's own key (the
        same on every delivery: the called run id derived from it is started once)."""
        key = ctx.idempotency_key or "call"
        joined = f"{self.bounds.step_id}/{key}"
        return joined if len(joined) <= _STEP_ID_MAX else key[:_STEP_ID_MAX]

    async def call(self, arguments: dict[str, Any], ctx: StepContext) -> ToolResult:
        detail: dict[str, Any] = {"flow_id": self.flow_id}
        calls = FLOW_CALLS.get()
        if calls is None:
            return ToolResult(error=FLOW_NOT_HERE, detail=detail)
        seconds = self.bounds.left()
        if seconds < 1:  # not started: its result could not be waited for
            return ToolResult(error="The time limit (Max seconds) leaves no time to run the flow", detail=detail)
        try:
            body = await calls.call(self.flow_id, arguments, step_id=self.step_id(ctx), seconds=seconds)
        except CallRefused as exc:
            return ToolResult(error=exc.message, detail=detail)
        except TimeoutError:
            return ToolResult(
                error=f"The flow {self.flow_id} did not end within the agent's time limit ({seconds:.0f} s left)",
                detail=detail,
            )
        detail.update(
            run_id=body.get("run_id"),
            flow_name=body.get("flow_name"),
            status=body.get("status"),
            responded=body.get("responded"),
        )
        if body.get("status") != "SUCCESS":
            name = body.get("flow_name") or f"flow {self.flow_id}"
            return ToolResult(error=f"The flow {name} failed: {body.get('error') or body.get('status')}", detail=detail)
        return ToolResult(output=body.get("result"), detail=detail)


class McpTool:
    """A tool of an MCP server (an "MCP Server" account): its input schema listed when the step starts
    (:meth:`prepare`), each call one session through the outbound guard, bounded by the agent's time."""

    kind = "mcp"

    def __init__(self, tool: AgentTool, bounds: Bounds) -> None:
        assert tool.account_id is not None and tool.mcp_tool
        self.tool = tool
        self.name = tool.name
        self.bounds = bounds
        self.remote = tool.mcp_tool
        self.account_id = tool.account_id
        self.description = tool.description
        self.schema: dict[str, Any] = {"type": "object"}
        self.server: Any = None  # mcp_client.McpServer, once prepared

    def parameters(self) -> dict[str, Any]:
        return self.schema

    def check(self, arguments: Any) -> dict[str, Any]:
        return _checked(self.schema, arguments)

    def prepared(self, server: Any, listed: dict[str, Any]) -> None:
        """Take the server and the tool's listing (:func:`prepare_tools`); :class:`StepError` when it has none."""
        found = listed.get(self.remote)
        if found is None:
            names = ", ".join(sorted(listed)[:20]) or "none"
            raise StepError(f"Tool {self.name}: the MCP server has no tool {self.remote!r} (its tools: {names})")
        schema = dict(found.input_schema) if isinstance(found.input_schema, dict) else {}
        schema["type"] = "object"
        self.schema = schema
        self.server = server
        if not self.description:
            self.description = (found.description or found.title or f"The MCP tool {self.remote}.")[:2000]

    async def call(self, arguments: dict[str, Any], ctx: StepContext) -> ToolResult:
        mcp = apps.mcp_client
        detail: dict[str, Any] = {"tool": self.remote, "server": self.server.url.split("?", 1)[0]}
        if len(json.dumps(arguments, ensure_ascii=False).encode("utf-8")) > MCP_ARGUMENTS_MAX_BYTES:
            return ToolResult(
                error=f"The arguments are larger than {MCP_ARGUMENTS_MAX_BYTES // 1024} KiB", detail=detail
            )
        seconds = max(1.0, self.bounds.left())
        try:
            result = await mcp.call_tool(
                self.server, ctx.guard, self.remote, arguments, timeout=seconds, max_bytes=MCP_REPLY_MAX_BYTES
            )
        except StepError as exc:
            return ToolResult(error=str(exc), detail=detail)
        detail["content_types"] = result.content_types
        if result.is_error:
            return ToolResult(
                error=f"The tool {self.remote} failed: {result.text[:1000] or '(no text)'}", detail=detail
            )
        return ToolResult(output=result.output, detail=detail)


#: The default factories of the flow and mcp kinds (see :func:`set_tool_factory`).
FLOW_TOOLS: ToolFactory | None = FlowTool
MCP_TOOLS: ToolFactory | None = McpTool


async def prepare_tools(tools: dict[str, Tool], ctx: StepContext) -> None:
    """List the tools of each MCP server the step's MCP tools use (once per account, in
    :data:`~konnectz_runner.apps.mcp_client.LIST_TIMEOUT_SECONDS` and
    :data:`~konnectz_contracts.limits.MCP_LIST_MAX_BYTES` at most): their schemas and descriptions.
    :class:`StepError` naming the tool whose server could not be listed."""
    wanted = [t for t in tools.values() if isinstance(t, McpTool)]
    if not wanted:
        return
    mcp = apps.mcp_client
    listings: dict[int, tuple[Any, dict[str, Any]]] = {}
    for tool in wanted:
        if tool.account_id not in listings:
            try:
                credentials = await credential_source()(tool.account_id, ctx.konnect_id, ctx.owner_id, False)
                server = mcp.McpServer.of(credentials)
                listed = await mcp.list_tools(
                    server, ctx.guard, timeout=mcp.LIST_TIMEOUT_SECONDS, max_bytes=MCP_LIST_MAX_BYTES
                )
            except StepError as exc:
                raise StepError(f"Tool {tool.name}: the MCP server's tools could not be listed: {exc}") from None
            listings[tool.account_id] = (server, {t.name: t for t in listed})
        server, by_name = listings[tool.account_id]
        tool.prepared(server, by_name)


def _resolved(value: Any, ctx: StepContext, warnings: list[str]) -> Any:
    if isinstance(value, str):
        return resolve_value(value, ctx.outputs, warnings)
    if isinstance(value, list):
        return [_resolved(v, ctx, warnings) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v, ctx, warnings) for k, v in value.items()}
    return value


def build_tools(
    tools: list[AgentTool], ctx: StepContext, warnings: list[str], bounds: Bounds | None = None
) -> dict[str, Tool]:
    """The step's tools by name; :class:`StepError` naming a tool that cannot be used (an unknown app or
    action, a field the app does not have, a tool kind not wired in). MCP tools still need
    :func:`prepare_tools` (their schemas are listed from their servers)."""
    bounds = bounds or Bounds(step_id="agent", deadline=time.monotonic() + 300)
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
            built[tool.name] = factory(tool, bounds)
    return built
