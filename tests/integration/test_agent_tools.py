"""The AI Agent's sub-flow and MCP tools end to end (api + runner + PostgreSQL + NATS), with the scripted
model server and a local MCP server made with the official SDK (``konnectz_devstack.mcp_tools``).

- Webhook -> Agent (tools: a sub-flow, an MCP server's tool): the model calls both; the sub-flow's run
  starts through the api's checks with the model's arguments, its Respond body is handed back to the model,
  and its task log names the agent's run as its caller while the agent's names the called run; the MCP
  tool's parameters are its input schema, listed from the server, and its result is handed back.
- A sub-flow that fails, and arguments the api refuses: a tool error the model reads (the run goes on).
- Publishing refuses a sub-flow tool whose flow is not a flow-call flow, and a cycle through an agent.
- A runner killed after the sub-flow tool call finished (while the model answers the next request): the
  redelivered run reads the call's result back from the journal and does not start the flow again.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from konnectz_devstack import Platform
from konnectz_devstack.mcp_tools import McpToolServer
from konnectz_devstack.pytest_plugin import make_platform, running_platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import (
    add_account,
    api_call_node,
    canvas_node,
    capture_request,
    chain_canvas,
    publish_and_run,
    publish_canvas,
    publish_konnect,
    review_node,
    sign_up,
    wait_until,
)

pytestmark = pytest.mark.integration

TOKEN = "agent-tools-mcp-token-7"
SCRIPT = {
    "rules": [
        {
            "role": "user",
            "contains": "order",
            "tool_calls": [
                {"name": "lookup", "arguments": {"email": "ada@example.com", "n": 7}},
                {"name": "add", "arguments": {"a": 2, "b": 40}},
            ],
        },
        {
            "role": "user",
            "contains": "broken",
            "tool_calls": [{"name": "lookup", "arguments": {"email": "x@example.com"}}],
        },
        {"role": "user", "contains": "refused", "tool_calls": [{"name": "lookup", "arguments": {"n": 1}}]},
        {
            "role": "user",
            "contains": "slow",
            "tool_calls": [{"name": "lookup", "arguments": {"email": "k@example.com"}}],
        },
        {"role": "tool", "contains": "k@example.com", "delay": 4, "content": "Slow answer: {{prompt}}"},
        {"role": "tool", "content": "Done: {{prompt}}"},
    ]
}
INPUTS = [
    {"key": "email", "label": "E-mail", "type": "email", "required": True},
    {"key": "n", "label": "N", "type": "number"},
]


def flow_call_trigger() -> dict[str, Any]:
    return canvas_node(
        "node-1",
        "InHouse",
        "flow_call",
        1,
        "Called by a flow or AI tool",
        selectedEvent={"id": "flow_call", "name": "Flow Called"},
        selectedAddonsValue={"inputs": INPUTS, "description": "Looks a customer up"},
    )


def respond_node(body: str) -> dict[str, Any]:
    config = [{"config_key": "status", "value": "200"}, {"config_key": "body", "value": body}]
    return canvas_node("node-2", "ActionNode", "respond", 2, "Respond", configResponses=config)


def spaced(nodes: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for i, node in enumerate(nodes):
        node["position"]["x"] = 600 * (i + 1)
    return chain_canvas(nodes, name)


def callee(name: str, body: str) -> dict[str, Any]:
    return spaced([flow_call_trigger(), respond_node(body)], name)


def webhook() -> dict[str, Any]:
    return canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook")


def flow_tool(flow_id: int) -> dict[str, Any]:
    return {
        "kind": "flow",
        "name": "lookup",
        "description": "Looks a customer up by e-mail.",
        "konnect_id": flow_id,
        "flow_inputs": INPUTS,
    }


def agent_canvas(model_account: int, tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    settings = {
        "app_id": 132,
        "account_id": model_account,
        "model": "scripted-1",
        "instructions": "You answer about orders.",
        "prompt": "{{node-1.message}}",
        "tools": tools,
        "max_iterations": 4,
        "max_seconds": 60,
    }
    node = canvas_node("node-2", "InHouse", "agent", 2, "Order agent", agent=settings)
    node["data"]["app_detail"]["id"] = 24
    node["data"]["selectedEvent"] = {"id": "run_agent", "name": "Run Agent"}
    return spaced([webhook(), node], name)


class Account:
    def __init__(self, api: httpx.Client, email: str) -> None:
        self.api = api
        self.headers = sign_up(api, email, "correct horse battery")

    def logs(self, konnect_id: int) -> list[dict[str, Any]]:
        url = f"/api/v1/task_logs/logs?konnect_id={konnect_id}"
        return list(self.api.get(url, headers=self.headers).json()["task_logs"])

    def tasks(self, log_id: int) -> dict[str, dict[str, Any]]:
        tasks = self.api.get(f"/api/v1/task_logs/{log_id}/tasks", headers=self.headers).json()["tasks"]
        return {t["step_id"]: t for t in tasks}

    def run(self, canvas: dict[str, Any], payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Publish the webhook flow ``canvas`` and run it once: its konnect id and its task log."""
        trigger = review_node(self.api, self.headers, canvas, "node-1", None)
        konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
        capture_request(self.api, self.headers, konnect_id, hook, payload)
        (log,) = publish_and_run(self.api, self.headers, konnect_id, canvas, hook, payload)
        return konnect_id, log

    def refused(self, canvas: dict[str, Any]) -> str:
        trigger = review_node(self.api, self.headers, canvas, "node-1", None)
        reply = self.api.post(
            "/api/v1/konnects/publish_konnect",
            headers=self.headers,
            json={"konnect_id": trigger["konnect_id"], "canvas_name": True, "canvas_json": canvas},
        )
        assert reply.status_code == 422, reply.text
        return str(reply.json()["message"])


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(SCRIPT) as server:
        yield server


@pytest.fixture(scope="module")
def mcp() -> Iterator[McpToolServer]:
    with McpToolServer(token=TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    with running_platform("konnectz-agenttools-") as plat:
        yield plat


def test_an_agent_calls_a_sub_flow_and_an_mcp_tool(
    platform: Platform, model: ScriptedModel, mcp: McpToolServer
) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=60)
    ada = Account(api, "agent-tools@example.com")
    model_account = add_account(api, ada.headers, 132, {"instance_url": model.url, "api_key": ""})
    mcp_account = add_account(api, ada.headers, 25, {"instance_url": mcp.url, "api_key": TOKEN})
    lookup = publish_canvas(
        api, ada.headers, callee("Look up", '{"customer": "C-{{node-1.email}}", "n": {{node-1.n}}}')
    )
    flow_id = lookup["konnect_id"]
    add = {"kind": "mcp", "name": "add", "account_id": mcp_account, "mcp_server": mcp.url, "mcp_tool": "add"}
    canvas = agent_canvas(model_account, [flow_tool(flow_id), add], "Orders")
    before = len(model.requests)
    konnect_id, log = ada.run(canvas, {"message": "where is my order?"})
    assert log["status"] == "SUCCESS", log

    # the model saw both tools: the sub-flow's inputs and the MCP tool's listed input schema as parameters
    first = model.requests[before]["body"]
    wire = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert wire["lookup"]["parameters"]["required"] == ["email"]
    assert set(wire["lookup"]["parameters"]["properties"]) == {"email", "n"}
    assert wire["lookup"]["description"] == "Looks a customer up by e-mail."
    assert set(wire["add"]["parameters"]["properties"]) == {"a", "b"}
    assert wire["add"]["parameters"]["properties"]["a"]["type"] == "integer"

    step = ada.tasks(log["id"])["node-2"]
    output = step["data"]["output"]
    sub, summed = output["tool_calls"]
    assert (sub["tool"], sub["kind"], sub["error"]) == ("lookup", "flow", None), sub
    assert sub["output"] == {"customer": "C-ada@example.com", "n": 7}
    assert sub["detail"]["flow_id"] == flow_id and sub["detail"]["responded"] is True
    assert (summed["tool"], summed["kind"], summed["error"]) == ("add", "mcp", None), summed
    assert summed["output"] == {"result": 42}
    print(f"\nagent tools: sub-flow call {sub['duration_ms']} ms, MCP call {summed['duration_ms']} ms")
    # both results went back to the model
    tools_said = [m["content"] for m in model.requests[before + 1]["body"]["messages"] if m["role"] == "tool"]
    assert '"C-ada@example.com"' in tools_said[0] and "42" in tools_said[1]
    assert output["answer"].startswith("Done:")

    # the task logs link both ways: the agent's run names the called run; the called run its caller
    called_run = sub["detail"]["run_id"]
    assert [c["run_id"] for c in log["calls"]] == [called_run] and log["calls"][0]["step_id"] == "node-2"
    (called,) = wait_until(lambda: ada.logs(flow_id), what="the called run's task log")
    assert called["status"] == "SUCCESS"
    assert called["called_by"]["run_id"] == log["run_id"] and called["called_by"]["konnect_id"] == konnect_id
    assert called["called_by"]["step_id"].startswith("node-2/kz-")


def test_a_failing_or_refused_sub_flow_is_a_tool_error_the_model_reads(
    platform: Platform, model: ScriptedModel
) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=60)
    bo = Account(api, "agent-tools-errors@example.com")
    model_account = add_account(api, bo.headers, 132, {"instance_url": model.url, "api_key": ""})
    # an API Call to a port where nothing listens: the called run fails
    failing = api_call_node("http://127.0.0.1:9/lookup", node_id="node-2")
    broken = publish_canvas(api, bo.headers, spaced([flow_call_trigger(), failing], "Broken"))["konnect_id"]
    canvas = agent_canvas(model_account, [flow_tool(broken)], "Errors")
    before = len(model.requests)
    _, log = bo.run(canvas, {"message": "broken"})
    assert log["status"] == "SUCCESS", log  # the agent went on: the model read the error
    (call,) = bo.tasks(log["id"])["node-2"]["data"]["output"]["tool_calls"]
    assert call["kind"] == "flow" and call["output"] is None
    assert call["error"].startswith("The flow Broken failed"), call
    said = [m["content"] for m in model.requests[before + 1]["body"]["messages"] if m["role"] == "tool"]
    assert "The flow Broken failed" in said[0]

    # arguments the api refuses (the required e-mail missing: the card's schema is old): no run started
    answer = publish_canvas(api, bo.headers, callee("Answer", '{"ok": true}'))["konnect_id"]
    stale = {**flow_tool(answer), "flow_inputs": [{"key": "n", "label": "N", "type": "number"}]}
    _, log = bo.run(agent_canvas(model_account, [stale], "Refused"), {"message": "refused"})
    (call,) = bo.tasks(log["id"])["node-2"]["data"]["output"]["tool_calls"]
    assert "were refused (no run started)" in call["error"] and "email" in call["error"], call
    assert bo.logs(answer) == []


def test_publishing_checks_an_agents_sub_flows(platform: Platform, model: ScriptedModel) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=60)
    cy = Account(api, "agent-tools-publish@example.com")
    model_account = add_account(api, cy.headers, 132, {"instance_url": model.url, "api_key": ""})
    hooked_nodes = [webhook(), api_call_node("http://127.0.0.1:9/x", node_id="node-2")]
    hooked = publish_canvas(api, cy.headers, spaced(hooked_nodes, "Hooked"))["konnect_id"]
    message = cy.refused(agent_canvas(model_account, [flow_tool(hooked)], "Wrong callee"))
    assert "Order agent" in message and "'Called by a flow or AI tool' trigger" in message, message
    # an agent in a flow-call flow calling itself: a cycle
    own = callee("Self", "{}")
    made = publish_canvas(api, cy.headers, own)["konnect_id"]
    settings = {
        "app_id": 132,
        "account_id": model_account,
        "model": "scripted-1",
        "prompt": "{{node-1.email}}",
        "tools": [flow_tool(made)],
    }
    node = canvas_node("node-2", "InHouse", "agent", 2, "Loop agent", agent=settings)
    node["data"]["app_detail"]["id"] = 24
    node["data"]["selectedEvent"] = {"id": "run_agent", "name": "Run Agent"}
    looped = spaced([flow_call_trigger(), node], "Self")
    reply = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=cy.headers,
        json={"konnect_id": made, "canvas_name": True, "canvas_json": looped},
    )
    assert reply.status_code == 422 and "cannot call itself" in reply.json()["message"], reply.text


def _restarted(platform: Platform, killed: int) -> bool | None:
    proc = platform.proc("runner")
    return (proc is not None and proc.poll() is None and proc.pid != killed) or None


def test_a_runner_killed_after_a_sub_flow_call_does_not_start_it_again(model: ScriptedModel) -> None:
    state = Path(tempfile.mkdtemp(prefix="konnectz-agenttools-kill-"))
    state.chmod(0o755)
    platform = make_platform(state)
    platform.start()
    supervisor = platform.supervisor(prefix="agenttools-kill")
    supervisor.start()
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=60)
        dee = Account(api, "agent-tools-kill@example.com")
        model_account = add_account(api, dee.headers, 132, {"instance_url": model.url, "api_key": ""})
        flow_id = publish_canvas(api, dee.headers, callee("Slow", '{"who": "{{node-1.email}}"}'))["konnect_id"]
        canvas = agent_canvas(model_account, [flow_tool(flow_id)], "Killed")
        trigger = review_node(api, dee.headers, canvas, "node-1", None)
        konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
        capture_request(api, dee.headers, konnect_id, hook, {"message": "slow"})
        before = len(model.requests)
        publish_konnect(api, dee.headers, konnect_id, canvas)
        wait_until(lambda: httpx.post(hook, json={"message": "slow"}).json().get("status") == "accepted")

        # the tool call finished (its result was handed to the model, which takes 4 s to answer): kill
        def asked_again() -> bool | None:
            return any(m.get("role") == "tool" for r in model.requests[before:] for m in r["body"]["messages"]) or None

        wait_until(asked_again, timeout=90, what="the model asked with the sub-flow's result")
        proc = platform.proc("runner")
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        wait_until(lambda: _restarted(platform, proc.pid), timeout=60, what="the runner restarted")

        (log,) = wait_until(lambda: dee.logs(konnect_id), timeout=180, interval=1.0, what="the agent's task log")
        assert log["status"] == "SUCCESS", log
        (call,) = dee.tasks(log["id"])["node-2"]["data"]["output"]["tool_calls"]
        assert call["recalled"] is True and call["output"] == {"who": "k@example.com"}, call
        assert dee.logs(flow_id) and len(dee.logs(flow_id)) == 1  # the sub-flow ran once
        asked = [r for r in model.requests[before:] if r["body"]["messages"][-1].get("role") == "tool"]
        assert len(asked) == 2  # the model was asked again after the kill; the flow was not started again
    finally:
        supervisor.stop()
        platform.stop()
        shutil.rmtree(state, ignore_errors=True)
