"""The AI Agent in a real headless Chromium, by clicks and typing: a person builds Webhook -> AI Agent whose
tool is an app action (the fake provider's Create Task: the project fixed, the title filled by the agent),
tests the agent against the scripted model, publishes, runs it, and reads the tool call in the task log
(docs/ai.md). The accounts (the model's and the app's) are connected through the api first: adding an
account by clicks is test_ask_ai_browser.py's and test_apps_browser.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import add_account, sign_in, text_box, wait_until

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
    script = {
        "rules": [
            {"role": "user", "contains": "printer", "tool_calls": [call]},
            {"role": "tool", "content": "Filed: {{prompt}}"},
        ]
    }
    with ScriptedModel(script) as server:
        yield server


def test_webhook_to_agent_built_by_clicks_and_its_tool_call_in_the_task_log(
    page: Page, stack: Platform, model: ScriptedModel, fake: Any, fake_apps: Any, open_task_log, ui
) -> None:
    email = ui.new_flow(page, stack, "agent", PASSWORD)
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        headers = sign_in(api, email, PASSWORD)
        model_account = add_account(api, headers, 132, {"instance_url": model.url, "api_key": ""})
        app_account = add_account(api, headers, FAKE_TOKEN, {"api_key": fake_apps.API_KEY})

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

    ui.test_node(page, "node-2")
    assert model.requests, "the agent asked the model"
    wire = model.requests[0]["body"]["tools"][0]["function"]
    assert wire["name"] == "file_task" and set(wire["parameters"]["properties"]) == {"title"}
    assert fake.tasks[-1]["title"] == "Fix the printer" and fake.tasks[-1]["project"] == "p1"

    konnect_id = ui.publish_flow(page, "Office agent")
    tasks_before = len(fake.tasks)
    ui.post_published(url, {"message": "The printer in the lobby smokes"})
    wait_until(lambda: len(fake.tasks) > tasks_before or None, timeout=60, what="the published agent's tool call")
    open_task_log(page, konnect_id, "The printer in the lobby smokes")
    details = page.get_by_test_id("tasklog-details")
    tools = details.locator("[data-testid^='task-tools-']").first
    expect(tools).to_contain_text("Tool calls (1)")
    call = tools.locator("[data-testid^='task-tool-']").first
    expect(call).to_contain_text("file_task")
    expect(call).to_contain_text("app action")
    expect(call).to_contain_text("Fix the printer")  # its input
    expect(call.locator("[data-testid^='task-tool-duration-']")).to_contain_text("ms")
