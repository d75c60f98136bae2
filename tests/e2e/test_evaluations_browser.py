"""Evaluations in a real headless Chromium against the real stack, by clicks and typing.

Webhook -> Hash (the digest of the e-mail) published; in the editor, Evaluations: two cases typed as JSON
(one expecting the right digest, one a wrong one), Run on the live revision: the score 50% (1/2), the wrong
case failing with the digest found; the panel opened again shows the last run. No task log is written.
"""

from __future__ import annotations

import hashlib
import json
import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import sign_in, text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def test_cases_typed_in_the_editor_are_run_and_scored(page: Page, platform: Platform, ui) -> None:
    email = ui.new_flow(page, platform, "evaluations", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    wait_until(
        lambda: httpx.post(url, json={"email": "ada@example.com"}).status_code < 300, timeout=30, what="the hook"
    )
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
    ui.add_step(page, "add-ons", "hash", "hash")
    ui.choose(page, "event-select-node-2", "event-option-hash_text")
    ui.reference(page, "config-node-2-text", "ema")
    expect(text_box(page, "config-node-2-text")).to_have_value("{{node-1.email}}")
    ui.test_node(page, "node-2")
    konnect_id = ui.publish_flow(page, "Hash evaluated")

    page.get_by_test_id(f"flow-edit-{konnect_id}").click()
    page.wait_for_url(f"**/create/{konnect_id}")
    page.get_by_test_id("editor-evaluations").click()
    panel = page.get_by_test_id("evaluations-panel")
    digest = hashlib.sha256(b"grace@example.com").hexdigest()
    cases = [
        {
            "name": "right",
            "input": {"email": "grace@example.com"},
            "checks": [{"op": "equals", "step": "node-2", "path": "hash", "value": digest}],
        },
        {
            "name": "wrong",
            "input": {"email": "linus@example.com"},
            "checks": [{"op": "equals", "step": "node-2", "path": "hash", "value": digest}],
        },
    ]
    box = panel.get_by_test_id("evaluation-cases")
    expect(box).to_have_value(re.compile("praise"))  # the example shown when the flow has no case yet
    box.fill(json.dumps(cases, indent=2))
    panel.get_by_test_id("evaluation-run").click()
    expect(panel.get_by_test_id("evaluation-score")).to_have_text("50% (1/2)", timeout=60_000)
    expect(panel.get_by_test_id("evaluation-result")).to_contain_text("on revision 1")
    expect(panel.get_by_test_id("evaluation-case-right")).to_contain_text("Pass")
    wrong = panel.get_by_test_id("evaluation-case-wrong")
    expect(wrong).to_contain_text("Fail")
    linus = hashlib.sha256(b"linus@example.com").hexdigest()
    expect(wrong.get_by_test_id("evaluation-failed-check")).to_contain_text(f'found "{linus}"')

    # Saved with the run: the panel opened again shows the cases and the last run.
    page.keyboard.press("Escape")
    page.get_by_test_id("editor-evaluations").click()
    panel = page.get_by_test_id("evaluations-panel")
    expect(panel.get_by_test_id("evaluation-last-run")).to_contain_text("50% (1/2) on revision 1")
    expect(panel.get_by_test_id("evaluation-cases")).to_have_value(re.compile("linus@example.com"))

    with httpx.Client(base_url=platform.api_url, timeout=30) as api:
        headers = sign_in(api, email, PASSWORD)
        logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
    assert logs == []  # an evaluation is not a run
