"""AI Agent (in-house add-on, catalogue app 24): a model that calls tools until it has an answer.

The step sends its instructions (the system message) and its prompt (references allowed) to a chat model
through an account of a model provider's app (OpenAI 120, OpenAI-compatible Model 132, Anthropic 133; the
same client as Ask AI), with the tools chosen in its card. While the model answers with tool calls, the
runner calls each tool and hands the results back; the model's first reply without a tool call is the
answer. Each tool call is a journaled sub-step: a runner killed mid-loop resumes without calling a
finished tool again (docs/ai.md, "The Agent step").

Tools (:class:`AgentTool`, at most :data:`MAX_TOOLS`), by ``kind``:

- ``app_action``: an action of a catalogue app (``app_id``, ``event``, ``account_id``): ``fixed`` fields are
  set in the card (references allowed), ``agent_fields`` are the fields the model fills (its arguments);
  the call is the app action's own request (:mod:`konnectz_contracts.steps.app_event`).
- ``addon``: an add-on run with the model's arguments (``step_kind`` among :data:`ADDON_KINDS`), its fixed
  configuration in ``config_json`` (a JSON object; the model's arguments for ``agent_fields`` go over it).
- ``flow``: another published flow of the account that starts with *Called by a flow or AI tool*, called
  as a sub-flow (``konnect_id``); ``flow_inputs`` are its trigger's inputs as the card read them when the
  flow was picked (the tool's parameters: :func:`~konnectz_contracts.triggers.flow_call.input_schema`). The
  api checks the arguments against the flow's current inputs when the call starts.
- ``mcp``: a tool (``mcp_tool``, the server's name for it) of the MCP server of an "MCP Server" account
  (``account_id``, app 25: its URL and token come from the credentials broker); ``mcp_server`` is only the
  server's URL as the card shows it. The tool's input schema is listed from the server when the step starts.

Limits (:class:`Config`): ``max_iterations`` model calls (default 10, at most :data:`MAX_ITERATIONS`),
``max_total_tokens`` (input and output of every model call together), ``max_seconds`` for the whole loop.
Reaching one ends the step with an error saying which (never a loop without end).

Memory: ``conversation_key`` (a template, e.g. ``{{node-1.chat_id}}``): the conversation's earlier turns,
tool calls and results included, are kept by the api in PostgreSQL (bounded:
:data:`~konnectz_contracts.limits.AGENT_MEMORY_MAX_TURNS`, :data:`~konnectz_contracts.limits.AGENT_MEMORY_MAX_BYTES`)
and sent before the prompt. Blank: no memory, every run (and every item after an iterator) is its own
conversation.

From the canvas: the node's ``data.agent`` object (the web's Agent card writes it) with the keys of
:class:`Config` (tools as a list of objects with the keys of :class:`AgentTool`).

Output: ``{"answer", "data", "iterations", "tokens_in", "tokens_out", "tool_calls": [{"id", "tool",
"kind", "iteration", "input", "output", "error", "duration_ms"}], "model", "finish_reason", "truncated",
"conversation_key"}``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import fail, is_blank, validated
from konnectz_contracts.limits import AI_PROMPT_MAX_BYTES, AI_SCHEMA_MAX_BYTES
from konnectz_contracts.model import KeyValue, StepBase, Strict
from konnectz_contracts.steps.ask_ai import parse_schema
from konnectz_contracts.triggers.flow_call import MAX_INPUTS
from konnectz_contracts.triggers.form import FormField

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "ADDON_KINDS",
    "DEFAULT_ITERATIONS",
    "KIND",
    "MAX_ITERATIONS",
    "MAX_SECONDS",
    "MAX_TOOLS",
    "MAX_TOTAL_TOKENS",
    "MODEL_APPS",
    "PROVIDERS",
    "TOOL_NAME",
    "AgentTool",
    "Config",
    "compile_node",
]

KIND = "agent"
PROVIDERS = ("agent",)  # the catalogue app (catalogue/apps/agent.yaml, id 24) whose nodes compile to this kind
#: The model providers' apps an agent may use: OpenAI, OpenAI-compatible Model, Anthropic.
MODEL_APPS = (120, 132, 133)
#: Add-ons an agent may call as tools (each runs as its step kind, with the model's arguments).
ADDON_KINDS = ("api_call", "formatter", "generator", "hash", "json_parse")
DEFAULT_ITERATIONS = 10
MAX_ITERATIONS = 50
MAX_TOTAL_TOKENS = 2_000_000
DEFAULT_SECONDS = 300
MAX_SECONDS = 900
MAX_TOOLS = 20
MAX_FIELDS = 50
#: A tool's name as the model sees it (OpenAI's and Anthropic's rule for function names).
TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"
_TOOL_NAME = re.compile(TOOL_NAME)


class AgentTool(Strict):
    """One tool the agent may call."""

    kind: Literal["app_action", "addon", "flow", "mcp"]
    name: str = Field(pattern=TOOL_NAME, description="The tool's name as the model sees it")
    description: str = Field(default="", max_length=2000, description="What the model reads about the tool")
    # app_action
    app_id: int | None = Field(default=None, ge=1, lt=2**31)
    event: str | None = Field(default=None, min_length=1, max_length=100)
    account_id: int | None = Field(default=None, ge=1, lt=2**63)
    fixed: list[KeyValue] = Field(
        default_factory=list, max_length=MAX_FIELDS, description="Fields set in the card (references allowed)"
    )
    agent_fields: list[str] = Field(
        default_factory=list, max_length=MAX_FIELDS, description="Fields the model fills (its arguments)"
    )
    # addon
    step_kind: str | None = Field(default=None, max_length=40)
    config_json: str = Field(default="", max_length=64 * 1024, description="The add-on's fixed configuration (JSON)")
    # flow: a published flow of the account (Called by a flow or AI tool), and its inputs as the card read them
    konnect_id: int | None = Field(default=None, ge=1, lt=2**63)
    flow_inputs: list[FormField] = Field(
        default_factory=list, max_length=MAX_INPUTS, description="The called flow's inputs (the tool's parameters)"
    )
    # mcp: a tool of the MCP server of an MCP Server account (account_id); mcp_server: its URL, for display only
    mcp_server: str | None = Field(default=None, max_length=2000)
    mcp_tool: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _complete(self) -> AgentTool:
        if self.kind == "app_action" and (self.app_id is None or not self.event):
            raise ValueError(f"tool {self.name}: choose the app and its action")
        if self.kind == "addon" and self.step_kind not in ADDON_KINDS:
            raise ValueError(f"tool {self.name}: an add-on tool is one of {', '.join(ADDON_KINDS)}")
        if self.kind == "flow" and self.konnect_id is None:
            raise ValueError(f"tool {self.name}: choose the flow to call")
        if self.kind == "mcp" and (self.account_id is None or not self.mcp_tool):
            raise ValueError(f"tool {self.name}: choose the MCP Server account and its tool")
        if self.kind == "addon" and self.config_json.strip():
            try:
                fixed = json.loads(self.config_json)
            except ValueError as exc:
                raise ValueError(f"tool {self.name}: its configuration is not JSON ({exc})") from None
            if not isinstance(fixed, dict):
                raise ValueError(f"tool {self.name}: its configuration must be a JSON object")
        keys = [f.key for f in self.fixed]
        if len(set(keys)) != len(keys) or set(keys) & set(self.agent_fields):
            raise ValueError(f"tool {self.name}: a field is either fixed or filled by the agent, once")
        return self


class Config(StepBase):
    kind: Literal["agent"] = "agent"
    app_id: int = Field(ge=1, lt=2**31, description="The model provider's app (120, 132 or 133)")
    account_id: int | None = Field(default=None, ge=1, lt=2**63)
    model: str = Field(min_length=1, max_length=200)
    instructions: str = Field(default="", max_length=AI_PROMPT_MAX_BYTES, description="The system message")
    prompt: str = Field(min_length=1, max_length=AI_PROMPT_MAX_BYTES)
    tools: list[AgentTool] = Field(default_factory=list, max_length=MAX_TOOLS)
    max_iterations: int = Field(default=DEFAULT_ITERATIONS, ge=1, le=MAX_ITERATIONS)
    max_total_tokens: int | None = Field(default=None, ge=1, le=MAX_TOTAL_TOKENS)
    max_seconds: int = Field(default=DEFAULT_SECONDS, ge=1, le=MAX_SECONDS)
    conversation_key: str = Field(default="", max_length=500)
    temperature: float | None = Field(default=None, ge=0, le=2)
    json_schema: str = Field(default="", max_length=AI_SCHEMA_MAX_BYTES, description="A JSON Schema object, as JSON")

    @model_validator(mode="after")
    def _unique_tools(self) -> Config:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError("two tools have the same name")
        return self


def _int(node: Node, value: Any, what: str, low: int, high: int) -> int | None:
    if is_blank(value):
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit() or len(str(value).strip()) > 10:
        raise fail(node, f"{what} must be a whole number from {low} to {high}")
    number = int(str(value).strip())
    if not low <= number <= high:
        raise fail(node, f"{what} must be from {low} to {high}")
    return number


#: Keys of a tool the card stores for itself (display only), left out when it is compiled.
CARD_ONLY_KEYS = frozenset({"app_name"})


def _tool(node: Node, raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise fail(node, f"tool {index + 1} is not an object")
    name = str(raw.get("name") or "").strip()
    if not _TOOL_NAME.match(name):
        raise fail(node, f"tool {index + 1}: its name must be 1 to 64 letters, digits, _ or - (got {name[:70]!r})")
    # The card keeps what it only shows (the app's name beside its id) in the same object: not the step's.
    return {k: v for k, v in raw.items() if v is not None and k not in CARD_ONLY_KEYS}


def compile_node(node: Node) -> Config:
    agent = (node.data.model_extra or {}).get("agent") or {}
    if not isinstance(agent, dict):
        raise fail(node, "the agent's settings are missing")
    app_id = agent.get("app_id")
    if app_id not in MODEL_APPS:
        raise fail(node, "choose the model provider (OpenAI, OpenAI-compatible Model or Anthropic)")
    account_id = agent.get("account_id")
    if not isinstance(account_id, int) or isinstance(account_id, bool) or not 1 <= account_id < 2**63:
        raise fail(node, "choose the model's account")
    if is_blank(agent.get("model")):
        raise fail(node, "enter the model")
    if is_blank(agent.get("prompt")):
        raise fail(node, "enter the prompt (what the agent is asked; type @ to use data of earlier steps)")
    tools = agent.get("tools") or []
    if not isinstance(tools, list):
        raise fail(node, "the tools must be a list")
    if len(tools) > MAX_TOOLS:
        raise fail(node, f"an agent has at most {MAX_TOOLS} tools")
    schema = str(agent.get("json_schema") or "")
    try:
        parse_schema(schema)
    except ValueError as exc:
        raise fail(node, str(exc)) from None
    temperature = agent.get("temperature")
    if is_blank(temperature):
        temperature = None
    elif not isinstance(temperature, int | float) or isinstance(temperature, bool) or not 0 <= temperature <= 2:
        raise fail(node, "the temperature must be a number from 0 to 2")
    iterations = _int(node, agent.get("max_iterations"), "Max iterations", 1, MAX_ITERATIONS)
    seconds = _int(node, agent.get("max_seconds"), "Max seconds", 1, MAX_SECONDS)
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name.strip() or "AI Agent",
        app_id=app_id,
        account_id=account_id,
        model=str(agent["model"]).strip(),
        instructions=str(agent.get("instructions") or ""),
        prompt=str(agent["prompt"]),
        tools=[_tool(node, t, i) for i, t in enumerate(tools)],
        max_iterations=iterations or DEFAULT_ITERATIONS,
        max_total_tokens=_int(node, agent.get("max_total_tokens"), "Max total tokens", 1, MAX_TOTAL_TOKENS),
        max_seconds=seconds or DEFAULT_SECONDS,
        conversation_key=str(agent.get("conversation_key") or "").strip(),
        temperature=temperature,
        json_schema=schema.strip(),
    )
