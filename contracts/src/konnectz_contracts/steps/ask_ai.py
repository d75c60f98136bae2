"""Ask AI: a prompt (with references to earlier steps) sent to a chat model through an app account.

The step is an event of a model provider's app (``step_kind: ask_ai`` in its catalogue entry: OpenAI,
"OpenAI-compatible Model" for Azure OpenAI, Mistral, Groq, Ollama, vLLM... by base URL; Anthropic, whose
Messages API the runner speaks too), so the node
is that app's node with an account chosen as for any app action; the runner reads the app's base URL
and auth from the catalogue and the account's credentials from the api's broker, and sends one
chat-completions request (``POST <base URL>/chat/completions``) through the outbound guard, taking a
token from the account's rate budget before each attempt. See ``docs/ai.md``.

From the canvas (the api dispatches an app event with a ``step_kind`` to this kind's ``compile_node``):
the app is ``app_detail.id``, the account ``selectedAccount.id``; the fields (``configResponses``) are
``model``, ``system`` and ``prompt`` (references allowed), ``temperature`` (0 to 2), ``max_tokens`` and
``json_schema`` (a JSON Schema object: the answer must be JSON valid against it).

Output: ``{"answer", "data", "model", "tokens_in", "tokens_out", "cost_usd", "finish_reason",
"truncated"}``: ``answer`` is the model's text (cut at
:data:`~konnectz_contracts.limits.AI_ANSWER_MAX_BYTES` with a note, ``truncated`` true); ``data`` the
parsed JSON answer when a schema was given (later steps map ``{{node-2.data.<field>}}``), else null;
``cost_usd`` null when the provider's prices are not known.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, integer, is_blank, validated
from konnectz_contracts.limits import AI_PROMPT_MAX_BYTES, AI_SCHEMA_MAX_BYTES
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "MAX_TOKENS", "Config", "compile_node", "parse_schema"]

KIND = "ask_ai"
MAX_TOKENS = 200_000


class Config(StepBase):
    kind: Literal["ask_ai"] = "ask_ai"
    app_id: int = Field(ge=1, lt=2**31)
    account_id: int | None = Field(default=None, ge=1, lt=2**63)
    model: str = Field(min_length=1, max_length=200)
    system: str = Field(default="", max_length=AI_PROMPT_MAX_BYTES)
    prompt: str = Field(min_length=1, max_length=AI_PROMPT_MAX_BYTES)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    json_schema: str = Field(default="", max_length=AI_SCHEMA_MAX_BYTES, description="A JSON Schema object, as JSON")


def parse_schema(raw: str) -> dict[str, Any] | None:
    """The JSON schema of structured output (None when blank); ValueError saying why it is not one."""
    if not raw.strip():
        return None
    if len(raw.encode("utf-8")) > AI_SCHEMA_MAX_BYTES:
        raise ValueError(f"the JSON schema is larger than {AI_SCHEMA_MAX_BYTES // 1024} KiB")
    try:
        schema = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"the JSON schema is not valid JSON ({exc})") from exc
    if not isinstance(schema, dict):
        raise ValueError("the JSON schema must be a JSON object")
    if schema.get("type") != "object":
        raise ValueError('the JSON schema must describe an object ("type": "object"), whose fields later steps map')
    return schema


def _temperature(node: Node, value: Any) -> float | None:
    if is_blank(value):
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        raise fail(node, "the temperature must be a number from 0 to 2") from None
    if not 0 <= number <= 2:
        raise fail(node, "the temperature must be a number from 0 to 2")
    return number


def compile_node(node: Node) -> Config:
    values = config_values(node)
    account = (node.data.model_extra or {}).get("selectedAccount") or {}
    account_id = str(account.get("id") or "") if isinstance(account, dict) else ""
    if not account_id.isdigit() or not 1 <= int(account_id) < 2**63:
        raise fail(node, "choose an account")
    app_id = str(node.detail.id if node.detail.id is not None else "")
    if not app_id.isdigit() or len(app_id) > 10:
        raise fail(node, "choose the model provider's app")
    if is_blank(values.get("model")):
        raise fail(node, "enter the model")
    if is_blank(values.get("prompt")):
        raise fail(node, "enter the prompt")
    max_tokens = values.get("max_tokens")
    if not is_blank(max_tokens):
        max_tokens = integer(node, max_tokens, what="Max tokens")
        if not 1 <= max_tokens <= MAX_TOKENS:
            raise fail(node, f"the max tokens must be from 1 to {MAX_TOKENS}")
    schema = str(values.get("json_schema") or "")
    try:
        parse_schema(schema)
    except ValueError as exc:
        raise fail(node, str(exc)) from None
    fields = {
        "id": node.id,
        "name": node.detail.name.strip() or "Ask AI",
        "app_id": int(app_id),
        "account_id": int(account_id),
        "model": str(values["model"]).strip(),
        "system": str(values.get("system") or ""),
        "prompt": str(values["prompt"]),
        "temperature": _temperature(node, values.get("temperature")),
        "max_tokens": None if is_blank(max_tokens) else max_tokens,
        "json_schema": schema.strip(),
    }
    return validated(Config, node, **fields)
