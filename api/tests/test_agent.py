"""The AI Agent step in the api: publishing compiles the Agent card (data.agent) and refuses what is
missing, naming the node; the runners' memory door keeps a conversation per konnect, bounded, and answers
another konnect's token 401 (docs/ai.md)."""

from __future__ import annotations

from typing import Any

import pytest

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.core.config import get_settings
from konnectz_contracts.broker_token import konnect_token
from konnectz_contracts.limits import AGENT_MEMORY_MAX_BYTES, AGENT_MEMORY_MAX_TURNS
from konnectz_devstack.testing import canvas_node, chain_canvas

TOOL = {
    "kind": "app_action",
    "name": "post_message",
    "app_id": 2,
    "event": "post",
    "account_id": 11,
    "fixed": [{"key": "channel", "value": "#help"}],
    "agent_fields": ["text"],
}


def canvas(**agent: Any) -> dict[str, Any]:
    settings = {"app_id": 132, "account_id": 5, "model": "scripted-1", "prompt": "Help {{node-1.user}}", **agent}
    trigger = canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook")
    step = canvas_node("node-2", "ActionNode", "agent", 2, "Helper", agent=settings)
    return chain_canvas([trigger, step], "f")


def compiled(c: dict[str, Any]) -> Any:
    return compile_flow(c, konnect_id=7, owner_id=3, name="n", webhook_token="t" * 43)


def test_the_agent_card_compiles_with_its_tools_and_limits() -> None:
    spec = compiled(canvas(tools=[TOOL], max_iterations="5", max_seconds=60, conversation_key="{{node-1.chat}}"))
    (step,) = spec.steps
    assert step.kind == "agent" and step.name == "Helper"
    assert (step.app_id, step.account_id, step.model, step.prompt) == (132, 5, "scripted-1", "Help {{node-1.user}}")
    assert (step.max_iterations, step.max_seconds, step.max_total_tokens) == (5, 60, None)
    assert step.conversation_key == "{{node-1.chat}}"
    [tool] = step.tools
    # What the card keeps for itself (the app's name beside its id) is not the step's: not refused either.
    shown = compiled(canvas(tools=[{**TOOL, "app_name": "Slack"}]))
    assert "app_name" not in shown.steps[0].tools[0].model_dump()
    assert (tool.kind, tool.name, tool.agent_fields, tool.fixed[0].key) == (
        "app_action",
        "post_message",
        ["text"],
        "channel",
    )


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ({"app_id": 999}, "choose the model provider"),
        ({"account_id": None}, "choose the model's account"),
        ({"prompt": " "}, "enter the prompt"),
        ({"max_iterations": 51}, "Max iterations must be from 1 to 50"),
        ({"max_seconds": "soon"}, "Max seconds must be a whole number"),
        ({"tools": [{**TOOL, "name": "has space"}]}, "tool 1: its name must be"),
        ({"tools": [TOOL, TOOL]}, "two tools have the same name"),
        ({"tools": [{**TOOL, "agent_fields": ["channel"]}]}, "either fixed or filled by the agent"),
        ({"tools": [{"kind": "addon", "name": "x", "step_kind": "delay"}]}, "an add-on tool is one of"),
        ({"json_schema": "[1]"}, "must be a JSON object"),
        ({"tools": [{"kind": "flow", "name": "sub"}]}, "choose the flow to call"),
        ({"tools": [{"kind": "mcp", "name": "m", "mcp_tool": "add"}]}, "choose the MCP Server account and its tool"),
        ({"tools": [{"kind": "mcp", "name": "m", "account_id": 3}]}, "choose the MCP Server account and its tool"),
        (
            {"tools": [{"kind": "flow", "name": "sub", "konnect_id": 4, "flow_inputs": [{"key": "1x", "label": "X"}]}]},
            "flow_inputs",
        ),
    ],
)
def test_an_incomplete_agent_is_refused_naming_the_node(agent: dict[str, Any], message: str) -> None:
    with pytest.raises(CompileError) as refused:
        compiled(canvas(**agent))
    assert str(refused.value).startswith("Helper (node-2): ")
    assert message in str(refused.value)


def _konnect(api: Any) -> int:
    return api.owner_and_konnect().konnect_id


def _post(client: Any, action: str, konnect_id: int, token: str, **body: Any) -> Any:
    return client.post(
        f"/api/v1/internal/agent_memory/{action}",
        json={"konnect_id": konnect_id, **body},
        headers={"Authorization": f"Bearer {token}"},
    )


def _turn(n: int, pad: int = 0) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {n}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": f"c{n}", "content": "r" * pad or f"result {n}"},
        {"role": "assistant", "content": f"answer {n}"},
    ]


def test_memory_is_kept_per_konnect_and_key_with_tool_calls_and_once_per_turn(client, api) -> None:
    konnect_id = _konnect(api)
    token = konnect_token(get_settings().runner_credentials_key, konnect_id, "")
    assert _post(client, "save", konnect_id, token, key="chat-1", turn_key="t1", messages=_turn(1)).status_code == 200
    # a redelivered run saves its turn again: kept once
    assert _post(client, "save", konnect_id, token, key="chat-1", turn_key="t1", messages=_turn(1)).status_code == 200
    assert _post(client, "save", konnect_id, token, key="chat-2", turn_key="t2", messages=_turn(2)).status_code == 200
    r = _post(client, "load", konnect_id, token, key="chat-1", turn_key="t9")
    assert r.status_code == 200, r.text
    assert r.json()["turns"] == 1 and r.json()["messages"] == _turn(1)  # the tool call with its result
    # the run's own turn is left out (a redelivery sees the conversation as the first delivery did)
    assert _post(client, "load", konnect_id, token, key="chat-1", turn_key="t1").json()["messages"] == []
    # another konnect's token, or none: 401; another konnect's conversation with the same key is its own
    other = _konnect(api)
    other_token = konnect_token(get_settings().runner_credentials_key, other, "")
    assert _post(client, "load", konnect_id, other_token, key="chat-1", turn_key="t9").status_code == 401
    assert _post(client, "load", other, other_token, key="chat-1", turn_key="t9").json()["messages"] == []


def test_memory_drops_the_oldest_whole_turns_past_its_bounds(client, api) -> None:
    konnect_id = _konnect(api)
    token = konnect_token(get_settings().runner_credentials_key, konnect_id, "")
    for n in range(AGENT_MEMORY_MAX_TURNS + 3):
        r = _post(client, "save", konnect_id, token, key="k", turn_key=f"t{n}", messages=_turn(n))
        assert r.status_code == 200, r.text
    loaded = _post(client, "load", konnect_id, token, key="k", turn_key="x").json()
    assert loaded["turns"] == AGENT_MEMORY_MAX_TURNS
    assert loaded["messages"][0]["content"] == "question 3"  # the three oldest turns were dropped, whole
    big = AGENT_MEMORY_MAX_BYTES // 3
    for n in range(3):
        _post(client, "save", konnect_id, token, key="b", turn_key=f"b{n}", messages=_turn(n, pad=big))
    roles = [m["role"] for m in _post(client, "load", konnect_id, token, key="b", turn_key="x").json()["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"] * 2  # bytes: the oldest turn went, whole
    r = _post(
        client, "save", konnect_id, token, key="b", turn_key="huge", messages=_turn(9, pad=AGENT_MEMORY_MAX_BYTES)
    )
    assert r.status_code == 413 and "at most 512 KiB" in r.json()["message"]
    r = _post(client, "save", konnect_id, token, key="", turn_key="t", messages=_turn(1))
    assert r.status_code == 422
