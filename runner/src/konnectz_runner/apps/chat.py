"""Chat models: the OpenAI-compatible chat-completions wire, for the Ask AI step (and the Agent step after it).

Pure protocol, no sending: :func:`build_chat_request` makes the request of an app account (the app's base
URL and auth from its manifest, ``POST <base>/chat/completions``), :func:`parse_chat_reply` reads the
reply (the first choice's text and tool calls, ``usage``), :func:`check_answer` validates a structured
answer against its JSON schema, :func:`cost_usd` prices the tokens where the provider's prices are known
(:data:`PRICES`). The engine sends the request like any app request: through the outbound guard, a token
of the account's rate budget per attempt, 429/5xx retried (``konnectz_runner.engine.steps.app_event``).

The wire (https://platform.openai.com/docs/api-reference/chat/create): ``{"model", "messages": [{"role",
"content"}...], "temperature"?, "max_tokens"?, "tools"?, "response_format"?}``; structured output is
``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict": false}}`` (not
strict: OpenAI's strict mode refuses schemas without ``additionalProperties: false`` on every object, and
the answer is validated here anyway). The reply: ``{"model", "choices": [{"message": {"content",
"tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}, "finish_reason"}],
"usage": {"prompt_tokens", "completion_tokens"}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema

from konnectz_contracts.errors import StepError
from konnectz_contracts.manifest import App
from konnectz_runner.apps.app_request import AppRequest, build_app_request

__all__ = [
    "ANSWER_TOOL",
    "ANTHROPIC_APPS",
    "CHAT_PATH",
    "MESSAGES_PATH",
    "PRICES",
    "PRICES_DATE",
    "ChatReply",
    "ChatRequest",
    "ToolCall",
    "build_chat_request",
    "check_answer",
    "check_schema",
    "cost_usd",
    "cut_answer",
    "messages_body",
    "parse_chat_reply",
    "parse_messages_reply",
    "parse_reply",
]

CHAT_PATH = "/chat/completions"
#: Anthropic's Messages API (https://docs.anthropic.com/en/api/messages): the apps that speak it, by key.
MESSAGES_PATH = "/messages"
ANTHROPIC_APPS = frozenset({"anthropic"})
#: Anthropic requires ``max_tokens``; this when the step leaves it empty.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
#: The tool an Anthropic request is made to call for structured output: its input is the answer.
ANSWER_TOOL = "answer"

#: When :data:`PRICES` were read from the providers' public price pages.
PRICES_DATE = "2025-08"
#: USD per million tokens (input, output), by the API's host, then by model (the longest name that starts
#: a reply's model: ``gpt-4o-mini-2024-07-18`` is ``gpt-4o-mini``). A host or model not listed has no cost
#: (a local server, a provider whose prices we do not know): ``cost_usd`` is null. Standard (not batch,
#: not cached-input) prices, read on :data:`PRICES_DATE`; they change: check before relying on them.
PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "api.openai.com": {
        "gpt-4o": (2.50, 10.00),
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-5": (1.25, 10.00),
        "gpt-5-mini": (0.25, 2.00),
        "gpt-5-nano": (0.05, 0.40),
        "o3": (2.00, 8.00),
        "o3-mini": (1.10, 4.40),
        "o4-mini": (1.10, 4.40),
    },
    "api.mistral.ai": {
        "mistral-large": (2.00, 6.00),
        "mistral-medium": (0.40, 2.00),
        "mistral-small": (0.10, 0.30),
    },
    "api.groq.com": {
        "llama-3.1-8b-instant": (0.05, 0.08),
        "llama-3.3-70b-versatile": (0.59, 0.79),
    },
    "api.anthropic.com": {
        "claude-opus-4": (15.00, 75.00),
        "claude-opus-4-1": (15.00, 75.00),
        "claude-sonnet-4": (3.00, 15.00),
        "claude-sonnet-4-5": (3.00, 15.00),
        "claude-3-5-haiku": (0.80, 4.00),
        "claude-haiku-4-5": (1.00, 5.00),
    },
}


@dataclass
class ChatRequest:
    """One chat completion to ask for. ``messages`` are the wire's (``role``, ``content``, and for an agent
    ``tool_calls``/``tool_call_id``); ``tools`` the wire's function tools; ``json_schema`` asks for
    structured output."""

    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    max_tokens: int | None = None
    json_schema: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.tools:
            body["tools"] = self.tools
        if self.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": self.json_schema, "strict": False},
            }
        return body


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: Any  # the parsed JSON arguments; the raw text when they are not JSON


@dataclass
class ChatReply:
    text: str
    tool_calls: list[ToolCall]
    model: str
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None


def build_chat_request(app: App, credentials: dict[str, Any], chat: ChatRequest) -> AppRequest:
    """The request of an account of ``app``: chat completions, or Anthropic's Messages API for the apps of
    :data:`ANTHROPIC_APPS` (an empty optional key sends no ``Authorization`` header:
    :func:`~konnectz_runner.apps.app_request.build_app_request`)."""
    if app.key in ANTHROPIC_APPS:
        return build_app_request(app, "POST", MESSAGES_PATH, credentials, messages_body(chat))
    return build_app_request(app, "POST", CHAT_PATH, credentials, chat.body())


def parse_reply(app: App, body: Any) -> ChatReply:
    """The reply of :func:`build_chat_request`'s request, in its app's dialect."""
    if app.key in ANTHROPIC_APPS:
        return parse_messages_reply(body, app.name)
    return parse_chat_reply(body, app.name)


def _anthropic_message(message: dict[str, Any]) -> dict[str, Any]:
    """One chat-completions message as a Messages API message (tool calls and results as content blocks)."""
    role = message.get("role")
    if role == "tool":
        block = {
            "type": "tool_result",
            "tool_use_id": message.get("tool_call_id", ""),
            "content": _text(message.get("content")),
        }
        return {"role": "user", "content": [block]}
    if role == "assistant" and message.get("tool_calls"):
        blocks: list[dict[str, Any]] = []
        if _text(message.get("content")):
            blocks.append({"type": "text", "text": _text(message.get("content"))})
        for call in message["tool_calls"]:
            function = call.get("function") or {}
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except ValueError:
                    arguments = {"value": arguments}
            blocks.append(
                {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": arguments}
            )
        return {"role": "assistant", "content": blocks}
    return {"role": "assistant" if role == "assistant" else "user", "content": _text(message.get("content"))}


def messages_body(chat: ChatRequest) -> dict[str, Any]:
    """``chat`` as a Messages API request: system messages joined into ``system``, ``max_tokens`` always
    given, function tools as ``input_schema`` tools; structured output as a tool the model must call
    (:data:`ANSWER_TOOL`, its ``input_schema`` the schema), whose input is the answer."""
    system = "\n\n".join(_text(m.get("content")) for m in chat.messages if m.get("role") == "system")
    body: dict[str, Any] = {
        "model": chat.model,
        "max_tokens": chat.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS,
        "messages": [_anthropic_message(m) for m in chat.messages if m.get("role") != "system"],
    }
    if system:
        body["system"] = system
    if chat.temperature is not None:
        body["temperature"] = chat.temperature
    tools = [
        {
            "name": (t.get("function") or {}).get("name", ""),
            "description": (t.get("function") or {}).get("description", ""),
            "input_schema": (t.get("function") or {}).get("parameters") or {"type": "object"},
        }
        for t in chat.tools
    ]
    if chat.json_schema is not None:
        tools.append({"name": ANSWER_TOOL, "description": "Give the answer.", "input_schema": chat.json_schema})
        body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
    if tools:
        body["tools"] = tools
    return body


def parse_messages_reply(body: Any, app_name: str) -> ChatReply:
    """A Messages API reply: its text blocks joined, its ``tool_use`` blocks as tool calls (the forced
    :data:`ANSWER_TOOL`'s input is the answer, as JSON text), ``usage.input_tokens``/``output_tokens``."""
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, list):
        raise StepError(f"{app_name} answered without content (not an Anthropic Messages reply)")
    texts: list[str] = []
    calls: list[ToolCall] = []
    answer: str | None = None
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            if block["name"] == ANSWER_TOOL:
                answer = json.dumps(block.get("input"), ensure_ascii=False)
            else:
                calls.append(ToolCall(id=str(block.get("id") or ""), name=block["name"], arguments=block.get("input")))
    usage = body.get("usage")
    stop = body.get("stop_reason")
    return ChatReply(
        text=answer if answer is not None else "".join(texts),
        tool_calls=calls,
        model=str(body.get("model") or ""),
        finish_reason=stop if isinstance(stop, str) else None,
        tokens_in=_count(usage, "input_tokens"),
        tokens_out=_count(usage, "output_tokens"),
    )


def _count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(content: Any) -> str:
    """A message's content: a string, or a list of parts whose text parts are joined (some servers)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def parse_chat_reply(body: Any, app_name: str) -> ChatReply:
    """The first choice of a chat-completions reply; :class:`StepError` when the reply is not one."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise StepError(f"{app_name} answered without a choice (not an OpenAI-compatible chat completion)")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}
    calls: list[ToolCall] = []
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        arguments: Any = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                pass
        calls.append(ToolCall(id=str(raw.get("id") or ""), name=function["name"], arguments=arguments))
    usage = body.get("usage")
    return ChatReply(
        text=_text(message.get("content")),
        tool_calls=calls,
        model=str(body.get("model") or ""),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        tokens_in=_count(usage, "prompt_tokens"),
        tokens_out=_count(usage, "completion_tokens"),
    )


def cut_answer(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes (on a character boundary), and whether it was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def check_schema(schema: dict[str, Any]) -> None:
    """:class:`StepError` when ``schema`` is not a valid JSON Schema (the draft it names, else 2020-12)."""
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise StepError(f"The JSON schema is not valid: {exc.message}") from None


def check_answer(text: str, schema: dict[str, Any], app_name: str) -> Any:
    """The structured answer parsed from ``text``; :class:`StepError` saying why when it is not JSON valid
    against ``schema``."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StepError(f"{app_name}'s answer is not JSON ({exc}): {text[:200]!r}") from None
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator_class(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the answer"
        raise StepError(f"{app_name}'s answer does not match the JSON schema at {where}: {error.message}")
    return data


def cost_usd(url: str, model: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """The cost of the tokens at the prices of the API's host (:data:`PRICES`); None when unknown."""
    if tokens_in is None or tokens_out is None:
        return None
    try:
        host = httpx.URL(url).host
    except httpx.InvalidURL:
        return None
    prices = PRICES.get(host)
    if not prices:
        return None
    name = next((m for m in sorted(prices, key=len, reverse=True) if model == m or model.startswith(m + "-")), None)
    if name is None:
        return None
    price_in, price_out = prices[name]
    return round((tokens_in * price_in + tokens_out * price_out) / 1_000_000, 8)
