"""Ask AI in a real headless Chromium, by clicks and typing only, against the scripted model server: a
person adds the OpenAI-compatible Model's Ask AI event after a Webhook, connects an account on the
scripted server (Manage Accounts → New Account: Base URL and API Key), maps the webhook's field into the
prompt, gives a JSON schema, tests the step and sees the answer; the flow published and run, its task
log shows the step."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"
KEY = "sk-browser-scripted-7"
SCHEMA = {
    "type": "object",
    "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative"]}},
    "required": ["sentiment"],
}


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    script = {"rules": [{"contains": "kettle", "content": json.dumps({"sentiment": "negative"})}]}
    with ScriptedModel(script, api_key=KEY) as server:
        yield server


def test_ask_ai_added_by_clicks_and_tested(
    page: Page, platform: Platform, model: ScriptedModel, open_task_log, ui
) -> None:
    ui.new_flow(page, platform, "askai", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    sample = {"review": "The kettle leaks"}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

    ui.add_step(page, "add-action", "openai_compatible", "compatible")
    expect(page.get_by_test_id("node-node-2")).to_have_attribute("data-kind", "openai_compatible")
    expect(page.get_by_test_id("node-node-2").get_by_role("img", name="OpenAI-compatible Model")).to_be_visible()
    ui.choose(page, "event-select-node-2", "event-option-ask_ai")
    # The account: Manage Accounts → New Account → Base URL and API Key → Add; then chosen.
    expect(page.get_by_test_id("no-accounts-node-2")).to_be_visible()
    page.get_by_test_id("manage-accounts-node-2").click()
    drawer = page.locator(".ant-drawer:visible")
    drawer.get_by_role("button", name="New Account").click()
    drawer.get_by_label("Base URL").fill(model.url)
    drawer.get_by_label("API Key").fill(KEY)
    drawer.get_by_role("button", name="Add").click()
    saved = page.locator(".ant-drawer:visible [data-testid^='account-']").first
    expect(saved.get_by_role("button", name=f"Remove {model.url}")).to_be_visible()  # named by its Base URL
    expect(saved).to_contain_text("5 requests/s")  # the app's rate budget
    page.locator(".ant-drawer:visible .ant-drawer-close").click()
    expect(page.locator(".ant-drawer:visible")).to_have_count(0)
    page.get_by_test_id("account-select-node-2").click()
    option = page.locator(".ant-select-dropdown:visible [data-testid^='account-option-']").first
    expect(option).to_be_visible()
    option.dispatch_event("click")

    # The fields of the catalogue entry, on the general action card.
    expect(page.get_by_test_id("config-node-2-prompt")).to_be_visible()
    model_box = text_box(page, "config-node-2-model")
    model_box.click()
    model_box.fill("scripted-1")
    page.keyboard.press("Escape")
    ui.reference(page, "config-node-2-prompt", "rev", before="Classify: ")
    expect(text_box(page, "config-node-2-prompt")).to_have_value("Classify: {{node-1.review}}")
    text_box(page, "config-node-2-json_schema").fill(json.dumps(SCHEMA))
    ui.test_node(page, "node-2")
    page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
    answer = page.get_by_test_id("response-json-node-2")
    expect(answer).to_contain_text('"sentiment": "negative"')
    expect(answer).to_contain_text('"tokens_in"')
    sent = model.requests[-1]["body"]
    assert sent["model"] == "scripted-1"
    assert sent["messages"][-1] == {"role": "user", "content": "Classify: The kettle leaks"}
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA

    konnect_id = ui.publish_flow(page, "Classify reviews")
    ui.post_published(url, {"review": "A kettle that sings"})
    open_task_log(page, konnect_id, "A kettle that sings")
    details = page.get_by_test_id("tasklog-details")
    expect(details.locator("[data-testid^='task-app-']").first).to_contain_text("OpenAI-compatible Model")
    expect(details.locator("[data-testid^='task-status-']").first).to_have_text("Success")
