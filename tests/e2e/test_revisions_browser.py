"""Revisions in a real headless Chromium against the real stack, by clicks and typing.

Webhook -> Hash published (revision 1: the digest of the e-mail), its Text changed to
``v2-{{node-1.email}}`` and published again (revision 2); the editor's History lists both with the
Live badge on 2, revision 1 shows the Hash step's Text changed (v2-... -> the plain reference);
Restore (confirmed) publishes it as revision 3 and reloads the editor with revision 1's Text; a
request to the webhook then runs revision 3, and its task log shows ``rev 3`` and revision 1's digest.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import sign_in, text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _publish(page: Page) -> None:
    page.get_by_test_id("publish-flow").click()
    page.wait_for_url("**/flows/home")


def test_publish_twice_see_the_diff_restore_and_run_the_restored_revision(
    page: Page, platform: Platform, open_task_log, ui
) -> None:
    started = time.monotonic()
    email = ui.new_flow(page, platform, "revisions", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    wait_until(
        lambda: httpx.post(url, json={"email": "ada@example.com"}).status_code < 300, timeout=30, what="the hook"
    )
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

    # Revision 1: Hash of the e-mail.
    ui.add_step(page, "add-ons", "hash", "hash")
    ui.choose(page, "event-select-node-2", "event-option-hash_text")
    ui.reference(page, "config-node-2-text", "ema")
    expect(text_box(page, "config-node-2-text")).to_have_value("{{node-1.email}}")
    ui.test_node(page, "node-2")
    page.get_by_test_id("flow-name").click()
    page.get_by_test_id("flow-name").fill("Hash with history")
    _publish(page)
    row = page.locator("[data-testid^='flow-row-']", has_text="Hash with history").first
    expect(row).to_be_visible()
    konnect_id = int((row.get_attribute("data-testid") or "").rsplit("-", 1)[1])
    expect(page.get_by_test_id(f"flow-status-{konnect_id}")).to_contain_text("Published", timeout=30_000)

    # Revision 2: the step's Text changed.
    page.get_by_test_id(f"flow-edit-{konnect_id}").click()
    page.wait_for_url(f"**/create/{konnect_id}")
    box = text_box(page, "config-node-2-text")
    expect(box).to_have_value("{{node-1.email}}")
    box.fill("")
    ui.reference(page, "config-node-2-text", "ema", before="v2-")
    expect(box).to_have_value("v2-{{node-1.email}}")
    _publish(page)

    # History: both revisions, the diff of revision 1 against the live revision 2, Restore.
    page.get_by_test_id(f"flow-edit-{konnect_id}").click()
    page.wait_for_url(f"**/create/{konnect_id}")
    page.get_by_test_id("editor-history").click()
    panel = page.get_by_test_id("revisions-panel")
    expect(panel.get_by_test_id("revision-item-2")).to_be_visible()
    expect(panel.get_by_test_id("revision-live-2")).to_have_text("Live")
    expect(panel.get_by_test_id("revision-item-1")).to_contain_text(email)
    expect(panel.get_by_test_id("revision-live-1")).to_have_count(0)
    panel.get_by_test_id("revision-item-1").click()
    diff = panel.get_by_test_id("revision-diff")
    expect(diff.get_by_test_id("revision-diff-title")).to_have_text("Changes from revision 2 to revision 1")
    changed = diff.get_by_test_id("diff-node-node-2")
    expect(changed).to_have_attribute("data-kind", "changed")
    expect(changed).to_contain_text("Hash")
    field = changed.get_by_test_id("diff-field-node-2").filter(has_text="v2-{{node-1.email}}").first
    expect(field).to_contain_text("text")
    expect(field.get_by_test_id("diff-before")).to_have_text("v2-{{node-1.email}}")
    expect(field.get_by_test_id("diff-after")).to_have_text("{{node-1.email}}")
    expect(diff.get_by_test_id("diff-node-node-1")).to_have_count(0)  # the trigger did not change
    page.screenshot(path="test-results/revisions-history-diff.png")

    panel.get_by_test_id("revision-restore").click()
    page.get_by_test_id("revision-restore-confirm").click()
    expect(page.get_by_text("Revision 1 restored and published as revision 3")).to_be_visible(timeout=30_000)
    # The editor reloaded the restored draft: revision 1's Text, live, nothing pending.
    expect(text_box(page, "config-node-2-text")).to_have_value("{{node-1.email}}", timeout=30_000)
    expect(page.get_by_test_id("editor-live")).to_have_text("Live")

    # A request to the webhook runs revision 3 (the runners take the publish up within moments).
    with httpx.Client(base_url=platform.api_url, timeout=30) as api:
        headers = sign_in(api, email, PASSWORD)

        def run_of_revision_3() -> tuple[dict[str, Any], str] | None:
            sent = f"{uuid.uuid4().hex[:8]}@example.com"
            reply = httpx.post(url, json={"email": sent})
            if reply.status_code != 200:
                return None
            run_id = reply.json()["run_id"]

            def logged() -> dict[str, Any] | None:
                logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()
                return next((log for log in logs["task_logs"] if log["run_id"] == run_id), None)

            log = wait_until(logged, timeout=30, what=f"the task log of run {run_id}")
            return (log, sent) if log["revision"] == 3 else None

        log, sent = wait_until(run_of_revision_3, timeout=60, interval=0.5, what="a run of revision 3")

    page.get_by_test_id("editor-dashboard").click()
    page.wait_for_url("**/flows/home")
    digest = _sha256(sent)  # revision 1's behaviour: the plain e-mail, no "v2-"
    open_task_log(page, konnect_id, digest)
    expect(page.get_by_test_id(f"tasklog-revision-{log['id']}")).to_have_text("rev 3")
    details = page.get_by_test_id("tasklog-details")
    expect(details.get_by_test_id("run-revision")).to_have_text("3")
    expect(details).to_contain_text(digest)
    expect(details).not_to_contain_text(_sha256("v2-" + sent))
    print(f"revisions in the browser: {time.monotonic() - started:.0f} s")
