"""The Agent step against the scripted model server (a real HTTP server) and a real local app (the echo
server), with its tool calls journaled in a real JetStream bucket (KZ_STEPS).

The model's account is an account of the catalogue's "OpenAI-compatible Model" app (132) pointed at the
scripted model; the app action tool is an action of a test app whose base URL is the echo server.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from konnectz_contracts.events import KV_STEPS
from konnectz_contracts.limits import AGENT_TOOL_RESULT_MAX_BYTES, AI_ANSWER_MAX_BYTES
from konnectz_contracts.manifest import App
from konnectz_contracts.steps.agent import Config
from konnectz_devstack.fake_apps import curated_app
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_runner.apps import Catalogue, NetGuard, parse_networks, set_memory_source
from konnectz_runner.engine import StepContext, StepJournal, run_step
from konnectz_runner.engine.steps import app_event
from konnectz_runner.engine.steps._agent_tools import FlowTool, set_tool_factory

COMPATIBLE = 132
TICKETS = 999_324


def _tickets_app(base: str, path: str = "/echo") -> App:
    event = {
        "key": "create_ticket",
        "kind": "action",
        "label": "Create Ticket",
        "operation": {"method": "POST", "path": path},
        "fields": [
            {"key": "title", "label": "Title", "required": True},
            {"key": "priority", "label": "Priority", "type": "integer"},
            {"key": "queue", "label": "Queue"},
        ],
    }
    return App.model_validate(
        {**curated_app(TICKETS, "tickets", "Tickets", {"type": "none"}, [event]), "base_url": base}
    )


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as server:
        yield server


class Memory:
    """An in-process memory source (the api's is tested in api/tests/test_agent_memory.py)."""

    def __init__(self) -> None:
        self.turns: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}

    async def load(self, konnect_id: int, key: str, turn_key: str) -> list[dict[str, Any]]:
        return [m for t, turn in self.turns.get(key, []) if t != turn_key for m in turn]

    async def save(self, konnect_id: int, key: str, turn_key: str, messages: list[dict[str, Any]]) -> None:
        turns = self.turns.setdefault(key, [])
        if all(t != turn_key for t, _ in turns):
            turns.append((turn_key, messages))


@pytest.fixture
def memory() -> Iterator[Memory]:
    source = Memory()
    set_memory_source(source)
    yield source
    set_memory_source(None)


@pytest.fixture
async def ctx(model: ScriptedModel, echo: Any) -> AsyncIterator[StepContext]:
    async def credentials(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {"instance_url": model.url, "api_key": ""}

    real = app_event.default_catalogue().get(COMPATIBLE)
    catalogue = Catalogue(apps=[real, _tickets_app(echo.base)])
    app_event.set_catalogue(lambda: catalogue)
    app_event.set_credential_source(credentials)
    async with httpx.AsyncClient() as http:
        yield StepContext(
            outputs={"node-1": {"issue": "the printer is on fire"}},
            http=http,
            guard=NetGuard(parse_networks("127.0.0.0/8")),
            run_id=secrets.token_hex(8),
            konnect_id=5,
            owner_id=3,
        )
    app_event.set_credential_source(None)
    app_event.set_catalogue(app_event.default_catalogue)


TICKET_TOOL = {
    "kind": "app_action",
    "name": "create_ticket",
    "app_id": TICKETS,
    "event": "create_ticket",
    "fixed": [{"key": "queue", "value": "{{node-1.issue}}"}],
    "agent_fields": ["title", "priority"],
}


def agent(**fields: Any) -> Config:
    values: dict[str, Any] = {
        "id": "node-2",
        "name": "Agent",
        "app_id": COMPATIBLE,
        "account_id": 7,
        "model": "scripted-1",
        "instructions": "You file tickets.",
        "prompt": "Handle: {{node-1.issue}}",
        "tools": [TICKET_TOOL],
    }
    return Config(**{**values, **fields})


def ticket_script(arguments: Any = None) -> dict[str, Any]:
    return {
        "rules": [
            {
                "role": "user",
                "tool_calls": [{"name": "create_ticket", "arguments": arguments or {"title": "Fire", "priority": 1}}],
            },
            {"role": "tool", "content": "Filed: {{prompt}}"},
        ]
    }


def _posts(echo: Any) -> list[Any]:
    return [r for r in echo.received if r.path == "/echo"]


async def test_the_model_calls_an_app_action_and_answers(ctx: StepContext, model: ScriptedModel, echo: Any) -> None:
    model.load(ticket_script())
    outcome = await run_step(agent(), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    out = outcome.output
    assert out["iterations"] == 2
    assert out["answer"].startswith("Filed: ")
    [call] = out["tool_calls"]
    assert call["tool"] == "create_ticket" and call["kind"] == "app_action" and call["iteration"] == 1
    assert call["input"] == {"title": "Fire", "priority": 1}
    assert call["output"]["id"] == 42 and call["error"] is None
    assert call["duration_ms"] >= 0
    [post] = _posts(echo)
    # the fixed field (its reference resolved) and the model's arguments in one request, with the call's key
    assert json.loads(post.body) == {"title": "Fire", "priority": 1, "queue": "the printer is on fire"}
    assert post.headers["Idempotency-Key"] == call["idempotency_key"]
    # the model saw the tool's schema (only the fields left to it) and then the tool's result
    first, second = model.requests[0]["body"], model.requests[1]["body"]
    [wire] = first["tools"]
    assert wire["function"]["name"] == "create_ticket"
    assert set(wire["function"]["parameters"]["properties"]) == {"title", "priority"}
    assert wire["function"]["parameters"]["required"] == ["title"]
    assert first["messages"][0] == {"role": "system", "content": "You file tickets."}
    assert second["messages"][-1]["role"] == "tool" and '"id": 42' in second["messages"][-1]["content"]
    assert out["tokens_in"] > 0 and out["tokens_out"] > 0


async def test_an_unknown_tool_is_told_once_then_ends_the_step(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"tool_calls": [{"name": "delete_everything", "arguments": {}}]}]})
    outcome = await run_step(agent(), ctx)
    assert outcome.status == "ERROR"
    assert "'delete_everything'" in outcome.error and "unknown tool" in outcome.error
    # the first wrong call was answered to the model with the reason, the second ended the step
    told = model.requests[1]["body"]["messages"][-1]
    assert told["role"] == "tool" and "unknown tool 'delete_everything'" in told["content"]
    assert "create_ticket" in told["content"]
    assert len(model.requests) == 2
    assert [c["error"] is not None for c in outcome.output["tool_calls"]] == [True, True]


async def test_malformed_arguments_are_told_then_corrected(ctx: StepContext, model: ScriptedModel, echo: Any) -> None:
    model.load(
        {
            "turns": [
                {"tool_calls": [{"name": "create_ticket", "arguments": {"priority": "high"}}]},
                {"tool_calls": [{"name": "create_ticket", "arguments": {"title": "Fire"}}]},
                {"content": "ok"},
            ]
        }
    )
    outcome = await run_step(agent(), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    bad, good = outcome.output["tool_calls"]
    assert "malformed arguments for create_ticket" in bad["error"]
    assert good["error"] is None
    assert len(_posts(echo)) == 1  # the malformed call was never sent


async def test_malformed_arguments_twice_end_the_step_naming_them(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"tool_calls": [{"name": "create_ticket", "arguments": "not json {"}]}]})
    outcome = await run_step(agent(), ctx)
    assert outcome.status == "ERROR"
    assert "create_ticket" in outcome.error and "must be a JSON object" in outcome.error


async def test_the_iteration_limit_ends_the_step_with_a_clear_error(
    ctx: StepContext, model: ScriptedModel, echo: Any
) -> None:
    model.load({"rules": [{"tool_calls": [{"name": "create_ticket", "arguments": {"title": "again"}}]}]})
    outcome = await run_step(agent(max_iterations=3), ctx)
    assert outcome.status == "ERROR"
    assert "limit of 3 iterations" in outcome.error and "create_ticket" in outcome.error
    assert len(model.requests) == 3
    assert len(_posts(echo)) == 2  # the third reply's calls were not made
    assert outcome.output["iterations"] == 3 and len(outcome.output["tool_calls"]) == 2


async def test_the_token_limit_ends_the_step(ctx: StepContext, model: ScriptedModel) -> None:
    model.load(
        {
            "rules": [
                {
                    "tool_calls": [{"name": "create_ticket", "arguments": {"title": "x"}}],
                    "usage": {"prompt_tokens": 600},
                }
            ]
        }
    )
    outcome = await run_step(agent(max_total_tokens=1000), ctx)
    assert outcome.status == "ERROR"
    assert "over its limit of 1000" in outcome.error and "Max total tokens" in outcome.error
    assert outcome.output["iterations"] == 2


async def test_the_time_limit_ends_the_step(ctx: StepContext, model: ScriptedModel, echo: Any) -> None:
    slow = _tickets_app(echo.base, "/slow")
    catalogue = Catalogue(apps=[app_event.default_catalogue().get(COMPATIBLE), slow])
    app_event.set_catalogue(lambda: catalogue)
    model.load(ticket_script())
    outcome = await run_step(agent(max_seconds=1), ctx)
    assert outcome.status == "ERROR"
    assert "time limit of 1 s" in outcome.error and "calling the tool create_ticket" in outcome.error


async def test_a_long_answer_is_cut_with_a_note(ctx: StepContext, model: ScriptedModel) -> None:
    model.load({"rules": [{"content": "word ", "repeat": AI_ANSWER_MAX_BYTES // 4}]})
    outcome = await run_step(agent(tools=[]), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    assert outcome.output["truncated"] is True
    assert len(outcome.output["answer"].encode()) <= AI_ANSWER_MAX_BYTES
    assert "was cut at 256 KiB" in outcome.output["note"]
    assert outcome.input["warnings"] == [outcome.output["note"]]


async def test_a_long_tool_result_is_cut_for_the_model_with_a_note(ctx: StepContext, model: ScriptedModel) -> None:
    model.load(ticket_script())
    long = {
        "kind": "addon",
        "name": "pad",
        "step_kind": "formatter",
        "agent_fields": ["input"],
        "config_json": json.dumps({"operation": "text.trim"}),
    }
    model.load(
        {
            "rules": [
                {"role": "user", "tool_calls": [{"name": "pad", "arguments": {"input": "y" * 50_000}}]},
                {"role": "tool", "content": "seen"},
            ]
        }
    )
    outcome = await run_step(agent(tools=[long]), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    told = model.requests[1]["body"]["messages"][-1]["content"]
    assert f"only the first {AGENT_TOOL_RESULT_MAX_BYTES // 1024} KiB are shown" in told
    assert len(told.encode()) < AGENT_TOOL_RESULT_MAX_BYTES + 200


async def test_an_addon_tool_runs_without_the_runs_data_behind_the_models_arguments(
    ctx: StepContext, model: ScriptedModel
) -> None:
    tool = {
        "kind": "addon",
        "name": "digest",
        "step_kind": "hash",
        "agent_fields": ["text"],
        "config_json": json.dumps({"algorithm": "sha256"}),
    }
    model.load(
        {
            "rules": [
                {"role": "user", "tool_calls": [{"name": "digest", "arguments": {"text": "{{node-1.issue}}"}}]},
                {"role": "tool", "content": "hash: {{prompt}}"},
            ]
        }
    )
    outcome = await run_step(agent(tools=[tool]), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    [call] = outcome.output["tool_calls"]
    import hashlib

    # the earlier step's data did not reach the add-on through the model's arguments: the reference is empty
    assert call["output"]["hash"] == hashlib.sha256(b"").hexdigest()
    assert call["output"]["hash"] != hashlib.sha256(b"the printer is on fire").hexdigest()


async def test_a_tool_kind_unwired_says_so_at_the_start(ctx: StepContext, model: ScriptedModel) -> None:
    set_tool_factory("flow", None)
    try:
        outcome = await run_step(agent(tools=[{"kind": "flow", "name": "sub", "konnect_id": 9}]), ctx)
    finally:
        set_tool_factory("flow", FlowTool)
    assert outcome.status == "ERROR" and "sub-flow" in outcome.error and "not available" in outcome.error
    assert model.requests == []


async def test_memory_keeps_tool_calls_and_results_per_conversation_key(
    ctx: StepContext, model: ScriptedModel, memory: Memory
) -> None:
    model.load(ticket_script())
    first = await run_step(agent(conversation_key="chat-{{node-1.issue}}"), ctx)
    assert first.status == "SUCCESS", first.error
    [turn] = memory.turns["chat-the printer is on fire"]
    roles = [m["role"] for m in turn[1]]
    assert roles == ["user", "assistant", "tool", "assistant"]  # the tool call and its result are kept
    model.load({"rules": [{"role": "user", "content": "second answer"}]})
    again = dataclasses.replace(ctx, run_id=secrets.token_hex(8))
    second = await run_step(agent(conversation_key="chat-{{node-1.issue}}"), again)
    assert second.status == "SUCCESS", second.error
    sent = model.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "create_ticket"
    assert len(memory.turns["chat-the printer is on fire"]) == 2


async def test_without_a_key_or_under_test_nothing_is_remembered(
    ctx: StepContext, model: ScriptedModel, memory: Memory
) -> None:
    model.load({"rules": [{"content": "hi"}]})
    assert (await run_step(agent(tools=[]), ctx)).status == "SUCCESS"
    tested = dataclasses.replace(ctx, remember=False)
    assert (await run_step(agent(tools=[], conversation_key="k"), tested)).status == "SUCCESS"
    assert memory.turns == {}


async def test_a_redelivery_replays_the_journal_and_repeats_no_tool_call(
    nc: Any, ctx: StepContext, model: ScriptedModel, echo: Any
) -> None:
    """A runner killed after the tool call finished (its result recorded) but before the step ended: the
    redelivery reads the model's replies and the tool's result from the journal, and calls nothing again."""
    kv = await nc.jetstream().key_value(KV_STEPS)
    model.load(ticket_script())
    first = StepJournal(kv, ctx.run_id, replay=False)
    sub = first.substeps("node-2", None)
    outcome = await run_step(agent(), dataclasses.replace(ctx, substeps=sub))
    assert outcome.status == "SUCCESS", outcome.error
    assert len(_posts(echo)) == 1 and len(model.requests) == 2
    again = StepJournal(kv, ctx.run_id, replay=True)
    replayed = await run_step(agent(), dataclasses.replace(ctx, substeps=again.substeps("node-2", None)))
    assert replayed.status == "SUCCESS", replayed.error
    assert len(_posts(echo)) == 1 and len(model.requests) == 2  # nothing asked or called again
    assert replayed.output["tool_calls"][0]["recalled"] is True
    assert replayed.output["answer"] == outcome.output["answer"]
    assert again.recalled == 3  # two model replies, one tool call


async def test_a_tool_call_in_doubt_is_not_repeated(nc: Any, ctx: StepContext, model: ScriptedModel, echo: Any) -> None:
    """A runner killed during the tool call (its mark stored, no result): the redelivery ends the step
    naming the tool, and does not call it again."""
    kv = await nc.jetstream().key_value(KV_STEPS)
    model.load(ticket_script())
    first = StepJournal(kv, ctx.run_id, replay=False)
    sub = first.substeps("node-2", None)
    # the model's first reply was recorded and the tool call marked, then the runner died
    await run_step(agent(max_iterations=1), dataclasses.replace(ctx, substeps=sub))
    await sub.begin("tool-1-0")
    again = StepJournal(kv, ctx.run_id, replay=True, wait_busy=False)
    outcome = await run_step(agent(), dataclasses.replace(ctx, substeps=again.substeps("node-2", None)))
    assert outcome.status == "ERROR"
    assert "runner stopped while the tool create_ticket ran" in outcome.error
    assert _posts(echo) == []


async def test_an_mcp_tool_has_its_servers_schema_and_its_result_goes_back(
    ctx: StepContext, model: ScriptedModel
) -> None:
    """An MCP tool of an MCP Server account (a local server made with the official SDK): its input schema is
    listed at the start and is what the model sees; its result and a tool error go back to the model."""
    from konnectz_devstack.mcp_tools import McpToolServer

    with McpToolServer(token="mcp-unit-token") as server:

        async def credentials(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
            if account_id == 8:
                return {"instance_url": server.url, "api_key": "mcp-unit-token"}
            return {"instance_url": model.url, "api_key": ""}

        app_event.set_credential_source(credentials)
        tools = [
            {"kind": "mcp", "name": "sum", "account_id": 8, "mcp_tool": "add"},
            {"kind": "mcp", "name": "boom", "account_id": 8, "mcp_tool": "fail"},
        ]
        model.load(
            {
                "rules": [
                    {
                        "role": "user",
                        "tool_calls": [
                            {"name": "sum", "arguments": {"a": 2, "b": 40}},
                            {"name": "boom", "arguments": {"reason": "out of paper"}},
                        ],
                    },
                    {"role": "tool", "content": "Sum told: {{prompt}}"},
                ]
            }
        )
        outcome = await run_step(agent(tools=tools), ctx)
        assert outcome.status == "SUCCESS", outcome.error
        wire = {t["function"]["name"]: t["function"] for t in model.requests[0]["body"]["tools"]}
        assert wire["sum"]["parameters"]["properties"]["a"]["type"] == "integer"
        assert wire["sum"]["parameters"]["required"] == ["a"]
        assert wire["sum"]["description"]  # the server's description of the tool
        added, failed = outcome.output["tool_calls"]
        assert added["kind"] == "mcp" and added["output"] == {"result": 42} and added["error"] is None
        assert added["detail"]["server"] == server.url and "mcp-unit-token" not in json.dumps(outcome.output)
        assert failed["output"] is None and "out of paper" in failed["error"]
        said = [m["content"] for m in model.requests[1]["body"]["messages"] if m["role"] == "tool"]
        assert "42" in said[0] and "out of paper" in said[1]

        # the model's arguments are checked against the server's schema first: told once
        model.load({"rules": [{"tool_calls": [{"name": "sum", "arguments": {"a": "two"}}]}]})
        bad = await run_step(agent(tools=tools[:1], max_iterations=3), ctx)
        assert bad.status == "ERROR" and "wrongly again" in bad.error and "'two' is not of type 'integer'" in bad.error

        # a tool the server does not have: the step ends at its start, naming it and the server's tools
        model.requests.clear()
        missing = await run_step(agent(tools=[{"kind": "mcp", "name": "x", "account_id": 8, "mcp_tool": "nope"}]), ctx)
        assert missing.status == "ERROR" and "has no tool 'nope'" in missing.error and "add" in missing.error
        assert model.requests == []
    # the server gone: the listing fails, bounded, and says so
    gone = await run_step(agent(tools=tools[:1]), ctx)
    assert gone.status == "ERROR" and "tools could not be listed" in gone.error


async def test_a_sub_flow_tool_outside_a_published_run_is_a_tool_error(ctx: StepContext, model: ScriptedModel) -> None:
    """Test & Review has no FLOW_CALLS: the model is told the sub-flow cannot start here (no run started)."""
    inputs = [{"key": "email", "label": "E-mail", "type": "email", "required": True}]
    tool = {"kind": "flow", "name": "lookup", "konnect_id": 9, "flow_inputs": inputs}
    model.load(
        {
            "rules": [
                {"role": "user", "tool_calls": [{"name": "lookup", "arguments": {"email": "a@b.c"}}]},
                {"role": "tool", "content": "Told: {{prompt}}"},
            ]
        }
    )
    outcome = await run_step(agent(tools=[tool]), ctx)
    assert outcome.status == "SUCCESS", outcome.error
    wire = model.requests[0]["body"]["tools"][0]["function"]
    assert wire["parameters"]["required"] == ["email"] and wire["parameters"]["additionalProperties"] is False
    (call,) = outcome.output["tool_calls"]
    assert call["kind"] == "flow" and "not in Test & Review" in call["error"]
