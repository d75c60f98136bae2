"""The flow's Run settings in a real headless Chromium against the real stack: set in the editor's
dialog, published with the flow, and shown again when the flow is reopened (docs/run-control.md)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def test_run_settings_are_set_published_and_shown_again(page: Page, platform: Platform, ui) -> None:
    ui.new_flow(page, platform, "runsettings", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    wait_until(lambda: httpx.post(url, json={"email": "ada@example.com"}).status_code < 300, timeout=30)
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
    ui.add_step(page, "add-ons", "hash", "hash")
    ui.choose(page, "event-select-node-2", "event-option-hash_text")
    ui.reference(page, "config-node-2-text", "ema")
    ui.test_node(page, "node-2")

    # The dialog: a deadline of 300 seconds, 2 runs at once, an e-mail on failure every 15 minutes.
    page.get_by_test_id("run-settings").click()
    dialog = page.get_by_role("dialog", name="Run settings")
    expect(dialog).to_be_visible()
    dialog.get_by_test_id("run-deadline").fill("300")
    dialog.get_by_test_id("run-max-concurrency").fill("2")
    dialog.get_by_test_id("run-alert-email").check()
    dialog.get_by_test_id("run-alert-digest").fill("15")
    dialog.get_by_test_id("run-settings-save").click()
    expect(dialog).to_have_count(0)

    konnect_id = ui.publish_flow(page, "Limited flow")

    # Reopened: the dialog shows what was published (300 s reads as 5 minutes).
    page.goto(f"/create/{konnect_id}")
    page.get_by_test_id("run-settings").click()
    dialog = page.get_by_role("dialog", name="Run settings")
    expect(dialog.get_by_test_id("run-deadline")).to_have_value("5")
    expect(dialog.get_by_test_id("run-deadline-unit")).to_contain_text("minutes")
    expect(dialog.get_by_test_id("run-max-concurrency")).to_have_value("2")
    expect(dialog.get_by_test_id("run-alert-email")).to_be_checked()
    expect(dialog.get_by_test_id("run-alert-digest")).to_have_value("15")
