"""The AI Agent in a real headless Chromium, by clicks and typing: a person builds Webhook -> AI Agent whose
tools are an app action (the fake provider's Create Task: the project fixed, the title filled by the agent)
and a sub-flow (a published flow that starts with 'Called by a flow or AI tool' and answers with a Respond
step, published through the api), tests the agent against the scripted model, publishes, runs it, and reads
both tool calls in the task log, the sub-flow's linking its called run (docs/ai.md). The accounts (the
model's and the app's) are connected through the api first: adding an account by clicks is
test_ask_ai_browser.py's and test_apps_browser.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import (
    add_account,
    canvas_node,
    chain_canvas,
    publish_canvas,
    sign_in,
    text_box,
    wait_until,
)

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"
FAKE_TOKEN = 900001  # konnectz_devstack.fake_apps: "Fake Token App", its action create_task posts /tasks


@pytest.fixture(scope="module")
def stack(fake_install: Callable[..., AbstractContextManager[Platform]]) -> Iterator[Platform]:
    with fake_install("konnectz-agent-e2e-") as platform:
        yield platform


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    call = {"name": "file_task", "arguments": {"title": "Fix the printer"}}
    lookup = {"name": "lookup", "arguments": {"floor": "lobby"}}
    script = {
        "rules": [
            {"role": "user", "contains": "printer", "tool_calls": [call, lookup]},
            {"role": "tool", "content": "Filed: {{prompt}}"},
        ]
    }
    with ScriptedModel(script) as server:
        yield server


def test_webhook_to_agent_built_by_clicks_and_its_tool_call_in_the_task_log(
    new_context: Any, stack: Platform, model: ScriptedModel, fake: Any, fake_apps: Any, open_task_log, ui
) -> None:
    # A page on this module's own install (the `page` fixture's is the session's platform, where this
    # user does not exist: signing in there stayed on /login).
    page: Page = new_context(stack.api_url).new_page()
    email = ui.new_flow(page, stack, "agent", PASSWORD)
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        headers = sign_in(api, email, PASSWORD)
        model_account = add_account(api, headers, 132, {"instance_url": model.url, "api_key": ""})
        app_account = add_account(api, headers, FAKE_TOKEN, {"api_key": fake_apps.API_KEY})
        callee_id = publish_canvas(api, headers, _callee())["konnect_id"]

    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    sample = {"message": "The printer on floor 2 is jammed"}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

    ui.add_step(page, "add-action", "agent", "agent")
    expect(page.get_by_test_id("node-node-2")).to_have_attribute("data-kind", "agent")
    ui.choose(page, "agent-account-node-2", f"agent-account-node-2-option-{model_account}")
    page.get_by_test_id("agent-model-node-2").fill("scripted-1")
    page.get_by_test_id("agent-instructions-node-2").fill("You file tasks for the office.")
    page.get_by_test_id("agent-prompt-node-2").fill("Handle: {{node-1.message}}")
    # The tool: the fake app's Create Task, its project fixed, its title left to the agent.
    page.get_by_test_id("agent-add-app_action-node-2").click()
    tool = "agent-tool-node-2-0"
    page.get_by_test_id(f"{tool}-name").fill("file_task")
    page.get_by_test_id(f"{tool}-app").click()
    page.keyboard.type("Fake Token", delay=30)
    option = page.locator(f".ant-select-dropdown:visible [data-testid='{tool}-app-option-{FAKE_TOKEN}']")
    expect(option).to_be_visible(timeout=30_000)
    option.dispatch_event("click")
    ui.choose(page, f"{tool}-event", f"{tool}-event-option-create_task")
    ui.choose(page, f"{tool}-account", f"{tool}-account-option-{app_account}")
    expect(page.get_by_test_id(f"{tool}-mode-project")).to_be_visible(timeout=30_000)
    ui.choose(page, f"{tool}-mode-project", f"{tool}-mode-project-fixed")
    text_box(page, f"{tool}-fixed-project").fill("p1")
    ui.choose(page, f"{tool}-mode-title", f"{tool}-mode-title-agent")

    # The second tool: the published flow "Floor contact", called as a sub-flow; its input the agent fills.
    page.get_by_test_id("agent-add-flow-node-2").click()
    sub = "agent-tool-node-2-1"
    ui.choose(page, f"{sub}-flow", f"{sub}-flow-option-{callee_id}")
    expect(page.get_by_test_id(f"{sub}-flow-inputs")).to_contain_text("The agent fills: floor")
    page.get_by_test_id(f"{sub}-name").fill("lookup")

    ui.test_node(page, "node-2")
    assert model.requests, "the agent asked the model"
    wire = {t["function"]["name"]: t["function"] for t in model.requests[0]["body"]["tools"]}
    assert set(wire["file_task"]["parameters"]["properties"]) == {"title"}
    assert wire["lookup"]["parameters"]["required"] == ["floor"]
    assert wire["lookup"]["description"] == "Who looks after a floor"
    assert fake.tasks[-1]["title"] == "Fix the printer" and fake.tasks[-1]["project"] == "p1"

    konnect_id = ui.publish_flow(page, "Office agent")
    tasks_before = len(fake.tasks)
    ui.post_published(url, {"message": "The printer in the lobby smokes"})
    wait_until(lambda: len(fake.tasks) > tasks_before or None, timeout=60, what="the published agent's tool call")
    open_task_log(page, konnect_id, "The printer in the lobby smokes")
    details = page.get_by_test_id("tasklog-details")
    tools = details.locator("[data-testid^='task-tools-']").first
    expect(tools).to_contain_text("Tool calls (2)")
    calls = tools.locator("li[data-testid^='task-tool-']")
    call = calls.nth(0)
    expect(call).to_contain_text("file_task")
    expect(call).to_contain_text("app action")
    expect(call).to_contain_text("Fix the printer")  # its input
    expect(call.locator("[data-testid^='task-tool-duration-']")).to_contain_text("ms")
    sub_call = calls.nth(1)
    expect(sub_call).to_contain_text("lookup")
    expect(sub_call).to_contain_text("sub-flow")
    expect(sub_call).to_contain_text("lobby")  # its input
    expect(sub_call).to_contain_text("Grace")  # the called flow's Respond body
    expect(sub_call.locator("[data-testid^='task-tool-run-']")).to_contain_text("Floor contact")


def _callee() -> dict[str, Any]:
    """Called by a flow or AI tool (input ``floor``, required) -> Respond ``{"contact": "Grace", ...}``."""
    trigger = canvas_node(
        "node-1",
        "InHouse",
        "flow_call",
        1,
        "Called by a flow or AI tool",
        selectedEvent={"id": "flow_call", "name": "Flow Called"},
        selectedAddonsValue={
            "inputs": [{"key": "floor", "label": "Floor", "type": "text", "required": True}],
            "description": "Who looks after a floor",
        },
    )
    body = '{"contact": "Grace", "floor": "{{node-1.floor}}"}'
    respond = canvas_node(
        "node-2",
        "ActionNode",
        "respond",
        2,
        "Respond",
        configResponses=[{"config_key": "status", "value": "200"}, {"config_key": "body", "value": body}],
    )
    respond["position"]["x"] = 600
    return chain_canvas([trigger, respond], "Floor contact")
