"""The Hash add-on in a real headless Chromium against the real stack, by clicks and typing only.

CONTRIBUTING.md says a plain-fields add-on needs no web code: the editor's general action card
(``ActionNode``) shows it from its catalogue fields. Webhook → Hash: the trigger's sample captured,
Hash taken from the Add-Ons drawer, its event chosen, Text filled with a reference to the webhook's
``email`` through '@', the algorithm and encoding left at their catalogue defaults (SHA-256, hex);
Test & Review shows the digest; the flow published, run by a request to its webhook URL, and its
task log lists the Hash step with the run's digest.
"""

from __future__ import annotations

import hashlib
import time

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_webhook_to_hash_from_the_catalogue_fields(page: Page, platform: Platform, open_task_log, ui) -> None:
    started = time.monotonic()
    ui.new_flow(page, platform, "hash", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    assert "/hooks/" in url
    sample = {"email": "ada@example.com", "total": 42}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
    expect(page.get_by_test_id("response-node-1")).to_contain_text("email")

    # Hash, from the Add-Ons drawer, on the general action card: its event, then its catalogue fields.
    ui.add_step(page, "add-ons", "hash", "hash")
    card = page.get_by_test_id("node-node-2")
    expect(card).to_contain_text("Hash")
    # No web folder, so no fixed event: the card starts with the event to choose and no fields yet.
    expect(page.get_by_test_id("event-select-node-2")).to_contain_text("Choose an event")
    expect(page.get_by_test_id("config-node-2-text")).to_have_count(0)
    ui.choose(page, "event-select-node-2", "event-option-hash_text")
    expect(page.get_by_test_id("event-select-node-2")).to_contain_text("Hash Text")
    expect(page.get_by_test_id("config-node-2-text")).to_be_visible()
    expect(card).to_contain_text("Algorithm")
    expect(card).to_contain_text("Encoding")
    expect(text_box(page, "config-node-2-algorithm")).to_have_value("SHA-256")  # the catalogue's defaults
    expect(text_box(page, "config-node-2-encoding")).to_have_value("hex")
    ui.reference(page, "config-node-2-text", "ema")
    expect(text_box(page, "config-node-2-text")).to_have_value("{{node-1.email}}")

    ui.test_node(page, "node-2")
    expect(page.get_by_test_id("response-node-2")).to_contain_text("hash")
    page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text(f'"hash": "{_sha256("ada@example.com")}"')
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"algorithm": "sha256"')

    # Published and run: the task log lists the Hash step with the run's digest.
    page.get_by_test_id("eagle-eye").click()
    konnect_id = ui.publish_flow(page, "Hash the e-mail")

    run_email = "grace@example.com"
    ui.post_published(url, {"email": run_email, "total": 7})
    run_digest = _sha256(run_email)
    open_task_log(page, konnect_id, run_digest)
    details = page.get_by_test_id("tasklog-details")
    expect(details.locator("[data-testid^='task-app-']")).to_have_count(1)
    expect(details.locator("[data-testid^='task-app-']").first).to_contain_text("Hash")
    expect(details.locator("[data-testid^='task-status-']").first).to_have_text("Success")
    expect(details).to_contain_text(run_digest)
    print(f"hash add-on in the browser: {time.monotonic() - started:.0f} s")
