"""The Ask AI step and its model client (konnectz_runner.apps.chat) against the scripted model server.

The server is konnectz_devstack.scripted_model on 127.0.0.1 (a real HTTP server in a thread); the step's
account is an account of the catalogue's "OpenAI-compatible Model" app pointed at it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from konnectz_contracts.errors import StepError
from konnectz_contracts.events import RunRequest
from konnectz_contracts.limits import AI_ANSWER_MAX_BYTES
from konnectz_contracts.on_error import OnError, Retry
from konnectz_contracts.spec import FlowSpec, WebhookTrigger
from konnectz_contracts.steps.ask_ai import Config
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_runner.apps import NetGuard, chat, parse_networks
from konnectz_runner.engine import StepContext, execute, run_step
from konnectz_runner.engine.steps import app_event, ask_ai

COMPATIBLE = 132  # catalogue/apps/openai_compatible.yaml
KEY = "sk-scripted-0123456789"
SCHEMA = {
    "type": "object",
    "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative"]}, "score": {"type": "number"}},
    "required": ["sentiment", "score"],
}


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(api_key=KEY) as server:
        yield server


@pytest.fixture
async def ctx(model: ScriptedModel) -> AsyncIterator[StepContext]:
    async def credentials(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        assert account_id == 7
        return {"instance_url": model.url, "api_key": KEY}

    app_event.set_credential_source(credentials)
    async with httpx.AsyncClient() as http:
        yield StepContext(
            outputs={"node-1": {"review": "I love this blender"}},
            http=http,
            guard=NetGuard(parse_networks("127.0.0.0/8")),
        )
    app_event.set_credential_source(None)


def step(**fields: Any) -> Config:
    values: dict[str, Any] = {"id": "node-2", "name": "Ask AI", "app_id": COMPATIBLE, "account_id": 7}
    values.setdefault("model", "scripted-1")
    return Config(**{**values, **fields})


async def test_the_prompt_with_its_references_is_sent_and_the_answer_logged(
    ctx: StepContext, model: ScriptedModel
) -> None:
    model.load({"rules": [{"contains": "blender", "content": "A happy customer."}]})
    outcome = await run_step(
        step(system="Answer in one sentence.", prompt="Summarise: {{node-1.review}}", temperature=0.2, max_tokens=50),
        ctx,
    )
    assert outcome.status == "SUCCESS", outcome.error
    assert outcome.output == {
        "answer": "A happy customer.",
        "data": None,
        "model": "scripted-1",
        "tokens_in": 9,  # the words of the system (4) and user (5) messages
        "tokens_out": 3,
        "cost_usd": None,  # a local server: no known prices
        "finish_reason": "stop",
        "truncated": False,
    }
    assert outcome.input["prompt"] == "Summarise: I love this blender"
    assert outcome.input["system"] == "Answer in one sentence."
    assert outcome.input["request"] == {"method": "POST", "url": f"{model.url}/chat/completions", "status": 200}
    (sent,) = model.requests
    assert sent["body"] == {
        "model": "scripted-1",
        "messages": [
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": "Summarise: I love this blender"},
        ],
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert KEY not in json.dumps(outcome.input)  # the key reached the server (else 401) and never the log


async def test_structured_output_is_parsed_and_validated(ctx: StepContext, model: ScriptedModel) -> None:
    model.load(
        {
            "rules": [
                {"contains": "good", "content": json.dumps({"sentiment": "positive", "score": 0.9})},
                {"contains": "bad", "content": json.dumps({"sentiment": "angry", "score": 0.1})},
                {"contains": "prose", "content": "It is positive."},
            ]
        }
    )
    good = await run_step(step(prompt="good", json_schema=json.dumps(SCHEMA)), ctx)
    assert good.status == "SUCCESS", good.error
    assert good.output["data"] == {"sentiment": "positive", "score": 0.9}
    assert model.requests[-1]["body"]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": False},
    }
    bad = await run_step(step(prompt="bad", json_schema=json.dumps(SCHEMA)), ctx)
    assert bad.status == "ERROR"
    assert (
        bad.error is not None and "does not match the JSON schema at sentiment" in bad.error and "'angry'" in bad.error
    )
    prose = await run_step(step(prompt="prose", json_schema=json.dumps(SCHEMA)), ctx)
    assert prose.status == "ERROR" and "answer is not JSON" in (prose.error or "")
    # No rule: the scripted server answers an instance of the schema.
    default = await run_step(step(prompt="anything", json_schema=json.dumps(SCHEMA)), ctx)
    assert default.output["data"] == {"sentiment": "positive", "score": 1.0}


async def test_an_invalid_schema_fails_before_any_request(ctx: StepContext, model: ScriptedModel) -> None:
    outcome = await run_step(step(prompt="x", json_schema='{"type": "object", "properties": {"a": {"type": 5}}}'), ctx)
    assert outcome.status == "ERROR" and "The JSON schema is not valid" in (outcome.error or "")
    assert model.requests == []


async def test_a_429_is_retried_after_its_retry_after(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"contains": "busy", "times": 2, "status": 429, "retry_after": 0.2}]})
    outcome = await run_step(step(prompt="busy day"), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    assert outcome.output["answer"] == "You said: busy day"
    assert len(model.requests) == 3  # two 429s, then the answer


async def test_a_server_error_is_a_failure_the_error_policy_may_retry(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"status": 503, "retry_after": 5}]})
    outcome = await run_step(step(prompt="hello"), ctx)
    assert outcome.status == "ERROR"
    assert outcome.failure == "server" and outcome.status_code == 503 and outcome.retry_after == 5
    assert outcome.error is not None and outcome.error.startswith("HTTP 503 from OpenAI-compatible Model (Ask AI)")
    assert len(model.requests) == 1  # a POST's 5xx is not retried below the step's error policy


async def test_a_wrong_key_is_an_error_without_the_key(ctx: StepContext, model: ScriptedModel) -> None:
    async def wrong(*_: Any) -> dict[str, Any]:
        return {"instance_url": model.url, "api_key": "sk-wrong-key-000"}

    app_event.set_credential_source(wrong)
    outcome = await run_step(step(prompt="hello"), ctx)
    assert outcome.status == "ERROR" and outcome.status_code == 401 and outcome.failure == "client"
    assert "sk-wrong-key-000" not in (outcome.error or "") + json.dumps(outcome.input)


async def test_an_answer_over_the_limit_is_cut_with_a_note(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"contains": "long", "content": "é", "repeat": AI_ANSWER_MAX_BYTES}]})
    outcome = await run_step(step(prompt="a long story"), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    assert outcome.output["truncated"] is True
    assert len(outcome.output["answer"].encode()) <= AI_ANSWER_MAX_BYTES
    assert outcome.output["answer"] == "é" * (AI_ANSWER_MAX_BYTES // 2)  # cut on a character boundary
    assert "cut at 256 KiB" in outcome.output["note"] and outcome.input["warnings"] == [outcome.output["note"]]
    cut = await run_step(step(prompt="a long story", json_schema=json.dumps(SCHEMA)), ctx)
    assert cut.status == "ERROR" and "cut short is not valid JSON" in (cut.error or "")


async def test_the_guard_refuses_a_private_base_url_unless_allowed(ctx: StepContext, model: ScriptedModel) -> None:
    refused = await run_step(step(prompt="hello"), StepContext(outputs={}, http=ctx.http, guard=NetGuard()))
    assert refused.status == "ERROR" and "127.0.0.1 is a private address" in (refused.error or "")
    assert model.requests == []
    allowed = await run_step(step(prompt="hello"), ctx)
    assert allowed.status == "SUCCESS" and len(model.requests) == 1


async def test_an_empty_prompt_after_its_references_fails(ctx: StepContext, model: ScriptedModel) -> None:
    outcome = await run_step(step(prompt="{{node-1.missing}}"), ctx)
    assert outcome.status == "ERROR" and "The prompt is empty" in (outcome.error or "")
    assert model.requests == []


def test_the_reply_is_read_with_tool_calls_and_usage() -> None:
    body = {
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}},
                        {"id": "c2", "type": "function", "function": {"name": "raw", "arguments": "not json"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500},
    }
    reply = chat.parse_chat_reply(body, "OpenAI")
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c1", "lookup", {"q": "x"}),
        ("c2", "raw", "not json"),
    ]
    assert (reply.tokens_in, reply.tokens_out) == (1000, 500)
    with pytest.raises(StepError, match="answered without a choice"):
        chat.parse_chat_reply({"error": "x"}, "OpenAI")


def test_costs_come_from_the_price_table_of_the_host() -> None:
    # gpt-4o-mini: 0.15 / 0.60 USD per million tokens; a dated model name takes its family's price.
    assert chat.cost_usd("https://api.openai.com/v1/chat/completions", "gpt-4o-mini-2024-07-18", 1000, 500) == 0.00045
    assert chat.cost_usd("https://api.openai.com/v1/chat/completions", "gpt-4o", 1_000_000, 0) == 2.5
    assert chat.cost_usd("https://api.openai.com/v1/chat/completions", "unknown-model", 1, 1) is None
    assert chat.cost_usd("http://127.0.0.1:11434/v1/chat/completions", "gpt-4o", 1, 1) is None
    assert chat.cost_usd("https://api.openai.com/v1/chat/completions", "gpt-4o", None, 1) is None


def test_an_empty_optional_key_sends_no_authorization() -> None:
    app = app_event.catalogue().get(COMPATIBLE)
    assert app is not None
    request = chat.ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    keyless = chat.build_chat_request(app, {"instance_url": "http://127.0.0.1:11434/v1", "api_key": ""}, request)
    assert keyless.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert "Authorization" not in keyless.headers
    keyed = chat.build_chat_request(app, {"instance_url": "http://127.0.0.1:11434/v1", "api_key": "k"}, request)
    assert keyed.headers["Authorization"] == "Bearer k" and keyed.secret_headers == ["Authorization"]
    assert keyed.recorded()["headers"]["Authorization"] == "***"


ANTHROPIC = 133  # catalogue/apps/anthropic.yaml


async def test_anthropic_speaks_the_messages_api(model: ScriptedModel) -> None:
    """An Anthropic account (its base URL pointed at the scripted server, which speaks /v1/messages too):
    the key in x-api-key with anthropic-version, system apart, max_tokens always given, structured output
    as a forced tool whose input is the answer, tokens from usage, cost at Claude's prices."""
    app = app_event.catalogue().get(ANTHROPIC)
    assert app is not None
    local = app.model_copy(update={"base_url": model.url})
    request = chat.ChatRequest(
        model="claude-sonnet-4-5",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "good or bad: good"}],
        json_schema=SCHEMA,
    )
    built = chat.build_chat_request(local, {"api_key": KEY}, request)
    assert built.url == f"{model.url}/messages"
    assert built.headers["x-api-key"] == KEY and built.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in built.headers
    assert built.json_body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": chat.ANTHROPIC_DEFAULT_MAX_TOKENS,
        "messages": [{"role": "user", "content": "good or bad: good"}],
        "system": "Be brief.",
        "tools": [{"name": "answer", "description": "Give the answer.", "input_schema": SCHEMA}],
        "tool_choice": {"type": "tool", "name": "answer"},
    }
    model.load({"rules": [{"contains": "good", "content": json.dumps({"sentiment": "positive", "score": 0.8})}]})
    async with httpx.AsyncClient() as http:
        ctx = StepContext(outputs={}, http=http, guard=NetGuard(parse_networks("127.0.0.0/8")))
        reply, sent = await ask_ai.ask(ctx, local, None, {"api_key": KEY}, request)
    assert sent["status"] == 200 and sent["url"] == f"{model.url}/messages"
    assert chat.check_answer(reply.text, SCHEMA, "Anthropic") == {"sentiment": "positive", "score": 0.8}
    assert reply.finish_reason == "tool_use" and reply.tool_calls == []
    assert (reply.tokens_in, reply.tokens_out) == (6, 4)
    assert chat.cost_usd("https://api.anthropic.com/v1/messages", "claude-sonnet-4-5-20250929", 1_000_000, 0) == 3.0


def test_an_agent_s_conversation_becomes_content_blocks_for_anthropic() -> None:
    request = chat.ChatRequest(
        model="claude-haiku-4-5",
        messages=[
            {"role": "user", "content": "weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "sunny"},
        ],
        tools=[
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}},
            }
        ],
        max_tokens=100,
    )
    body = chat.messages_body(request)
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}],
    }
    assert body["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}],
    }
    assert body["tools"] == [{"name": "get_weather", "description": "d", "input_schema": {"type": "object"}}]
    assert "tool_choice" not in body and body["max_tokens"] == 100
    reply = chat.parse_messages_reply(
        {
            "model": "claude-haiku-4-5",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 20, "output_tokens": 9},
        },
        "Anthropic",
    )
    assert reply.text == "Let me check." and [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("t2", "get_weather", {"city": "Rome"})
    ]
    with pytest.raises(StepError, match="not an Anthropic Messages reply"):
        chat.parse_messages_reply({"choices": []}, "Anthropic")


async def test_the_step_s_error_policy_retries_a_5xx(ctx: StepContext, model: ScriptedModel) -> None:
    """On Error (retries on server errors) works for Ask AI as for any step: two 503s, then the answer."""
    model.load({"rules": [{"contains": "flaky", "times": 2, "status": 503}]})
    spec = FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Flaky model",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=[
            step(
                prompt="flaky {{node-1.n}}",
                on_error=OnError(retry=Retry(attempts=3, delay_seconds=0.05, backoff="fixed")),
            )
        ],
    )
    request = RunRequest(run_id="r1", konnect_id=5, trigger_output={"n": 1}, received_at=datetime.now(UTC))
    event = await execute(spec, request, http=ctx.http, guard=ctx.guard)
    assert event.status == "SUCCESS"
    [result] = event.steps
    assert result.output is not None and result.output["answer"] == "You said: flaky 1"
    assert result.retries is not None and [(a.number, a.failure, a.status) for a in result.retries] == [
        (1, "server", 503),
        (2, "server", 503),
    ]
    assert len(model.requests) == 3
