"""The JSON Parse add-on (added by CONTRIBUTING.md's steps alone) in a real headless Chromium, by clicks
and typing only: Webhook → JSON Parse on the general action card (no web code), its Text a reference
to the webhook's ``payload`` field (JSON inside a string), Test & Review shows the parsed data, the
flow published, run, and its task log shows the parsed key."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def test_webhook_to_json_parse_from_the_catalogue_fields(page: Page, platform: Platform, open_task_log, ui) -> None:
    ui.new_flow(page, platform, "jsonparse", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    sample = {"payload": json.dumps({"customer": {"email": "ada@example.com"}})}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

    ui.add_step(page, "add-ons", "json_parse", "json")
    expect(page.get_by_test_id("node-node-2")).to_contain_text("JSON Parse")
    ui.choose(page, "event-select-node-2", "event-option-parse_json")
    expect(page.get_by_test_id("config-node-2-text")).to_be_visible()
    expect(text_box(page, "config-node-2-on_invalid")).to_have_value("Stop the run with an error")  # the default
    ui.reference(page, "config-node-2-text", "payl")
    expect(text_box(page, "config-node-2-text")).to_have_value("{{node-1.payload}}")
    ui.test_node(page, "node-2")
    page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"email": "ada@example.com"')
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"type": "object"')

    konnect_id = ui.publish_flow(page, "Parse the payload")
    ui.post_published(url, {"payload": json.dumps({"customer": {"email": "grace@example.com"}})})
    open_task_log(page, konnect_id, "grace@example.com")
    details = page.get_by_test_id("tasklog-details")
    expect(details.locator("[data-testid^='task-app-']").first).to_contain_text("JSON Parse")
    expect(details.locator("[data-testid^='task-status-']").first).to_have_text("Success")
