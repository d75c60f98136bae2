"""The scripted model server (konnectz_devstack.scripted_model): OpenAI's chat-completions wire, answers
from rules and turns, tool calls, errors with Retry-After, structured defaults, its key, and its process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from konnectz_devstack import _aihost
from konnectz_devstack._platform import Platform, http_problem
from konnectz_devstack._ports import free_port
from konnectz_devstack.scripted_model import DEFAULT_SCRIPT, ScriptedModel, example_of
from konnectz_devstack.testing import wait_until


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as server:
        yield server


def ask(server: ScriptedModel, *messages: dict[str, Any], **more: Any) -> httpx.Response:
    body = {"model": "scripted-1", "messages": list(messages), **more}
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=10)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_it_lists_its_models_and_echoes_by_default(model: ScriptedModel) -> None:
    listed = httpx.get(f"{model.url}/models", timeout=10).json()
    assert [m["id"] for m in listed["data"]] == ["scripted-1"]
    reply = ask(model, {"role": "system", "content": "Be brief."}, user("hello there"))
    assert reply.status_code == 200
    body = reply.json()
    assert body["object"] == "chat.completion" and body["model"] == "scripted-1"
    assert body["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": "You said: hello there"},
        "finish_reason": "stop",
    }
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    assert model.requests[0]["body"]["messages"][1] == user("hello there")


def test_rules_match_the_last_message_and_count_down(model: ScriptedModel) -> None:
    model.load(
        {
            "rules": [
                {"contains": "BUSY", "times": 1, "status": 429, "retry_after": 2},
                {"contains": "busy", "content": "now free"},
                {"role": "tool", "content": "tool said {{prompt}}"},
                {"contains": "long", "content": "ab", "repeat": 3, "usage": {"completion_tokens": 99}},
            ]
        }
    )
    limited = ask(model, user("are you busy?"))
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "2"
    assert limited.json()["error"]["type"] == "rate_limit_exceeded"
    assert ask(model, user("are you busy?")).json()["choices"][0]["message"]["content"] == "now free"
    tool = ask(model, user("x"), {"role": "tool", "tool_call_id": "c1", "content": "18 C"})
    assert tool.json()["choices"][0]["message"]["content"] == "tool said 18 C"
    long = ask(model, user("a long one")).json()
    assert long["choices"][0]["message"]["content"] == "ababab" and long["usage"]["completion_tokens"] == 99


def test_tool_calls_and_turns_in_order(model: ScriptedModel) -> None:
    model.load(
        {
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                {"content": "It is sunny."},
            ]
        }
    )
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    first = ask(model, user("weather?"), tools=tools).json()["choices"][0]
    assert first["finish_reason"] == "tool_calls" and first["message"]["content"] is None
    (call,) = first["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    second = ask(model, user("weather?"), {"role": "tool", "tool_call_id": call["id"], "content": "sunny"}).json()
    assert second["choices"][0]["message"]["content"] == "It is sunny."
    assert ask(model, user("and now?")).json()["choices"][0]["message"]["content"] == "You said: and now?"


def test_structured_output_gets_an_instance_of_the_schema(model: ScriptedModel) -> None:
    schema = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": ["spam", "ham"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "integer", "minimum": 3},
            "ok": {"type": "boolean"},
            "maybe": {"type": ["null", "number"]},
        },
    }
    response_format = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    body = ask(model, user("classify"), response_format=response_format).json()
    answer = json.loads(body["choices"][0]["message"]["content"])
    assert answer == {"label": "spam", "tags": ["example"], "n": 3, "ok": True, "maybe": 1.0}
    assert example_of({"anyOf": [{"const": 7}, {"type": "string"}]}) == 7


def test_a_key_is_required_when_set() -> None:
    with ScriptedModel(api_key="k-123") as server:
        assert httpx.get(f"{server.url}/models", timeout=10).status_code == 401
        assert ask(server, user("hi")).status_code == 401
        ok = httpx.post(
            f"{server.url}/chat/completions",
            json={"model": "m", "messages": [user("hi")]},
            headers={"Authorization": "Bearer k-123"},
            timeout=10,
        )
        assert ok.status_code == 200
        assert "Authorization" not in server.requests[0]["headers"]  # never kept


def test_bad_requests_are_refused(model: ScriptedModel) -> None:
    assert httpx.post(f"{model.url}/chat/completions", content=b"[1]", timeout=10).status_code == 400
    assert ask(model).status_code == 400  # no messages
    assert httpx.get(f"{model.url}/nothing", timeout=10).status_code == 404


def test_it_runs_as_a_process_with_the_default_script() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "konnectz_devstack.scripted_model", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"

        def up() -> bool:
            try:
                return httpx.get(f"{url}/models", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=30, what="the scripted model process")
        body = {"model": DEFAULT_SCRIPT["model"], "messages": [user("What is the weather in Paris?")]}
        reply = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()
        assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    finally:
        proc.terminate()
        proc.wait(10)


def test_make_dev_ai_scripted_starts_it_and_names_its_base_url(tmp_path: Any) -> None:
    """``make dev AI=scripted`` (``--ai scripted``): the AI host is the scripted model server on ``ai_port``,
    its base URL is printed, and the api is not told of an AI host (that is Flowise's setting)."""
    plat = Platform(state_dir=tmp_path, ai="scripted", ai_port=free_port())
    assert plat.ai_url == f"http://127.0.0.1:{plat.ai_port}/v1"
    assert "KONNECTZ_AI_HOST_URL" not in plat.component_env("api")
    assert _aihost.scripted_args(plat.ai_port)[-4:] == [
        "-m",
        "konnectz_devstack.scripted_model",
        "--port",
        str(plat.ai_port),
    ]
    plat._start_ai_host()
    try:
        wait_until(lambda: http_problem(plat._ready_url()) is None, timeout=30, what="the scripted model of make dev")
    finally:
        plat.stop()
    flowise = Platform(state_dir=tmp_path, ai="flowise", ai_port=3000)
    assert flowise.component_env("api")["KONNECTZ_AI_HOST_URL"] == "http://127.0.0.1:3000"


def test_it_speaks_anthropic_s_messages_api_from_the_same_script(model: ScriptedModel) -> None:
    model.load(
        {
            "rules": [
                {"contains": "busy", "times": 1, "status": 429, "retry_after": 3},
                {
                    "contains": "weather",
                    "role": "user",
                    "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                },
                {"role": "tool", "content": "It is {{prompt}}."},
            ]
        }
    )

    def messages(*items: dict[str, Any], **more: Any) -> httpx.Response:
        body = {"model": "claude-x", "max_tokens": 100, "messages": list(items), **more}
        return httpx.post(f"{model.url}/messages", json=body, timeout=10)

    limited = messages(user("busy?"))
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "3"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    called = messages(user("weather in Paris?"), system="Be brief.").json()
    assert called["type"] == "message" and called["stop_reason"] == "tool_use"
    assert called["content"] == [
        {"type": "tool_use", "id": called["content"][0]["id"], "name": "get_weather", "input": {"city": "Paris"}}
    ]
    assert called["usage"] == {"input_tokens": 5, "output_tokens": 1}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}
    followed = messages(user("weather in Paris?"), result).json()
    assert followed["content"] == [{"type": "text", "text": "It is sunny."}] and followed["stop_reason"] == "end_turn"
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    forced = messages(
        user("check"),
        tools=[{"name": "answer", "input_schema": schema}],
        tool_choice={"type": "tool", "name": "answer"},
    ).json()
    assert forced["content"][0]["name"] == "answer" and forced["content"][0]["input"] == {"ok": True}
    with ScriptedModel(api_key="k-9") as keyed:
        url = f"{keyed.url}/messages"
        body = {"model": "m", "max_tokens": 5, "messages": [user("hi")]}
        assert httpx.post(url, json=body, timeout=10).status_code == 401
        assert httpx.post(url, json=body, headers={"x-api-key": "k-9"}, timeout=10).status_code == 200
