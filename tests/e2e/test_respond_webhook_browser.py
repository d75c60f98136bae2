"""Respond to the webhook (docs/webhook-response.md) in a real headless Chromium, by clicks and typing:
a Webhook whose card's Respond is "Using a Respond step" → a Respond step on the general action card
(its status, a header and a body with a reference), Test & Review shows the answer it would send, the
flow published; a POST to the webhook gets the templated answer, and the task log shows it was sent."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def test_webhook_answered_by_a_respond_step_built_by_clicks(page: Page, platform: Platform, open_task_log, ui) -> None:
    ui.new_flow(page, platform, "respond", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    sample = {"customer": "Ada", "order": 77}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
    ui.choose(page, "webhook-respond-node-1", "webhook-respond-option-step")
    expect(page.get_by_test_id("webhook-respond-timeout-node-1")).to_be_visible()
    timeout = page.get_by_test_id("webhook-respond-timeout-node-1")
    timeout.fill("20")
    expect(timeout).to_have_value("20")

    ui.add_step(page, "add-ons", "respond", "respond")
    expect(page.get_by_test_id("node-node-2")).to_contain_text("Respond")
    ui.choose(page, "event-select-node-2", "event-option-respond")
    expect(page.get_by_test_id("config-node-2-body")).to_be_visible()
    status = text_box(page, "config-node-2-status")
    status.fill("201")
    text_box(page, "config-node-2-headers").fill("X-Answer: yes")
    ui.reference(page, "config-node-2-body", "custom", before="Thanks ")
    expect(text_box(page, "config-node-2-body")).to_have_value("Thanks {{node-1.customer}}")
    ui.test_node(page, "node-2")
    page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"body": "Thanks Ada"')
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"sent": false')

    konnect_id = ui.publish_flow(page, "Answer the caller")

    def answered() -> httpx.Response | None:
        reply = httpx.post(url, json={"customer": "Grace", "order": 78}, timeout=30)
        return None if reply.status_code == 404 else reply

    reply = wait_until(answered, timeout=30, what="the published webhook")
    assert reply.status_code == 201, reply.text
    assert reply.text == "Thanks Grace" and reply.headers["x-answer"] == "yes"
    open_task_log(page, konnect_id, "Thanks Grace")
    details = page.get_by_test_id("tasklog-details")
    expect(details.locator("[data-testid^='task-app-']").first).to_contain_text("Respond")
    expect(details.locator("[data-testid^='task-status-']").first).to_have_text("Success")
