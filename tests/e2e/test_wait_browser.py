"""Wait for a Call (docs/waits.md) in a real headless Chromium against the real stack, by clicks: a person
builds Webhook → API Call (handing out the Wait's resume URL, the reference copied from the Wait's own
card) → Wait for a Call (its card: the reference, the timeout) → API Call, tests the Wait and publishes.
A run waits; the other system calls the link it was given; the run goes on once with the call's data,
and the task log says whom the run waited for and what resumed it."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


class _Other(JsonHandler):
    """The other system: records what each step sent, by path."""

    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Other.calls.append((self.path, body))
        self._reply(200, {"ok": True})


def _box(card: Any, test_id: str) -> Any:
    """The text box behind ``test_id`` inside one card (two API Call cards share their test ids)."""
    loc = card.get_by_test_id(test_id)
    if loc.evaluate("e => ['INPUT', 'TEXTAREA'].includes(e.tagName)"):
        return loc
    return loc.locator("textarea, input").first


def _sent(path: str) -> list[dict[str, Any]]:
    return [body for p, body in _Other.calls if p == path]


def test_a_wait_for_a_call_built_by_clicks_resumes_once_with_the_calls_data(
    page: Page, platform: Platform, open_task_log, ui
) -> None:
    _Other.calls = []
    server = LocalServer(_Other)
    try:
        ui.new_flow(page, platform, "wait", PASSWORD)
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        wait_until(lambda: httpx.post(url, json={"order": "A-1"}).status_code < 300, timeout=30)
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

        # The step before the wait: it will hand out the link.
        ui.add_step(page, "add-action", "api", "api")
        before = page.get_by_test_id("node-node-2")
        _box(before, "api-endpoint-url").fill(f"{server.url}/before")
        before.get_by_test_id("api-body-add").click()
        _box(before, "api-body-key-0").fill("order")
        _box(before, "api-body-value-0").fill("{{node-1.order}}")

        # The Wait, from the Add-Ons drawer, on its own card.
        ui.add_step(page, "add-ons", "wait", "wait")
        expect(page.get_by_test_id("node-node-3")).to_have_attribute("data-kind", "wait")  # its name is cut to 13
        reference = page.get_by_test_id("wait-resume-ref-node-3")
        expect(reference).to_contain_text("{{node-3.resume_url}}")
        expect(page.get_by_test_id("node-summary-node-3")).to_have_text("Waits up to 1 hour for a call")
        page.get_by_test_id("wait-timeout-node-3").fill("2")
        ui.choose(page, "wait-on-timeout-node-3", "wait-on-timeout-option-fail")
        expect(page.get_by_test_id("node-summary-node-3")).to_have_text("Waits up to 2 hours for a call")
        ui.test_node(page, "node-3")
        page.get_by_test_id("response-view-node-3").get_by_text("JSON").click()
        expect(page.get_by_test_id("response-json-node-3")).to_contain_text('"timed_out": false')

        # Back on the step before: the link, as the Wait's card gives it.
        before.get_by_test_id("api-body-add").click()
        _box(before, "api-body-key-1").fill("link")
        _box(before, "api-body-value-1").fill(reference.inner_text().strip())

        ui.add_step(page, "add-action", "api", "api")
        after = page.get_by_test_id("node-node-4")
        _box(after, "api-endpoint-url").fill(f"{server.url}/after")
        after.get_by_test_id("api-body-add").click()
        _box(after, "api-body-key-0").fill("answer")
        _box(after, "api-body-value-0").fill("{{node-3.answer}}")
        konnect_id = ui.publish_flow(page, "Wait for the answer")

        ui.post_published(url, {"order": "B-2"})
        (sent,) = wait_until(lambda: _sent("/before"), timeout=60, what="the link handed out")
        assert sent["order"] == "B-2" and "/resume/" in sent["link"], sent
        assert _sent("/after") == []
        assert httpx.post(sent["link"], json={"answer": "yes"}, timeout=30).status_code == 200
        wait_until(lambda: _sent("/after"), timeout=60, what="the step after the wait")
        assert httpx.post(sent["link"], json={"answer": "again"}, timeout=30).status_code == 410
        page.wait_for_timeout(1000)  # a second run of either step would come now, not later
        assert _sent("/after") == [{"answer": "yes"}] and len(_sent("/before")) == 1

        open_task_log(page, konnect_id, "by a call to its resume URL")
        details = page.get_by_test_id("tasklog-details")
        expect(details.locator("[data-testid^='task-wait-record-']")).to_contain_text("Until (timeout)")
        expect(details.locator("[data-testid^='task-wait-']").first).to_contain_text(
            "Waited for a call to its resume URL"
        )
    finally:
        server.stop()
